/* SPDX-License-Identifier: MIT */
/* What the output formats share: sorted profiles, labels and footer. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "views.h"

int ka_report_profile(struct ka_profile *p, const struct ka_model *m,
		      const struct ka_stream *s, const struct ka_thread *t,
		      const struct ka_report_opts *o)
{
	int err = ka_profile_build(p, m, s, t);
	if (err)
		return err;
	ka_profile_sort(p, o->sort);
	return 0;
}

int ka_report_emit(FILE *out, const struct ka_model *m, const struct ka_stream *s,
		   const struct ka_thread *t, const struct ka_report_opts *o,
		   ka_profile_emit *emit)
{
	struct ka_profile p;
	int err = ka_report_profile(&p, m, s, t, o);
	if (err)
		return err;
	emit(out, &p, s, t, o);
	ka_profile_free(&p);
	return 0;
}

void ka_format_duration(char *buf, size_t size, double value, int decimals)
{
	static const double last_digit[] = { 1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5,
					      1e-6, 1e-7, 1e-8, 1e-9 };
	int d = decimals;
	/* Below one unit of the last decimal (a 250 ns average is 0.000 ms,
	 * 560 ns would round to 0.001): two significant digits instead. */
	if (value > 0 && d >= 0 && d < 9 && value < last_digit[d]) {
		while (d < 9 && value < last_digit[d])
			d++;
		if (d < 9)
			d++;
	}
	snprintf(buf, size, "%.*f", d, value);
}

size_t ka_report_rows(const struct ka_profile *p,
		      const struct ka_report_opts *o)
{
	return o->top && o->top < p->n_rows ? o->top : p->n_rows;
}

const char *ka_thread_name(const struct ka_stream *s, const struct ka_thread *t)
{
	if (t->name[0])
		return t->name;
	/* the main thread keeps the image's name until it renames itself */
	if (s->comm[0] && (t->tid == s->pid || (!t->tid && t->thread <= 1)))
		return s->comm;
	return NULL;
}

void ka_report_label(char *buf, size_t size, const struct ka_stream *s,
		     const struct ka_thread *t)
{
	int n;
	const char *name = t ? ka_thread_name(s, t) : NULL;
	if (t)
		n = snprintf(buf, size, "pid %" PRIu64 " thread %" PRIu64 "%s%s%s"
			     " (tid %" PRIu64 "%s)", s->pid, t->thread, name ? " \"" : "",
			     name ? name : "", name ? "\"" : "", t->tid,
			     t->exited ? ", exited" : "");
	else if (s->empty_file)
		n = snprintf(buf, size, "pid %" PRIu64 " (empty trace file %s)", s->pid,
			     s->empty_file);
	else if (s->have_header)
		n = snprintf(buf, size, "pid %" PRIu64 " (ppid %" PRIu64 ", %s)",
			     s->pid, s->ppid, s->origin ? s->origin : "?");
	else
		n = snprintf(buf, size, "pid %" PRIu64 " (no header)", s->pid);
	for (size_t i = 0; n >= 0 && (size_t)n < size && i < s->argc; i++)
		n += snprintf(buf + n, size - (size_t)n, " %s", s->argv[i]);
	if (s->argc == 0 && s->exe && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " %s", s->exe);
}

void ka_print_damage(FILE *out, const struct ka_damage_entry *d)
{
	if (d->whole_input)
		fprintf(out, "kanalyze: %s: %s\n", d->file, d->reason);
	else
		fprintf(out, "kanalyze: %s: %s at byte %" PRIu64 "%s\n", d->file,
			d->reason, d->offset,
			d->decompressed ? " of the decompressed stream" : "");
}

const char *ka_stream_name(const struct ka_stream *s)
{
	const char *path = s->exe && *s->exe ? s->exe :
			   s->argc && *s->argv[0] ? s->argv[0] : NULL;
	if (!path)
		return "no header";
	const char *base = strrchr(path, '/');
	return base && base[1] ? base + 1 : path;
}

void ka_report_unended_why(char *buf, size_t size, const struct ka_model *m,
			   const struct ka_stream *s)
{
	bool bpf = s->producer && strcmp(s->producer, "bpf") == 0;
	if (!s->last_key || s->last_source >= m->n_sources) {
		snprintf(buf, size, "killed or lost (no whole record of it was read)");
		return;
	}
	const struct ka_source *src = &m->sources[s->last_source];
	/*
	 * kbpf-trace writes an exit record for every stream it followed, also
	 * for a killed process (with its signal) and for one still running
	 * when tracing ends ("detached"): without one, kbpf-trace itself was
	 * stopped, or its output lost.
	 */
	const char *why =
		src->live ? "still running when kanalyze stopped listening," :
		bpf ? "kbpf-trace stopped before it ended the stream, or the rest was lost," :
		      "killed or lost";
	snprintf(buf, size, "%s after byte %" PRIu64 " of %s%s", why, s->last_end,
		 s->last_decompressed ? "the decompressed stream of " : "", src->name);
}

