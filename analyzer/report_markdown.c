/* SPDX-License-Identifier: MIT */
/*
 * Markdown output: the classic profile as a GitHub table, for pasting
 * into issues and pull requests. Same columns and footer as the text
 * table; sections per process or thread become headings.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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

static void md_row(FILE *out, const struct ka_row *r, bool total, bool off_cpu,
		   const struct ka_report_opts *o)
{
	const char *b = total ? "**" : "";
	if (total)
		fprintf(out, "| **TOTAL** ");
	else
		fprintf(out, "| %s (%" PRIu64 ") ", r->name, r->nr);
	char time_ms[32], avg_ms[32];
	ka_format_duration(time_ms, sizeof(time_ms), (double)r->time_ns / 1e6, 2);
	ka_format_duration(avg_ms, sizeof(avg_ms),
			   r->count ? (double)r->time_ns / (double)r->count / 1e6 : 0.0, 3);
	fprintf(out, "| %s%" PRIu64 "%s | %s%s%s | %s%s%s | %s%" PRIu64 "%s ",
		b, r->count, b, b, time_ms, b, b, avg_ms, b, b, r->retries, b);
	if (o->errors) {
		char buf[1024];
		ka_report_errnos(buf, sizeof(buf), r);
		fprintf(out, "| %s%" PRIu64 "%s | %s ", b, r->errors, b, buf);
	}
	if (o->percentiles && r->no_latency)
		fputs("| - | - | - | - ", out);
	else if (o->percentiles) {
		const uint64_t v[4] = { r->p50_ns, r->p90_ns, r->p99_ns, r->max_ns };
		for (int k = 0; k < 4; k++) {
			char us[32];
			ka_format_duration(us, sizeof(us), (double)v[k] / 1e3, 2);
			fprintf(out, "| %s ", us);
		}
	}
	if (off_cpu) {
		char ms[32];
		ka_format_duration(ms, sizeof(ms), (double)r->off_cpu_ns / 1e6, 2);
		fprintf(out, "| %s%s%s ", b, ms, b);
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
	fputs("| Syscall | Count | Time (ms) | Avg (ms) | Retries ", out);
	if (o->errors)
		fputs("| Errors | Errno ", out);
	if (o->percentiles)
		fputs("| p50 (us) | p90 (us) | p99 (us) | Max (us) ", out);
	bool off = p->total.has_off_cpu_ns; /* kbpf-trace: time off CPU */
	if (off)
		fputs("| Off CPU (ms) ", out);
	fputs("|\n|:--|--:|--:|--:|--:", out);
	if (o->errors)
		fputs("|--:|:--", out);
	if (o->percentiles)
		fputs("|--:|--:|--:|--:", out);
	if (off)
		fputs("|--:", out);
	fputs("|\n", out);
	size_t n = ka_report_rows(p, o);
	for (size_t i = 0; i < n; i++)
		md_row(out, &p->rows[i], false, off, o);
	md_row(out, &p->total, true, off, o);
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
