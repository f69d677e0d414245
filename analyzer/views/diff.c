/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --diff A B: per-syscall count, time and average of two traces
 * side by side, with the change and a verdict per row.
 *
 * The verdict follows krunner's rule (a change the wrong way beyond 5%)
 * on what costs the program: the time in the syscall. Time decides, and
 * counts and averages say why, for the times of two runs on a shared
 * machine differ by tens of percent on their own (measured here:
 * getppid's average 4.7 us in a first run, 1.3 us in the next). A row is
 * flagged `worse` when its time rose by more than 5% and it is explained:
 * 5% more calls (exact), or calls that got clearly slower: average up
 * more than 25% (the resolution of the latency histograms) and a
 * Mann-Whitney U test over the two histograms at p <= 0.05, so that a row
 * of a few calls cannot be flagged by chance. The average is taken
 * relative to the run-wide speed factor (the median change of the
 * per-call averages): when the machine made every call of B twice as slow,
 * no single syscall is to blame. More calls in less time is no
 * regression. `better` is the mirror image and is shown, not counted as
 * a flag. The verdict names its reason: more calls, slower calls, both,
 * or a syscall new in B (fewer, faster, gone for `better`).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define RULE_PCT 5.0
#define SLOWER_PCT 25.0

struct diff_row {
	uint64_t nr;
	char name[40];
	const struct kp_hist *hist[2];
	double p_value; /* Mann-Whitney U on the latency histograms */
	uint64_t count[2], time_ns[2];
	double d_count, d_time, d_avg; /* percent, INFINITY when from 0 */
	int verdict; /* 1 worse, -1 better, 0 */
	const char *why; /* the verdict's reason, "" without one */
};

static double pct(double a, double b)
{
	if (a == 0)
		return b == 0 ? 0 : INFINITY;
	return (b - a) / a * 100.0;
}

static double avg(uint64_t t, uint64_t c)
{
	return c ? (double)t / (double)c : 0;
}

/*
 * Two-sided p of the Mann-Whitney U test over two latency histograms
 * (values in one bucket are ties), normal approximation with tie
 * correction. 1 when either side is empty.
 */
static double mann_whitney_p(const struct kp_hist *a, const struct kp_hist *b)
{
	double na = 0, nb = 0;
	for (unsigned i = 0; i < KP_HIST_BUCKETS; i++) {
		na += (double)a->bucket[i];
		nb += (double)b->bucket[i];
	}
	if (na == 0 || nb == 0)
		return 1;
	double n = na + nb, rank = 0, ra = 0, ties = 0;
	for (unsigned i = 0; i < KP_HIST_BUCKETS; i++) {
		double t = (double)a->bucket[i] + (double)b->bucket[i];
		if (t == 0)
			continue;
		double mid = rank + (t + 1) / 2;
		ra += mid * (double)a->bucket[i];
		ties += t * t * t - t;
		rank += t;
	}
	double u = ra - na * (na + 1) / 2, mu = na * nb / 2;
	double var = na * nb / 12 * ((n + 1) - ties / (n * (n - 1) > 0 ? n * (n - 1) : 1));
	if (var <= 0)
		return 1;
	double z = fabs(u - mu) / sqrt(var);
	return erfc(z / sqrt(2));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * How much slower every call of B is than of A, from the machine's state
 * alone (load, frequency, a cold cache): the median ratio of the per-call
 * averages over the rows with enough calls on both sides; 1 when fewer
 * than two rows qualify.
 */
static double speed_factor(const struct diff_row *rows, size_t n)
{
	double *ratios = calloc(n + 1, sizeof(*ratios));
	size_t k = 0;
	for (size_t i = 0; ratios && i < n; i++)
		if (rows[i].count[0] >= 30 && rows[i].count[1] >= 30 &&
		    rows[i].time_ns[0] && rows[i].time_ns[1])
			ratios[k++] = avg(rows[i].time_ns[1], rows[i].count[1]) /
				      avg(rows[i].time_ns[0], rows[i].count[0]);
	double f = 1;
	if (k >= 2) {
		qsort(ratios, k, sizeof(*ratios), cmp_double);
		f = k % 2 ? ratios[k / 2] : (ratios[k / 2 - 1] + ratios[k / 2]) / 2;
	}
	free(ratios);
	return f;
}

static double speed = 1;

/* The verdict of r, 1 worse, -1 better, 0 none, with its reason. */
static int verdict(const struct diff_row *r, const char **why)
{
	*why = "";
	if (!r->count[0] && r->count[1] && r->time_ns[1]) {
		*why = "new";
		return 1;
	}
	if (r->count[0] && !r->count[1] && r->time_ns[0]) {
		*why = "gone";
		return -1;
	}
	double rel = r->count[0] && r->count[1] ?
			     (avg(r->time_ns[1], r->count[1]) / speed /
				      avg(r->time_ns[0], r->count[0]) - 1) * 100 : r->d_avg;
	bool slower = rel > SLOWER_PCT && r->p_value <= 0.05;
	bool faster = rel < -SLOWER_PCT && r->p_value <= 0.05;
	bool more = r->d_count > RULE_PCT, fewer = r->d_count < -RULE_PCT;
	if (r->d_time > RULE_PCT && (more || slower)) {
		*why = more && slower ? "more and slower calls" : more ? "more calls" : "slower calls";
		return 1;
	}
	if (r->d_time < -RULE_PCT && (fewer || faster)) {
		*why = fewer && faster ? "fewer and faster calls" :
		       fewer	       ? "fewer calls" :
					 "faster calls";
		return -1;
	}
	return 0;
}

static int by_change(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	double dx = fabs((double)x->time_ns[1] - (double)x->time_ns[0]);
	double dy = fabs((double)y->time_ns[1] - (double)y->time_ns[0]);
	if (x->verdict != y->verdict)
		return y->verdict - x->verdict;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static void fmt_pct(char *buf, size_t size, double v)
{
	if (isinf(v))
		snprintf(buf, size, "new");
	else
		snprintf(buf, size, "%+.1f%%", v);
}

int ka_report_diff(FILE *out, const struct ka_model *a, const struct ka_model *b,
		   const char *name_a, const char *name_b,
		   const struct ka_report_opts *o, size_t *regressions)
{
	struct ka_profile p[2];
	struct diff_row *rows = NULL;
	size_t n = 0;
	int err;

	*regressions = 0;
	if ((err = ka_profile_build(&p[0], a, NULL, NULL)))
		return err;
	if ((err = ka_profile_build(&p[1], b, NULL, NULL))) {
		ka_profile_free(&p[0]);
		return err;
	}
	rows = calloc(p[0].n_rows + p[1].n_rows + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	/* both profiles come sorted by nr: merge */
	for (size_t i = 0, j = 0; i < p[0].n_rows || j < p[1].n_rows;) {
		struct diff_row *r = &rows[n++];
		const struct ka_row *x = i < p[0].n_rows ? &p[0].rows[i] : NULL;
		const struct ka_row *y = j < p[1].n_rows ? &p[1].rows[j] : NULL;
		if (x && y && x->nr == y->nr) {
			i++, j++;
		} else if (x && (!y || x->nr < y->nr)) {
			i++, y = NULL;
		} else {
			j++, x = NULL;
		}
		const struct ka_row *any = x ? x : y;
		r->nr = any->nr;
		snprintf(r->name, sizeof(r->name), "%s", any->name);
		r->count[0] = x ? x->count : 0;
		r->time_ns[0] = x ? x->time_ns : 0;
		r->count[1] = y ? y->count : 0;
		r->time_ns[1] = y ? y->time_ns : 0;
		r->p_value = x && y ? mann_whitney_p(&x->hist, &y->hist) : 0;
	}
	speed = speed_factor(rows, n);
	struct diff_row total = { .nr = UINT64_MAX, .why = "" };
	snprintf(total.name, sizeof(total.name), "TOTAL");
	for (size_t i = 0; i <= n; i++) {
		struct diff_row *r = i < n ? &rows[i] : &total;
		if (i < n)
			for (int k = 0; k < 2; k++) {
				total.count[k] += r->count[k];
				total.time_ns[k] += r->time_ns[k];
			}
		r->d_count = pct((double)r->count[0], (double)r->count[1]);
		r->d_time = pct((double)r->time_ns[0], (double)r->time_ns[1]);
		r->d_avg = r->count[0] && r->count[1] ?
				   pct(avg(r->time_ns[0], r->count[0]),
				       avg(r->time_ns[1], r->count[1])) :
				   r->d_time;
		r->verdict = i < n ? verdict(r, &r->why) : 0;
		*regressions += i < n && r->verdict > 0;
	}
	qsort(rows, n, sizeof(*rows), by_change);
	size_t shown = o->top && o->top < n ? o->top : n;

	if (o->format == KA_FORMAT_JSON) {
		fprintf(out, "{\"a\":");
		ka_json_string(out, name_a);
		fprintf(out, ",\"b\":");
		ka_json_string(out, name_b);
		fprintf(out, ",\"rule_pct\":%.0f,\"rows\":[", RULE_PCT);
		for (size_t i = 0; i <= shown; i++) {
			const struct diff_row *r = i < shown ? &rows[i] : &total;
			if (i == shown)
				fprintf(out, "],\"total\":");
			else if (i)
				fputc(',', out);
			fprintf(out, "{\"name\":\"%s\",", r->name);
			if (i < shown)
				fprintf(out, "\"nr\":%" PRIu64 ",", r->nr);
			fprintf(out, "\"count_a\":%" PRIu64 ",\"count_b\":%" PRIu64
				",\"time_ns_a\":%" PRIu64 ",\"time_ns_b\":%" PRIu64
				",\"verdict\":\"%s\",\"why\":\"%s\"}", r->count[0], r->count[1],
				r->time_ns[0], r->time_ns[1],
				r->verdict > 0 ? "worse" : r->verdict < 0 ? "better" : "", r->why);
		}
		fprintf(out, ",\"speed_factor\":%.3f,\"regressions\":%zu}\n", speed,
			*regressions);
		goto out;
	}
	bool md = o->format == KA_FORMAT_MARKDOWN;
	/* the first column as wide as its longest label ("name (nr)") */
	int wl = 18;
	for (size_t i = 0; i < shown; i++) {
		int len = snprintf(NULL, 0, "%s (%" PRIu64 ")", rows[i].name, rows[i].nr);
		if (len > wl)
			wl = len;
	}
	if (md)
		fprintf(out, "| Syscall | Count A | Count B | Change | Time A (ms) | "
			"Time B (ms) | Change | Avg A (us) | Avg B (us) | Change | Verdict |\n"
			"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	else
		fprintf(out, "=== Syscall Diff ===\nA: %s\nB: %s\n%-*s %9s %9s %8s %11s %11s %8s %10s %10s %8s  %s\n",
			name_a, name_b, wl, "Syscall", "Count A", "Count B", "Change",
			"Time A(ms)", "Time B(ms)", "Change", "Avg A(us)", "Avg B(us)",
			"Change", "Verdict");
	for (size_t i = 0; i <= shown; i++) {
		const struct diff_row *r = i < shown ? &rows[i] : &total;
		char label[64], dc[16], dt[16], da[16];
		if (i < shown)
			snprintf(label, sizeof(label), "%s (%" PRIu64 ")", r->name, r->nr);
		else
			snprintf(label, sizeof(label), "TOTAL");
		fmt_pct(dc, sizeof(dc), r->d_count);
		fmt_pct(dt, sizeof(dt), r->d_time);
		fmt_pct(da, sizeof(da), r->d_avg);
		char v[48];
		snprintf(v, sizeof(v), "%s%s%s", r->verdict > 0 ? "worse" : r->verdict < 0 ? "better" : "",
			 *r->why ? ": " : "", r->why);
		double a0 = avg(r->time_ns[0], r->count[0]) / 1e3;
		double a1 = avg(r->time_ns[1], r->count[1]) / 1e3;
		if (md) {
			bool bold = r->verdict > 0;
			fprintf(out, "| %s | %" PRIu64 " | %" PRIu64 " | %s | %.3f | %.3f | %s%s%s | %.3f | %.3f | %s | %s%s%s |\n",
				label, r->count[0], r->count[1], dc,
				(double)r->time_ns[0] / 1e6, (double)r->time_ns[1] / 1e6,
				bold ? "**" : "", dt, bold ? "**" : "", a0, a1, da,
				bold ? "**worse**" : r->verdict < 0 ? "better" : "",
				*r->why ? ": " : "", r->why);
		} else {
			if (i == shown)
				for (int k = 0; k < wl + 96; k++)
					fputc(k == wl + 95 ? '\n' : '-', out);
			fprintf(out, "%-*s %9" PRIu64 " %9" PRIu64 " %8s %11.3f %11.3f %8s %10.3f %10.3f %8s  %s\n",
				wl, label, r->count[0], r->count[1], dc,
				(double)r->time_ns[0] / 1e6, (double)r->time_ns[1] / 1e6,
				dt, a0, a1, da, v);
		}
	}
	if (!md) {
		fprintf(out, "Run-wide per-call speed factor B/A: %.2f (latency verdicts "
			"are relative to it)\n", speed);
		fprintf(out, "Flagged: %zu worse. Rule: time %+.0f%% or more, with count "
			"%+.0f%% or more or average %+.0f%% or more beyond the speed factor "
			"(Mann-Whitney p <= 0.05); the mirror image is better\n=== End Diff ===\n",
			*regressions, RULE_PCT, RULE_PCT, SLOWER_PCT);
	}
out:
	free(rows);
	ka_profile_free(&p[0]);
	ka_profile_free(&p[1]);
	return err;
}
