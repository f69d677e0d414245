/* SPDX-License-Identifier: MIT */
/*
 * The classic text profile (README.md, kanalyze). Column widths start at the
 * classic ones and widen to fit long names and large numbers, so columns
 * stay aligned whatever the trace holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "dispatch.h"
#include "report.h"
#include "views.h"

#define CELL 72

struct line {
	char cell[KA_COLS][CELL];
};

/* The text table's columns, in order (columns.h: which are shown). */
static const enum ka_col table_cols[] = {
	KA_COL_NAME,	KA_COL_COUNT, KA_COL_CALLS_PER_S, KA_COL_MS_PER_S,
	KA_COL_TIME,	KA_COL_OFF_CPU, KA_COL_AVG,	  KA_COL_RETRIES,
	KA_COL_ERRORS, KA_COL_P50,	KA_COL_P90,	  KA_COL_P99,
	KA_COL_MAX,
};
#define MAX_COLS (sizeof(table_cols) / sizeof(table_cols[0]))

static void fill(struct line *l, const enum ka_col *cols, size_t ncols,
		 const struct ka_row *r, const struct ka_profile *p, bool total,
		 const struct ka_report_opts *o)
{
	for (size_t c = 0; c < ncols; c++)
		ka_col_text(l->cell[c], CELL, cols[c], r, p, total, o);
}

static void print_line(FILE *out, const struct line *l, const enum ka_col *cols,
		       size_t ncols, const size_t *w)
{
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, ka_columns[cols[c]].left ? "%-*s" : "%*s", (int)w[c],
			l->cell[c]);
	fputc('\n', out);
}

static void print_dashes(FILE *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc('-', out);
	fputc('\n', out);
}

static int print_profile(FILE *out, const struct ka_profile *p,
			 const struct ka_report_opts *o)
{
	enum ka_col cols[MAX_COLS];
	size_t w[MAX_COLS];
	size_t ncols = ka_cols_shown(table_cols, MAX_COLS, o, p, cols);
	size_t nrows = ka_report_rows(p, o);
	struct line *lines = calloc(nrows + 2, sizeof(*lines));
	if (!lines)
		return -ENOMEM;

	for (size_t c = 0; c < ncols; c++) {
		snprintf(lines[0].cell[c], CELL, "%s", ka_columns[cols[c]].title);
		w[c] = ka_columns[cols[c]].width;
	}
	for (size_t i = 0; i < nrows; i++)
		fill(&lines[i + 1], cols, ncols, &p->rows[i], p, false, o);
	fill(&lines[nrows + 1], cols, ncols, &p->total, p, true, o);
	for (size_t i = 0; i < nrows + 2; i++)
		for (size_t c = 0; c < ncols; c++) {
			size_t len = strlen(lines[i].cell[c]) + 1;
			if (len > w[c])
				w[c] = len;
		}
	size_t width = 0;
	for (size_t c = 0; c < ncols; c++)
		width += w[c];

	print_line(out, &lines[0], cols, ncols, w);
	print_dashes(out, width);
	for (size_t i = 0; i < nrows; i++) {
		print_line(out, &lines[i + 1], cols, ncols, w);
		if (o->errors && p->rows[i].n_errnos) {
			char buf[1024];
			ka_report_errnos(buf, sizeof(buf), &p->rows[i]);
			fprintf(out, "    errno: %s\n", buf);
		}
	}
	if (nrows < p->n_rows)
		fprintf(out, "(%zu more syscalls not shown)\n", p->n_rows - nrows);
	print_dashes(out, width);
	print_line(out, &lines[nrows + 1], cols, ncols, w);
	free(lines);
	return 0;
}

