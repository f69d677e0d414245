/* SPDX-License-Identifier: MIT */
/*
 * The summary (--format=summary, kprof's default): strace -c's table,
 * read at a glance by those who know it, with kprof's retries beside the
 * errors. The calls that wait by nature (the %wait class: futex, poll,
 * epoll_wait, nanosleep, ...) have a block of their own under the work:
 * their time is summed over threads and would otherwise top a table of a
 * mostly idle thread pool. Each block's % time is of that block. Fixed
 * decimals so that the columns align; 0 errors and 0 retries left blank,
 * as strace leaves 0 errors. --percentiles adds p50 and p99 as what the
 * histogram knows of them: the range of the bucket they fall in (its
 * buckets are a quarter of an octave wide). The footer is the losses
 * alone; -v adds the classic footer (descriptors open at exit, the
 * shim's own calls).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter.h"
#include "report.h"

static void dashes(FILE *out, bool pct)
{
	fputs("------ ----------- ----------- --------- --------- ---------", out);
	if (pct)
		fputs(" ----------------- -----------------", out);
	fputs(" ----------------\n", out);
}

/* " 12.29-14.34" (us): the bucket of quantile q; "-" without data */
static void pct_cell(FILE *out, const struct ka_row *r, double q)
{
	uint64_t lo, hi;
	char buf[48] = "-";
	if (!r->no_latency && kp_hist_quantile_range(&r->hist, q, r->min_ns, r->max_ns, &lo, &hi))
		snprintf(buf, sizeof(buf), "%.2f-%.2f", (double)lo / 1e3, (double)hi / 1e3);
	fprintf(out, " %17s", buf);
}

static void blank_or(FILE *out, uint64_t v)
{
	if (v)
		fprintf(out, " %9" PRIu64, v);
	else
		fprintf(out, " %9s", "");
}

static void line(FILE *out, const struct ka_row *r, double block_ns, const char *name,
		 bool with_pct)
{
	double pct = block_ns > 0 ? 100.0 * (double)r->time_ns / block_ns : 0.0;
	double avg_us = r->count ? (double)r->time_ns / (double)r->count / 1e3 : 0.0;
	fprintf(out, "%6.2f %11.6f %11.2f %9" PRIu64, pct, (double)r->time_ns / 1e9,
		avg_us, r->count);
	blank_or(out, r->errors);
	blank_or(out, r->retries);
	if (with_pct) {
		pct_cell(out, r, 0.50);
		pct_cell(out, r, 0.99);
	}
	fprintf(out, " %s\n", name);
}

/* The rows of p that are (waits) or are not (!waits) in the %wait class,
 * as strace -c prints them; nothing when there are none. */
static void block(FILE *out, const struct ka_profile *p, bool waits,
		  const struct ka_report_opts *o)
{
	struct ka_row total = { 0 };
	size_t n = 0;
	bool pct = o->percentiles;
	for (size_t i = 0; i < p->n_rows; i++) {
		const struct ka_row *r = &p->rows[i];
		if (ka_class_has("wait", r->name) != waits)
			continue;
		KP_SC_MERGE(&total, r);
		kp_hist_add(&total.hist, &r->hist);
		n++;
	}
	if (!n)
		return;
	if (waits)
		fputs("\nCalls that wait by nature (%wait): each thread's waiting, summed over "
		      "the threads\n",
		      out);
	fputs("% time     seconds  usecs/call     calls    errors   retries", out);
	if (pct)
		fputs("    p50 range (us)    p99 range (us)", out);
	fputs(" syscall\n", out);
	dashes(out, pct);
	size_t shown = 0;
	for (size_t i = 0; i < p->n_rows; i++) {
		const struct ka_row *r = &p->rows[i];
		if (ka_class_has("wait", r->name) != waits)
			continue;
		if (o->top && shown == o->top)
			break;
		line(out, r, (double)total.time_ns, r->name, pct);
		shown++;
	}
	if (shown < n)
		fprintf(out, "(%zu more syscalls, in the total)\n", n - shown);
	dashes(out, pct);
	line(out, &total, (double)total.time_ns, "total", pct);
}

int ka_report_summary(FILE *out, const struct ka_model *m, const struct ka_report_opts *o)
{
	struct ka_profile p;
	int err = ka_report_profile(&p, m, NULL, NULL, o);
	if (err)
		return err;
	ka_report_seen(out, m);
	if (!p.n_rows)
		fputs("no calls in the trace\n", out);
	block(out, &p, false, o);
	block(out, &p, true, o);
	ka_profile_free(&p);
	if (m->set_aside)
		ka_report_aside(out, m, "");
	if (o->verbose) {
		fputc('\n', out);
		ka_report_footer(out, m, "");
	} else if (m->drops) {
		fprintf(out, "Dropped: %" PRIu64 " records, %" PRIu64 " events (-v: why)\n",
			m->drop_records, m->drop_events);
	}
	return 0;
}
