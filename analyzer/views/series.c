/* SPDX-License-Identifier: MIT */
/*
 * --interval=MS: a time series from the periodic cumulative aggregates.
 * At each interval boundary the last aggregate of every (stream, thread)
 * made up to then is summed; a point is the difference to the previous
 * boundary. Resolution is bounded by the producers' period
 * (KPROF_INTERVAL_MS, kbpf-trace's): an interval shorter than it shows the
 * calls in the interval where the next aggregate landed, and the intervals
 * where none landed as unknown ("-" in the table, "aggregates": 0 in
 * JSON), not as intervals without calls.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "views.h"

#define MAX_POINTS 100000
#define NRS KP_SYSCALL_MAX

struct key_state {
	uint64_t pid, stream, thread;
	const struct ka_snapshot *last;
};

static const struct ka_snapshot **sorted;

static int by_time(const void *a, const void *b)
{
	const struct ka_snapshot *x = *(const struct ka_snapshot *const *)a;
	const struct ka_snapshot *y = *(const struct ka_snapshot *const *)b;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static void apply(const struct ka_snapshot *h, int sign, int64_t *count,
		  int64_t *time, int64_t *retries, int64_t *errors)
{
	for (size_t i = 0; h && i < h->n_sc; i++) {
		size_t nr = h->sc[i].nr < NRS ? h->sc[i].nr : NRS - 1;
		count[nr] += sign * (int64_t)h->sc[i].count;
		time[nr] += sign * (int64_t)h->sc[i].time_ns;
		retries[nr] += sign * (int64_t)h->sc[i].retries;
		errors[nr] += sign * (int64_t)h->sc[i].errors;
	}
}

int ka_series_build(const struct ka_model *m, uint64_t interval_ns,
		    struct ka_series_point **points, size_t *n_points)
{
	*points = NULL;
	*n_points = 0;
	if (!m->n_history)
		return 0;
	int err = -ENOMEM;
	struct key_state *keys = calloc(m->n_history, sizeof(*keys));
	int64_t *cur = calloc(4 * NRS, sizeof(*cur)), *prev = calloc(4 * NRS, sizeof(*prev));
	sorted = calloc(m->n_history, sizeof(*sorted));
	struct ka_series_point *pts = NULL;
	size_t n_keys = 0, n = 0;
	if (!keys || !cur || !prev || !sorted)
		goto out;
	for (size_t i = 0; i < m->n_history; i++)
		sorted[i] = &m->history[i];
	qsort(sorted, m->n_history, sizeof(*sorted), by_time);
	uint64_t base = sorted[0]->time_ns, last = sorted[m->n_history - 1]->time_ns;
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].have_header && m->streams[i].start_ns < base)
			base = m->streams[i].start_ns;
	size_t want = (size_t)((last - base) / interval_ns) + 1;
	if (want > MAX_POINTS)
		want = MAX_POINTS;
	pts = calloc(want, sizeof(*pts));
	if (!pts)
		goto out;
	size_t next = 0;
	for (size_t k = 0; k < want; k++) {
		uint64_t end = base + (k + 1) * interval_ns;
		size_t first = next;
		for (; next < m->n_history && sorted[next]->time_ns < end; next++) {
			const struct ka_snapshot *h = sorted[next];
			struct key_state *ks = NULL;
			/* linear: a run has few threads */
			for (size_t j = n_keys; j-- > 0 && !ks;)
				if (keys[j].pid == h->pid && keys[j].stream == h->stream &&
				    keys[j].thread == h->thread)
					ks = &keys[j];
			if (!ks) {
				ks = &keys[n_keys++];
				ks->pid = h->pid;
				ks->stream = h->stream;
				ks->thread = h->thread;
			}
			apply(ks->last, -1, cur, cur + NRS, cur + 2 * NRS, cur + 3 * NRS);
			apply(h, 1, cur, cur + NRS, cur + 2 * NRS, cur + 3 * NRS);
			ks->last = h;
		}
		struct ka_series_point *p = &pts[n++];
		p->end_ns = end - base;
		p->aggregates = next - first;
		int64_t best = -1;
		for (size_t nr = 0; nr < NRS; nr++) {
			int64_t dc = cur[nr] - prev[nr], dt = cur[NRS + nr] - prev[NRS + nr];
			int64_t dr = cur[2 * NRS + nr] - prev[2 * NRS + nr];
			int64_t de = cur[3 * NRS + nr] - prev[3 * NRS + nr];
			/* a superseded aggregate can only grow: clamp torn reads */
			p->count += dc > 0 ? (uint64_t)dc : 0;
			p->time_ns += dt > 0 ? (uint64_t)dt : 0;
			p->retries += dr > 0 ? (uint64_t)dr : 0;
			p->errors += de > 0 ? (uint64_t)de : 0;
			if (dt > best && dc > 0) {
				best = dt;
				p->top_nr = nr;
			}
		}
		memcpy(prev, cur, 4 * NRS * sizeof(*cur));
	}
	*points = pts;
	*n_points = n;
	pts = NULL;
	err = 0;
