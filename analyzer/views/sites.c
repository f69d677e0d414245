/* SPDX-License-Identifier: MIT */
/*
 * Call sites: the shim's per-syscall return addresses of the hooked libc
 * functions, or the innermost frame outside libc and the dynamic loader
 * of kbpf-trace's user stacks (--stacks), resolved per stream (each
 * stream has its own mappings) and merged over the whole model by
 * (syscall, resolved name). --sites prints the top sites of each syscall
 * by time; --folded writes "library`function;...;syscall count" lines for
 * flame graph tools: the site alone for the shim, the whole stack, root
 * first, for kbpf-trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"
#include "syscalls.h"
#include "views.h"

#define DEFAULT_SITES_PER_SYSCALL 5

static int row_cmp_key(const void *a, const void *b)
{
	const struct ka_site_row *x = a, *y = b;
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	return strcmp(x->where, y->where);
}

/* The C library and the dynamic loader: a site is the code that called them. */
static bool in_libc(const struct ka_stream *s, uint64_t pc)
{
	const struct ka_map *mp = ka_map_of(s, pc);
	if (!mp)
		return false;
	const char *base = strrchr(mp->path, '/');
	base = base ? base + 1 : mp->path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
	       !strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5) ||
	       !strncmp(base, "ld64.so", 7) || !strncmp(base, "libpthread", 10);
}

/*
 * Frames of a frame-pointer stack worth showing: those before the first
 * one in no code (code without frame pointers left a register value in
 * the chain: it is no return address, and what follows it was read
 * through it, so all of it is noise). Code is a mapping of the stream or
 * a JIT function of its perf map. The innermost frame is always kept.
 */
size_t ka_stack_depth(struct ka_symbolizer *sym, const struct ka_stream *s,
		      const struct ka_stack *st)
{
	for (size_t f = 1; f < st->depth; f++)
		if (!ka_symbol_known(sym, s, st->pcs[f])) /* frames are return addresses */
			return f;
	return st->depth;
}

/* The frame of a stack that stands for its call site. */
static uint64_t stack_site(const struct ka_stream *s, const struct ka_stack *st)
{
	for (size_t f = 0; f < st->depth; f++)
		if (ka_map_of(s, st->pcs[f] - 1) && !in_libc(s, st->pcs[f] - 1))
			return st->pcs[f];
	return st->pcs[0];
}

