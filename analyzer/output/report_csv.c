/* SPDX-License-Identifier: MIT */
/*
 * CSV output (RFC 4180): one header line, one line per syscall row, times
 * in integer nanoseconds. --by=process, --by=thread and --by=kind prefix
 * each line with the columns that say whose row it is; values a --by=kind
 * row does not have (min, max, percentiles, errno) are empty. No TOTAL line: a sum over
 * the column is the total.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "columns.h"
#include "report.h"

/* CSV's columns, in order: every one, whatever the options. */
static const enum ka_col csv_cols[] = {
	KA_COL_NAME, KA_COL_NR,	     KA_COL_COUNT, KA_COL_TIME, KA_COL_AVG,
	KA_COL_MIN,  KA_COL_MAX,     KA_COL_RETRIES, KA_COL_ERRORS, KA_COL_P50,
	KA_COL_P90,  KA_COL_P99,     KA_COL_OFF_CPU, KA_COL_ERRNO,
};
#define CSV_COLS (sizeof(csv_cols) / sizeof(csv_cols[0]))

/* name..errno of one row; values the row does not know (--by=kind's
 * latency, a trace without off-CPU time) are empty. */
static void print_row(FILE *out, const struct ka_row *r)
{
	for (size_t c = 0; c < CSV_COLS; c++) {
		uint64_t v;
		if (c)
			fputc(',', out);
		if (csv_cols[c] == KA_COL_NAME)
			fputs(r->name, out);
		else if (csv_cols[c] == KA_COL_ERRNO) {
			for (size_t k = 0; !r->no_latency && k < r->n_errnos; k++) {
				char buf[32];
				fprintf(out, "%s%s=%" PRIu64, k ? " " : "",
					ka_errno_name(r->errnos[k].key, buf, sizeof(buf)),
					r->errnos[k].value);
			}
		}
		else if (ka_col_value(csv_cols[c], r, &v))
			fprintf(out, "%" PRIu64, v);
	}
	fputc('\n', out);
}

static int print_kind_rows(FILE *out, const struct ka_model *m,
			   const struct ka_report_opts *o)
{
	for (int k = 0; k < KA_KIND_SECTIONS; k++) {
		struct ka_profile p;
		int err = ka_kind_profile(&p, m, k, o);
		if (err)
			return err;
		for (size_t i = 0; i < ka_report_rows(&p, o); i++) {
			fprintf(out, "%s,", ka_kind_section_name(k));
			print_row(out, &p.rows[i]);
		}
		ka_profile_free(&p);
	}
	return 0;
}

static void emit_rows(FILE *out, const struct ka_profile *p, const struct ka_stream *s,
		      const struct ka_thread *t, const struct ka_report_opts *o)
{
	for (size_t i = 0; i < ka_report_rows(p, o); i++) {
		const struct ka_row *r = &p->rows[i];
		if (s && t) {
			fprintf(out, "%" PRIu64 ",%016" PRIx64 ",%" PRIu64 ",%" PRIu64 ",",
				s->pid, s->stream, t->thread, t->tid);
			const char *name = ka_thread_name(s, t);
			kp_csv_field(out, name ? name : "");
			fputc(',', out);
		}
		else if (s) {
			fprintf(out, "%" PRIu64 ",%016" PRIx64 ",", s->pid, s->stream);
			kp_csv_field(out, s->exe);
			fputc(',', out);
		}
		print_row(out, r);
	}
}

static int print_rows(FILE *out, const struct ka_model *m,
		      const struct ka_stream *s, const struct ka_thread *t,
		      const struct ka_report_opts *o)
{
	return ka_report_emit(out, m, s, t, o, emit_rows);
}

int ka_report_csv(FILE *out, const struct ka_model *m,
		  const struct ka_report_opts *o)
{
	int err = 0;

	if (o->by == KA_BY_PROCESS)
		fputs("pid,stream,exe,", out);
	else if (o->by == KA_BY_THREAD)
		fputs("pid,stream,thread,tid,thread_name,", out);
	else if (o->by == KA_BY_KIND)
		fputs("kind,", out);
	for (size_t c = 0; c < CSV_COLS; c++)
		fprintf(out, "%s%s", c ? "," : "", ka_columns[csv_cols[c]].key);
	fputc('\n', out);
	if (o->by == KA_BY_SYSCALL)
		return print_rows(out, m, NULL, NULL, o);
	if (o->by == KA_BY_KIND)
		return print_kind_rows(out, m, o);
	for (size_t i = 0; !err && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (o->by == KA_BY_PROCESS)
			err = print_rows(out, m, s, NULL, o);
		for (size_t t = 0; !err && o->by == KA_BY_THREAD && t < s->n_threads; t++)
			err = print_rows(out, m, s, &s->threads[t], o);
	}
	return err;
}