out:
	free(pts);
	free(keys);
	free(cur);
	free(prev);
	free(sorted);
	sorted = NULL;
	return err;
}

int ka_report_series(FILE *out, const struct ka_model *m, uint64_t interval_ms,
		     const struct ka_report_opts *o)
{
	struct ka_series_point *p = NULL;
	size_t n = 0;
	int err = ka_series_build(m, interval_ms * 1000000ull, &p, &n);
	if (err)
		return err;
	const char *arch = ka_model_arch(m);
	bool csv = o->format == KA_FORMAT_CSV, json = o->format == KA_FORMAT_JSON;
	if (json)
		fprintf(out, "{\"interval_ms\":%" PRIu64 ",\"points\":[", interval_ms);
	else if (csv)
		fprintf(out, "end_ms,count,time_ns,retries,errors,top_syscall\n");
	else
		fprintf(out, "=== Time Series (every %" PRIu64 " ms, from the periodic aggregates) ===\n"
			"%10s %10s %12s %9s %9s  %s\n", interval_ms, "End(ms)", "Count",
			"Time(ms)", "Retries", "Errors", "Top syscall");
	for (size_t i = 0; i < n; i++) {
		const char *top = p[i].count ? kp_syscall_name(arch, (unsigned)p[i].top_nr) : "";
		if (!top)
			top = "?";
		if (json)
			fprintf(out, "%s{\"end_ms\":%" PRIu64 ",\"count\":%" PRIu64
				",\"time_ns\":%" PRIu64 ",\"retries\":%" PRIu64
				",\"errors\":%" PRIu64 ",\"top\":\"%s\",\"aggregates\":%" PRIu64
				"}", i ? "," : "",
				p[i].end_ns / 1000000, p[i].count, p[i].time_ns,
				p[i].retries, p[i].errors, top, p[i].aggregates);
		else if (csv)
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n",
				p[i].end_ns / 1000000, p[i].count, p[i].time_ns,
				p[i].retries, p[i].errors, top);
		else if (!p[i].aggregates && !p[i].count) /* nothing known of it */
			fprintf(out, "%10" PRIu64 " %10s %12s %9s %9s  (no aggregate in this interval)\n",
				p[i].end_ns / 1000000, "-", "-", "-", "-");
		else
			fprintf(out, "%10" PRIu64 " %10" PRIu64 " %12.3f %9" PRIu64 " %9" PRIu64 "  %s\n",
				p[i].end_ns / 1000000, p[i].count, (double)p[i].time_ns / 1e6,
				p[i].retries, p[i].errors, top);
	}
	if (json)
		fprintf(out, "]}\n");
	else if (!csv)
		fprintf(out, "%s=== End Time Series ===\n",
			n ? "" : "No aggregate records.\n");
	free(p);
	return 0;
}