static int add_row(struct ka_site_row **r, size_t *n, size_t *cap,
		   struct ka_site_row **out)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		void *p = reallocarray(*r, *cap, sizeof(**r));
		if (!p)
			return -ENOMEM;
		*r = p;
	}
	*out = &(*r)[(*n)++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

#define UNKNOWN_SITE "[unknown site]"

/* Whether any stream of the model has kbpf-trace stacks. */
bool ka_model_has_stacks(const struct ka_model *m)
{
	for (size_t i = 0; i < m->n_streams; i++)
		for (size_t t = 0; t < m->streams[i].n_threads; t++)
			for (size_t k = 0; k < m->streams[i].threads[t].n_sc; k++)
				if (m->streams[i].threads[t].sc[k].n_stacks)
					return true;
	return false;
}

/* A stream whose calls all belong at a site: the shim records one per call
 * (or "other"); kbpf-trace does with --stacks. */
bool ka_stream_has_sites(const struct ka_stream *s, bool stacks)
{
	return (s->producer && !strcmp(s->producer, "preload")) || stacks;
}

/*
 * The calls of sc at no site or stack: those the shim counted where no
 * site could be kept (a thread's table full, a call counted in the
 * process totals, exec and exit), and kbpf-trace's calls without a stack.
 * Shown as "[unknown site]" so that sites and folded stacks sum to the
 * profile's counts.
 */
uint64_t ka_sc_unattributed(const struct ka_sc_stats *sc, bool stacks,
				uint64_t *time_ns)
{
	uint64_t count = 0, time = 0;
	for (size_t j = 0; j < sc->n_sites; j++) {
		count += sc->sites[j].count;
		time += sc->sites[j].time_ns;
	}
	for (size_t j = 0; stacks && j < sc->n_stacks; j++) {
		count += sc->stacks[j].count;
		time += sc->stacks[j].time_ns;
	}
	*time_ns = sc->time_ns > time ? sc->time_ns - time : 0;
	return sc->count > count ? sc->count - count : 0;
}

void ka_syscall_label(char *out, size_t size, const char *arch, uint64_t nr)
{
	const char *name = nr < KP_SYSCALL_MAX ? kp_syscall_name(arch, (unsigned)nr) : NULL;
	if (name)
		snprintf(out, size, "%s", name);
	else
		snprintf(out, size, "syscall_%" PRIu64, nr);
}

/* The shim's sites, and with stacks the site of each of kbpf-trace's
 * stacks; the rest of each syscall's calls at "[unknown site]" (with
 * stacks false, only for the shim's streams: the caller writes the
 * stacks' streams whole). */
static int collect_sites(const struct ka_model *m, bool stacks,
			 struct ka_site_row **rows, size_t *n_rows)
{
	bool any_stacks = stacks && ka_model_has_stacks(m);
	struct ka_symbolizer *sym = NULL;
	struct ka_site_row *r = NULL;
	size_t n = 0, cap = 0;
	int err = ka_symbolizer_new(&sym);
	if (err)
		return err;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		for (size_t t = 0; t < s->n_threads; t++) {
			const struct ka_thread *th = &s->threads[t];
			for (size_t k = 0; k < th->n_sc; k++) {
				const struct ka_sc_stats *sc = &th->sc[k];
				size_t n_stacks = stacks ? sc->n_stacks : 0;
				uint64_t rest_ns = 0, rest = 0;
				if (ka_stream_has_sites(s, any_stacks))
					rest = ka_sc_unattributed(sc, stacks, &rest_ns);
				for (size_t j = 0; j < sc->n_sites + n_stacks + (rest != 0); j++) {
					struct ka_site_row *x;
					if ((err = add_row(&r, &n, &cap, &x)))
						goto out;
					x->nr = sc->nr;
					ka_syscall_label(x->syscall, sizeof(x->syscall), arch, sc->nr);
					if (j == sc->n_sites + n_stacks) {
						snprintf(x->where, sizeof(x->where), UNKNOWN_SITE);
						x->count = rest;
						x->time_ns = rest_ns;
						continue;
					}
					if (j < sc->n_sites) {
						ka_symbolize(sym, s, sc->sites[j].addr, x->where,
							     sizeof(x->where));
						x->count = sc->sites[j].count;
						x->time_ns = sc->sites[j].time_ns;
						continue;
					}
					const struct ka_stack *st = &sc->stacks[j - sc->n_sites];
					if (st->depth)
						ka_symbolize(sym, s, stack_site(s, st), x->where,
							     sizeof(x->where));
					else
						snprintf(x->where, sizeof(x->where), "[unknown stack]");
					x->count = st->count;
					x->time_ns = st->time_ns;
				}
			}
		}
	}
	/* merge equal (syscall, site) */
	if (n > 1)
		qsort(r, n, sizeof(*r), row_cmp_key);
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		if (out && row_cmp_key(&r[out - 1], &r[i]) == 0) {
			r[out - 1].count += r[i].count;
			r[out - 1].time_ns += r[i].time_ns;
		} else {
			r[out++] = r[i];
		}
	}
	n = out;
out:
	ka_symbolizer_free(sym);
	if (err) {
		free(r);
		return err;
	}
	*rows = r;
	*n_rows = n;
	return 0;
}

int ka_sites_collect(const struct ka_model *m, struct ka_site_row **rows,
		     size_t *n_rows)
{
	return collect_sites(m, true, rows, n_rows);
}