void ka_report_errnos(char *buf, size_t size, const struct ka_row *r)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->n_errnos && n < size; i++) {
		char tmp[32];
		int k = snprintf(buf + n, size - n, "%s%s %" PRIu64,
				 i ? ", " : "",
				 ka_errno_name(r->errnos[i].key, tmp, sizeof(tmp)),
				 r->errnos[i].value);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

void ka_model_pending(const struct ka_model *m, uint64_t *readers,
		      uint64_t *writers, uint64_t fds[KP_KINDS],
		      size_t *exited)
{
	*readers = *writers = 0;
	*exited = 0;
	memset(fds, 0, KP_KINDS * sizeof(fds[0]));
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!s->have_exit)
			continue;
		(*exited)++;
		*readers += s->pending_pipe_readers;
		*writers += s->pending_pipe_writers;
		for (int k = 0; k < KP_KINDS; k++)
			fds[k] += s->fds[k];
	}
}

void ka_report_footer(FILE *out, const struct ka_model *m, const char *prefix)
{
	uint64_t readers, writers, fds[KP_KINDS];
	size_t exited;

	ka_model_pending(m, &readers, &writers, fds, &exited);
	/* kbpf-trace -p: tracing ended while the process went on running */
	size_t detached = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		detached += m->streams[i].have_exit && m->streams[i].exit_detached;
	fprintf(out, "%sPending pipe readers: %" PRIu64 ", writers: %" PRIu64 "\n",
		prefix, readers, writers);
	if (exited && !detached)
		fprintf(out, "%sOpen at exit: pipe %" PRIu64 ", socket %" PRIu64
			", file %" PRIu64 ", other %" PRIu64
			" (%zu of %zu streams exited)\n", prefix,
			fds[KP_KIND_ROW(KP_KIND_PIPE)],
			fds[KP_KIND_ROW(KP_KIND_SOCKET)],
			fds[KP_KIND_ROW(KP_KIND_FILE)],
			fds[KP_KIND_ROW(KP_KIND_OTHER)], exited, m->n_streams);
	else if (exited)
		fprintf(out, "%sOpen at exit or at the end of tracing: pipe %" PRIu64
			", socket %" PRIu64 ", file %" PRIu64 ", other %" PRIu64
			" (%zu of %zu streams ended: %zu exited, %zu still running when "
			"tracing ended)\n", prefix,
			fds[KP_KIND_ROW(KP_KIND_PIPE)],
			fds[KP_KIND_ROW(KP_KIND_SOCKET)],
			fds[KP_KIND_ROW(KP_KIND_FILE)],
			fds[KP_KIND_ROW(KP_KIND_OTHER)], exited, m->n_streams,
			exited - detached, detached);
	if (m->drops) {
		fprintf(out, "%sDropped: %" PRIu64 " records, %" PRIu64 " events",
			prefix, m->drop_records, m->drop_events);
		for (size_t i = 0; i < m->n_drop_reasons; i++)
			fprintf(out, "%s%s", i ? "; " : " (", m->drop_reasons[i]);
		fprintf(out, "%s\n", m->n_drop_reasons ? ")" : "");
	}
	const char *producer = ka_model_producer(m);
	const char *coverage = ka_model_coverage(m);
	fprintf(out, "%sMerged: %" PRIu64 " processes, %zu streams, %" PRIu64
		" threads", prefix, ka_model_processes(m), m->n_streams,
		ka_model_threads(m));
	if (producer)
		fprintf(out, "; %s%s%s", producer, coverage ? ": " : "",
			coverage ? coverage : "");
	fprintf(out, "\n");
	uint64_t own = 0, own_startup = 0, in_progress = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		for (size_t k = 0; k < s->n_own; k++)
			own += s->own[k].value;
		for (size_t k = 0; k < s->n_own_startup; k++)
			own_startup += s->own_startup[k].value;
		for (size_t k = 0; k < s->n_in_progress; k++)
			in_progress += s->in_progress[k].value;
	}
	if (own || in_progress)
		fprintf(out, "%sNot in the profile: the shim's own %" PRIu64 " calls (%" PRIu64
			" in its start-up), %" PRIu64 " calls in progress at an exit; "
			"kanalyze --coverage --after-start accounts for them and the loader's\n",
			prefix, own, own_startup, in_progress);
	/* what the shim said it could not see */
	if (ka_untraced_count(m)) {
		fprintf(out, "%sNot traced:\n", prefix);
		char sub[16];
		snprintf(sub, sizeof(sub), "%s  ", prefix);
		ka_report_untraced(out, m, sub);
	}
	ka_report_header_notes(out, m, prefix);
	if (m->unknown_records)
		fprintf(out, "%sSkipped: %" PRIu64 " records of unknown type\n",
			prefix, m->unknown_records);
	if (m->n_damaged)
		fprintf(out, "%sDamaged input: %zu problem%s (see the warnings)\n",
			prefix, m->n_damaged,
			m->n_damaged == 1 ? "" : "s");
}

void ka_report_aside(FILE *out, const struct ka_model *m, const char *prefix)
{
	if (!m->set_aside)
		return;
	fprintf(out, "%swaits set aside (--exclude-waits: futex, poll, select, epoll_wait, "
		"nanosleep, wait4, ...): %" PRIu64 " calls, %.3f ms\n", prefix, m->aside_calls,
		(double)m->aside_ns / 1e6);
}
