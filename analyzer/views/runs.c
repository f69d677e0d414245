/* SPDX-License-Identifier: MIT */
/*
 * Inputs that hold more than one run: one directory reused for two runs,
 * or for the shim and kbpf-trace (the same workload traced twice). Their
 * calls would be merged into one profile without a word, and one
 * producer's coverage line would stand over the other's numbers, so
 * kanalyze says which runs and producers it merged. A run is a tree of
 * streams: its root started (or was attached to) with no parent among
 * the streams of its producer; the roots one producer attached to are one
 * run (kbpf-trace -p A,B, the only producer that attaches). The children
 * of a parent the shim could not enter (untraced_parent) are one run.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "views.h"

static const char *producer_of(const struct ka_stream *s)
{
	return s->producer ? s->producer : "?";
}

/* Whether s has a parent among the streams of its producer. */
static bool has_parent(const struct ka_model *m, const struct ka_stream *s)
{
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *p = &m->streams[i];
		if (p == s || !p->have_header || strcmp(producer_of(p), producer_of(s)))
			continue;
		if (s->parent_stream && p->stream == s->parent_stream)
			return true;
		if (p->pid == s->ppid)
			return true;
	}
	return false;
}

/*
 * A parent the shim could not enter (the header's untraced_parent) is of
 * the run: its children are one run, under the first of them, and none
 * is a root when a traced stream started it (its fork record).
 */
static bool untraced_parent_of_run(const struct ka_model *m, const struct ka_stream *s)
{
	if (!s->up_pid)
		return false;
	for (size_t i = 0; i < m->n_forks; i++)
		if (m->forks[i].child == s->up_pid && ka_model_has_pid(m, m->forks[i].pid))
			return true;
	for (const struct ka_stream *t = m->streams; t < s; t++)
		if (t->up_pid == s->up_pid && t->have_header && !strcmp(producer_of(t), producer_of(s)))
			return true;
	return false;
}

static bool is_root(const struct ka_model *m, const struct ka_stream *s)
{
	if (!s->have_header || !s->origin)
		return false;
	if (strcmp(s->origin, "start") && strcmp(s->origin, "attach"))
		return false;
	return !has_parent(m, s) && !untraced_parent_of_run(m, s);
}

void ka_runs_coverage(const struct ka_model *m, const char *producer,
		      struct ka_producer_coverage *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!s->producer || strcmp(s->producer, producer))
			continue;
		const char *h = s->hook_mode ? s->hook_mode
			       : !strcmp(s->producer, "preload") ? "symbols" : NULL;
		if (!c->coverage)
			c->coverage = s->coverage;
		if (!c->hook_mode)
			c->hook_mode = h;
		else if (h && strcmp(h, c->hook_mode))
			c->mixed = true;
	}
}

void ka_runs_count(const struct ka_model *m, struct ka_runs *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!s->have_header)
			continue;
		const char *p = producer_of(s);
		unsigned k = 0;
		while (k < r->n_producers && strcmp(r->producer[k], p))
			k++;
		if (k == r->n_producers && k < KA_RUNS_PRODUCERS)
			r->producer[r->n_producers++] = p;
		if (k < r->n_producers)
			r->streams[k]++;
		if (!is_root(m, s))
			continue;
		/* the same process traced by two producers is one run, and so
		 * are the processes one tracer attached to (kbpf-trace -p A,B) */
		bool attach = !strcmp(s->origin, "attach");
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct ka_stream *o = &m->streams[j];
			seen = is_root(m, o) &&
			       (o->pid == s->pid ||
				(attach && !strcmp(o->origin, "attach") &&
				 !strcmp(producer_of(o), producer_of(s))));
		}
		if (seen)
			continue;
		if (r->roots < KA_RUNS_SHOWN)
			r->root[r->roots] = s;
		r->roots++;
	}
}

void ka_report_runs(FILE *out, const struct ka_model *m, const char *name)
{
	struct ka_runs r;
	ka_runs_count(m, &r);
	if (r.roots <= 1 && r.n_producers <= 1)
		return;
	fprintf(out, "kanalyze: warning: %s%s ", name ? name : "the inputs",
		name ? " holds" : " hold");
	if (r.roots > 1)
		fprintf(out, "%" PRIu64 " runs (", r.roots);
	else
		fprintf(out, "one run");
	for (uint64_t i = 0; r.roots > 1 && i < r.roots && i < KA_RUNS_SHOWN; i++) {
		const struct ka_stream *s = r.root[i];
		const char *exe = s->exe ? strrchr(s->exe, '/') : NULL;
		exe = exe ? exe + 1 : s->exe ? s->exe : "?";
		fprintf(out, "%s%s pid %" PRIu64 " by %s", i ? ", " : "", exe, s->pid,
			producer_of(s));
	}
	if (r.roots > KA_RUNS_SHOWN)
		fprintf(out, ", ...");
	fprintf(out, "%s", r.roots > 1 ? ")" : "");
	if (r.n_producers > 1) {
		fprintf(out, " %s %u producers (", r.roots > 1 ? "from" : "traced by", r.n_producers);
		for (unsigned k = 0; k < r.n_producers; k++)
			fprintf(out, "%s%s: %" PRIu64 " stream%s", k ? ", " : "", r.producer[k],
				r.streams[k], r.streams[k] == 1 ? "" : "s");
		fprintf(out, ")");
	}
	fprintf(out, ", merged into one profile; give each %s traces on their own "
		     "(or --pid) to see one\n", r.n_producers > 1 ? "producer's or run's" : "run's");
}