int ka_report_sites(FILE *out, const struct ka_model *m,
		    const struct ka_report_opts *o)
{
	struct ka_site_row *rows = NULL;
	size_t n = 0;
	struct ka_profile p;
	int err = ka_sites_collect(m, &rows, &n);
	if (err)
		return err;
	if ((err = ka_report_profile(&p, m, NULL, NULL, o))) {
		free(rows);
		return err;
	}
	size_t per = !o->top_given ? DEFAULT_SITES_PER_SYSCALL : o->top ? o->top : SIZE_MAX;
	bool json = o->format == KA_FORMAT_JSON;
	if (json)
		fprintf(out, "{\"syscalls\":[");
	else if (per == SIZE_MAX)
		fprintf(out, "=== Call Sites (all per syscall, by time) ===\n");
	else
		fprintf(out, "=== Call Sites (top %zu per syscall, by time) ===\n", per);
	bool any = false, first = true;
	for (size_t i = 0; i < p.n_rows; i++) {
		const struct ka_row *row = &p.rows[i];
		/* the sites of this syscall, best first (selection: lists are short) */
		size_t first_site = n, count = 0;
		for (size_t k = 0; k < n; k++)
			if (rows[k].nr == row->nr) {
				if (first_site == n)
					first_site = k;
				count++;
			}
		if (!count)
			continue;
		any = true;
		struct ka_site_row *s = &rows[first_site];
		for (size_t a = 0; a < count; a++)
			for (size_t b = a + 1; b < count; b++)
				if (s[b].time_ns > s[a].time_ns) {
					struct ka_site_row t = s[a];
					s[a] = s[b];
					s[b] = t;
				}
		if (json) {
			fprintf(out, "%s{\"name\":\"%s\",\"nr\":%" PRIu64 ",\"sites\":[",
				first ? "" : ",", row->name, row->nr);
			first = false;
			for (size_t a = 0; a < count && a < per; a++) {
				fprintf(out, "%s{\"site\":", a ? "," : "");
				ka_json_string(out, s[a].where);
				fprintf(out, ",\"count\":%" PRIu64 ",\"time_ns\":%" PRIu64 "}",
					s[a].count, s[a].time_ns);
			}
			fprintf(out, "]}");
			continue;
		}
		fprintf(out, "%s (%" PRIu64 "): %" PRIu64 " calls, %.3f ms\n", row->name,
			row->nr, row->count, (double)row->time_ns / 1e6);
		for (size_t a = 0; a < count && a < per; a++)
			fprintf(out, "  %10" PRIu64 " calls %10.3f ms  %s\n", s[a].count,
				(double)s[a].time_ns / 1e6, s[a].where);
		if (count > per)
			fprintf(out, "  (%zu more sites)\n", count - per);
	}
	if (json)
		fprintf(out, "]}\n");
	else if (!any)
		fprintf(out, "No call sites in these traces (the shim records them; "
			"kbpf-trace with --stacks).\n=== End Call Sites ===\n");
	else
		fprintf(out, "=== End Call Sites ===\n");
	ka_profile_free(&p);
	free(rows);
	return 0;
}

/* "do_read (prog)" -> "prog`do_read"; a ';' would break the format. */
static void folded_frame(char *out, size_t size, const char *where)
{
	const char *paren = ka_symbol_library(where);
	size_t len = strlen(where);
	if (paren)
		snprintf(out, size, "%.*s`%.*s", (int)(len - (size_t)(paren - where) - 3),
			 paren + 2, (int)(paren - where), where);
	else
		snprintf(out, size, "%s", where);
	for (char *c = out; *c; c++)
		if (*c == ';')
			*c = '_';
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct ka_folded_line *)a)->text,
		      ((const struct ka_folded_line *)b)->text);
}