static void print_exit(FILE *out, const struct ka_model *m, const struct ka_stream *s,
		       const struct ka_report_opts *o)
{
	if (s->empty_file) {
		fprintf(out, "No records: status unknown (the trace file is empty)\n");
		return;
	}
	if (!s->have_exit && ka_stream_ended(s)) {
		fprintf(out, "Replaced by exec of %s\n", s->exec_path);
		return;
	}
	if (!s->have_exit && o->live) {
		fprintf(out, "No exit record yet (running)\n");
		return;
	}
	if (!s->have_exit) {
		char why[PATH_MAX + 160];
		ka_report_unended_why(why, sizeof(why), m, s);
		fprintf(out, "No exit record: status unknown (%s)\n", why);
		return;
	}
	if (s->exit_detached)
		fprintf(out, "Still running when tracing ended (detached)");
	else
		fprintf(out, "Exit status %" PRId64, s->exit_status);
	if (s->exit_signal)
		fprintf(out, ", signal %" PRIu64, s->exit_signal);
	if (s->exit_after_death)
		fprintf(out, " (died without its exit path: the counts are complete, "
			     "written by the shim's output process)");
	fprintf(out, "; open at %s: pipe %" PRIu64 ", socket %" PRIu64
		", file %" PRIu64 ", other %" PRIu64
		"; pending pipe readers: %" PRIu64 ", writers: %" PRIu64 "\n",
		s->exit_detached ? "the end of tracing" : "exit",
		s->fds[KP_KIND_ROW(KP_KIND_PIPE)], s->fds[KP_KIND_ROW(KP_KIND_SOCKET)],
		s->fds[KP_KIND_ROW(KP_KIND_FILE)], s->fds[KP_KIND_ROW(KP_KIND_OTHER)],
		s->pending_pipe_readers,
		s->pending_pipe_writers);
}

static int print_section(FILE *out, const struct ka_model *m,
			 const struct ka_stream *s, const struct ka_thread *t,
			 const struct ka_report_opts *o)
{
	struct ka_profile p;
	char label[512];
	int err = ka_report_profile(&p, m, s, t, o);
	if (err)
		return err;
	ka_report_label(label, sizeof(label), s, t);
	fprintf(out, "--- %s ---\n", label);
	err = print_profile(out, &p, o);
	if (!err && !t)
		print_exit(out, m, s, o);
	fputc('\n', out);
	ka_profile_free(&p);
	return err;
}

static const char *kind_label(int section)
{
	switch (section) {
	case KA_KIND_NONE_SECTION: return "no descriptor argument";
	case KA_KIND_UNKNOWN_SECTION: return "descriptor kind not recorded";
	default: return NULL;
	}
}

/* --by=kind: one table per section that has calls. */
static int print_kinds(FILE *out, const struct ka_model *m,
		       const struct ka_report_opts *o)
{
	for (int k = 0; k < KA_KIND_SECTIONS; k++) {
		struct ka_profile p;
		int err = ka_kind_profile(&p, m, k, o);
		if (err)
			return err;
		if (p.total.count) {
			const char *label = kind_label(k);
			if (label)
				fprintf(out, "--- %s ---\n", label);
			else
				fprintf(out, "--- descriptor kind: %s ---\n",
					ka_kind_section_name(k));
			err = print_profile(out, &p, o);
			fputc('\n', out);
		}
		ka_profile_free(&p);
		if (err)
			return err;
	}
	return 0;
}

int ka_report_table(FILE *out, const struct ka_model *m,
		    const struct ka_report_opts *o)
{
	int err = 0;

	fprintf(out, "=== Syscall Profile ===\n");
	ka_report_seen(out, m);
	ka_report_aside(out, m, "");
	if (o->by == KA_BY_SYSCALL) {
		struct ka_profile p;
		err = ka_report_profile(&p, m, NULL, NULL, o);
		if (err)
			return err;
		err = print_profile(out, &p, o);
		ka_profile_free(&p);
	}
	if (o->by == KA_BY_KIND)
		err = print_kinds(out, m, o);
	for (size_t i = 0; !err && (o->by == KA_BY_PROCESS || o->by == KA_BY_THREAD) &&
			   i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (o->by == KA_BY_PROCESS) {
			err = print_section(out, m, s, NULL, o);
			continue;
		}
		for (size_t t = 0; !err && t < s->n_threads; t++)
			err = print_section(out, m, s, &s->threads[t], o);
	}
	if (err)
		return err;
	ka_report_footer(out, m, "");
	fprintf(out, "=== End Profile ===\n");
	return 0;
}
