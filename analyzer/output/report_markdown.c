/* SPDX-License-Identifier: MIT */
/*
 * Markdown output: the classic profile as a GitHub table, for pasting
 * into issues and pull requests. Same columns and footer as the text
 * table; sections per process or thread become headings.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "columns.h"
#include "report.h"

/* Table cells may not contain '|' or line breaks. */
static void md_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

/* Markdown's columns, in order (columns.h: which are shown). */
static const enum ka_col md_cols[] = {
	KA_COL_NAME, KA_COL_COUNT, KA_COL_TIME, KA_COL_AVG,	KA_COL_RETRIES,
	KA_COL_ERRORS, KA_COL_ERRNO, KA_COL_P50, KA_COL_P90,	KA_COL_P99,
	KA_COL_MAX,  KA_COL_OFF_CPU,
};
#define MD_COLS (sizeof(md_cols) / sizeof(md_cols[0]))

/* One row; the TOTAL row's numbers in bold. */
static void md_row(FILE *out, const enum ka_col *cols, size_t ncols,
		   const struct ka_row *r, const struct ka_profile *p, bool total,
		   const struct ka_report_opts *o)
{
	for (size_t c = 0; c < ncols; c++) {
		char cell[1024];
		ka_col_text(cell, sizeof(cell), cols[c], r, p, total, o);
		bool bold = total && cols[c] != KA_COL_ERRNO;
		fputs("| ", out);
		if (bold)
			fputs("**", out);
		md_text(out, cell);
		fputs(bold ? "** " : " ", out);
	}
	fputs("|\n", out);
}

static void md_table(FILE *out, const struct ka_profile *p,
		     const struct ka_report_opts *o);

static void md_emit(FILE *out, const struct ka_profile *p, const struct ka_stream *s,
		    const struct ka_thread *t, const struct ka_report_opts *o)
{
	(void)s;
	(void)t;
	md_table(out, p, o);
}

static int md_profile(FILE *out, const struct ka_model *m,
		      const struct ka_stream *s, const struct ka_thread *t,
		      const struct ka_report_opts *o)
{
	return ka_report_emit(out, m, s, t, o, md_emit);
}

static int md_kinds(FILE *out, const struct ka_model *m,
		    const struct ka_report_opts *o)
{
	for (int k = 0; k < KA_KIND_SECTIONS; k++) {
		struct ka_profile p;
		int err = ka_kind_profile(&p, m, k, o);
		if (err)
			return err;
		if (p.total.count) {
			if (k == KA_KIND_NONE_SECTION)
				fputs("### No descriptor argument\n\n", out);
			else if (k == KA_KIND_UNKNOWN_SECTION)
				fputs("### Descriptor kind not recorded\n\n", out);
			else
				fprintf(out, "### Descriptor kind: %s\n\n",
					ka_kind_section_name(k));
			md_table(out, &p, o);
		}
		ka_profile_free(&p);
	}
	return 0;
}

static void md_table(FILE *out, const struct ka_profile *p,
		     const struct ka_report_opts *o)
{
	enum ka_col cols[MD_COLS];
	size_t ncols = ka_cols_shown(md_cols, MD_COLS, o, p, cols);
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, "| %s ", ka_columns[cols[c]].heading);
	fputs("|\n", out);
	for (size_t c = 0; c < ncols; c++)
		fputs(ka_columns[cols[c]].left ? "|:--" : "|--:", out);
	fputs("|\n", out);
	size_t n = ka_report_rows(p, o);
	for (size_t i = 0; i < n; i++)
		md_row(out, cols, ncols, &p->rows[i], p, false, o);
	md_row(out, cols, ncols, &p->total, p, true, o);
	if (n < p->n_rows)
		fprintf(out, "\n%zu more syscalls not shown.\n", p->n_rows - n);
	fputc('\n', out);
}

int ka_report_markdown(FILE *out, const struct ka_model *m,
		       const struct ka_report_opts *o)
{
	int err = 0;

	fputs("## Syscall profile\n\n", out);
	if (m->set_aside) {
		ka_report_aside(out, m, "> ");
		fputs("\n", out);
	}
	if (o->by == KA_BY_SYSCALL)
		err = md_profile(out, m, NULL, NULL, o);
	if (o->by == KA_BY_KIND)
		err = md_kinds(out, m, o);
	for (size_t i = 0; !err && (o->by == KA_BY_PROCESS || o->by == KA_BY_THREAD) &&
			   i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		char label[512];
		for (size_t t = 0; !err && t < (o->by == KA_BY_THREAD ? s->n_threads : 1); t++) {
			const struct ka_thread *th = o->by == KA_BY_THREAD ? &s->threads[t] : NULL;
			ka_report_label(label, sizeof(label), s, th);
			fputs("### ", out);
			md_text(out, label);
			fputs("\n\n", out);
			err = md_profile(out, m, s, th, o);
		}
	}
	if (err)
		return err;
	ka_report_footer(out, m, "- ");
	return 0;
}