/* One stack, root first: "lib`caller;...;lib`innermost;syscall". */
static char *folded_stack(struct ka_symbolizer *sym, const struct ka_stream *s,
			  const struct ka_stack *st, const char *syscall)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	if (!st->depth)
		fputs("[unknown stack];", f);
	for (size_t k = ka_stack_depth(sym, s, st); k-- > 0;) {
		char where[256], frame[300];
		ka_symbolize(sym, s, st->pcs[k], where, sizeof(where));
		folded_frame(frame, sizeof(frame), where);
		fprintf(f, "%s;", frame);
	}
	fputs(syscall, f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

struct lines {
	struct ka_folded_line *v;
	size_t n, cap;
};

/* Takes text (NULL: out of memory). */
static int add_line(struct lines *l, char *text, uint64_t count, uint64_t time_ns)
{
	if (!text)
		return -ENOMEM;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *p = reallocarray(l->v, cap, sizeof(*l->v));
		if (!p) {
			free(text);
			return -ENOMEM;
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = (struct ka_folded_line){ text, count, time_ns };
	return 0;
}

/* kbpf-trace's stacks, whole, and their calls without a stack. */
static int stack_lines(const struct ka_model *m, struct ka_symbolizer *sym, struct lines *l)
{
	int err = 0;
	for (size_t i = 0; i < m->n_streams && !err; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (s->producer && !strcmp(s->producer, "preload"))
			continue; /* the shim's: at their sites */
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		for (size_t t = 0; t < s->n_threads && !err; t++) {
			const struct ka_thread *th = &s->threads[t];
			for (size_t k = 0; k < th->n_sc && !err; k++) {
				const struct ka_sc_stats *sc = &th->sc[k];
				char syscall[40], *text;
				ka_syscall_label(syscall, sizeof(syscall), arch, sc->nr);
				for (size_t j = 0; j < sc->n_stacks && !err; j++)
					err = add_line(l, folded_stack(sym, s, &sc->stacks[j], syscall),
						       sc->stacks[j].count, sc->stacks[j].time_ns);
				uint64_t rest_ns, rest = ka_sc_unattributed(sc, true, &rest_ns);
				if (!err && rest)
					err = add_line(l, asprintf(&text, "[unknown stack];%s", syscall) < 0 ?
								  NULL : text, rest, rest_ns);
			}
		}
	}
	return err;
}

int ka_folded_collect(const struct ka_model *m, struct ka_folded_line **out, size_t *n_out)
{
	struct lines l = { 0 };
	struct ka_symbolizer *sym = NULL;
	struct ka_site_row *rows = NULL;
	size_t n = 0;
	int err = ka_symbolizer_new(&sym);
	if (!err && ka_model_has_stacks(m))
		err = stack_lines(m, sym, &l);
	/* the shim's sites (kbpf-trace's stacks are whole above) */
	if (!err)
		err = collect_sites(m, false, &rows, &n);
	for (size_t i = 0; i < n && !err; i++) {
		char frame[300], *text;
		folded_frame(frame, sizeof(frame), rows[i].where);
		err = add_line(&l, asprintf(&text, "%s;%s", frame, rows[i].syscall) < 0 ? NULL : text,
			       rows[i].count, rows[i].time_ns);
	}
	free(rows);
	ka_symbolizer_free(sym);
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(*l.v), cmp_line);
	size_t k = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (k && !strcmp(l.v[k - 1].text, l.v[i].text)) {
			l.v[k - 1].count += l.v[i].count;
			l.v[k - 1].time_ns += l.v[i].time_ns;
			free(l.v[i].text);
		} else {
			l.v[k++] = l.v[i];
		}
	}
	l.n = k;
	if (err) {
		ka_folded_free(l.v, l.n);
		return err;
	}
	*out = l.v;
	*n_out = l.n;
	return 0;
}

void ka_folded_free(struct ka_folded_line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
}

int ka_write_folded(FILE *out, const struct ka_model *m)
{
	struct ka_folded_line *lines;
	size_t n;
	int err = ka_folded_collect(m, &lines, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		if (!lines[i].count)
			continue;
		/* flamegraph.pl splits the count off at the last space */
		for (char *c = lines[i].text; *c; c++)
			if (*c == ' ')
				*c = '_';
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, lines[i].count);
	}
	ka_folded_free(lines, n);
	return ferror(out) ? -EIO : 0;
}
