/* SPDX-License-Identifier: MIT */
/*
 * runner_stats: krunner's statistics (runner/stats.c) on generated
 * samples with known answers: the median, MAD and outliers of fixed
 * values; a bootstrap interval that holds the true median of a normal
 * sample in about 95% of 400 trials and narrows as values are added; a
 * noise figure (MAD / median) that does not grow with the number of
 * values; the Mann–Whitney test finding a known 5% shift with 30 vs
 * 30 values in at least 95% of trials and no shift in at most 8%; the t
 * distribution against table values; and the change over rounds: its
 * interval holding the truth in about 95% of simulated separate-run
 * pairs only when the between-run term is in it, the detectable change
 * found in about 80% of trials, and the three verdicts on known data.
 * Prints "ok: ..." lines; exits 1 at the first wrong answer.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int failures;

static void check(int ok, const char *what, double got)
{
	printf("%s: %s (%g)\n", ok ? "ok" : "FAIL", what, got);
	if (!ok)
		failures++;
}

static uint64_t rng = 88172645463325252ULL;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

/* Box-Muller */
static double normal(double mean, double sd)
{
	return mean + sd * sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static void fill(double *v, size_t n, double mean, double sd)
{
	for (size_t i = 0; i < n; i++)
		v[i] = normal(mean, sd);
}

/* A side of a separate run: n round medians around exp(level + shift),
 * shift the run's own level (sd run_sd), each round sd round_sd (logs). */
static void fill_run(double *v, size_t n, double level, double round_sd, double run_sd)
{
	double shift = normal(0, run_sd);
	for (size_t i = 0; i < n; i++)
		v[i] = exp(level + shift + normal(0, round_sd));
}

static void check_round_change(void)
{
	check(fabs(stats_t_quantile(0.975, 10) - 2.228139) < 1e-5, "t(0.975, 10) = 2.2281",
	      stats_t_quantile(0.975, 10));
	check(fabs(stats_t_quantile(0.975, 2) - 4.302653) < 1e-5, "t(0.975, 2) = 4.3027",
	      stats_t_quantile(0.975, 2));
	check(fabs(stats_t_quantile(0.8, 18) - 0.862049) < 1e-5, "t(0.8, 18) = 0.8620",
	      stats_t_quantile(0.8, 18));
	check(fabs(stats_t_quantile(0.975, HUGE_VAL) - 1.959964) < 1e-5, "t(0.975, inf) = 1.96",
	      stats_t_quantile(0.975, HUGE_VAL));
	check(fabs(stats_t_cdf(-2.228139, 10) - 0.025) < 1e-6, "P(T <= -2.2281; 10) = 0.025",
	      stats_t_cdf(-2.228139, 10));

	/* separate runs: each side's level moves by 3%, rounds by 5% */
	double a[10], b[10];
	struct stats_change c;
	int with_term = 0, without_term = 0;
	for (int t = 0; t < 1000; t++) {
		fill_run(a, 10, log(100), 0.05, 0.03);
		fill_run(b, 10, log(100), 0.05, 0.03);
		stats_round_change(a, 10, b, 10, 0.03, 0.05, &c);
		with_term += c.lo <= 1 && 1 <= c.hi;
		stats_round_change(a, 10, b, 10, 0, 0.05, &c);
		without_term += c.lo <= 1 && 1 <= c.hi;
	}
	check(with_term >= 930 && with_term <= 970,
	      "with the between-run term, 93-97% of 1000 A/A intervals hold no change",
	      with_term / 10.0);
	check(without_term < 800, "without it, under 80% do (the old fault)", without_term / 10.0);

	/* the detectable change: a true change of that size is found (the
	 * interval above 1) in about 80% of trials */
	int found = 0;
	fill_run(a, 10, log(100), 0.05, 0);
	fill_run(b, 10, log(100), 0.05, 0);
	stats_round_change(a, 10, b, 10, 0, 0.05, &c);
	double shift = log1p(c.detectable);
	for (int t = 0; t < 1000; t++) {
		fill_run(a, 10, log(100), 0.05, 0);
		fill_run(b, 10, log(100) + shift, 0.05, 0);
		stats_round_change(a, 10, b, 10, 0, 0.05, &c);
		found += c.lo > 1;
	}
	check(found >= 700 && found <= 900, "the detectable change found in 70-90% of 1000 trials",
	      found / 10.0);

	/* 22 metrics a comparison, as the micro suites have: with each
	 * metric's 95% interval some metric is a "regression" in many A/A
	 * comparisons; with the interval at alpha / 22 in at most 5% */
	int any_single = 0, any_family = 0;
	for (int t = 0; t < 300; t++) {
		bool single = false, in_family = false;
		for (int m = 0; m < 22; m++) {
			struct stats_change fam;
			fill_run(a, 10, log(100), 0.05, 0.03);
			fill_run(b, 10, log(100), 0.05, 0.03);
			stats_round_change(a, 10, b, 10, 0.03, 0.05, &c);
			stats_round_change(a, 10, b, 10, 0.03, 0.05 / 22, &fam);
			single |= stats_judge(&c, &c, 0.01, 0) == STATS_REGRESSION;
			in_family |= stats_judge(&c, &fam, 0.01, 0) == STATS_REGRESSION;
		}
		any_single += single;
		any_family += in_family;
	}
	check(any_single >= 60, "per-metric intervals: a regression in 20% or more of 300 A/A",
	      any_single / 3.0);
	check(any_family <= 15, "intervals at alpha / 22: a regression in at most 5% of 300 A/A",
	      any_family / 3.0);

	/* the verdicts on known data */
	const double before[] = { 100, 101, 99, 100, 102, 98, 100, 101, 99, 100 };
	const double slower[] = { 120, 121, 119, 120, 122, 118, 120, 121, 119, 120 };
	const double wild3a[] = { 60, 100, 140 }, wild3b[] = { 140, 60, 100 };
	stats_round_change(before, 10, slower, 10, 0.01, 0.05, &c);
	check(stats_judge(&c, &c, 0.05, 0) == STATS_REGRESSION, "+20% latency: regression", c.ratio);
	check(stats_judge(&c, &c, 0.05, 1) == STATS_NO_REGRESSION, "+20% throughput: no regression",
	      c.ratio);
	check(stats_judge(&c, &c, 0.25, 0) == STATS_NO_REGRESSION,
	      "+20% latency, threshold 25%: no regression", c.hi);
	stats_round_change(before, 10, before, 10, 0.01, 0.05, &c);
	check(stats_judge(&c, &c, 0.05, 0) == STATS_NO_REGRESSION && c.ratio == 1,
	      "the same rounds: no regression", c.hi);
	stats_round_change(wild3a, 3, wild3b, 3, 0, 0.05, &c);
	check(stats_judge(&c, &c, 0.05, 0) == STATS_NO_VERDICT, "3 wild rounds: no verdict",
	      c.detectable);
	const double zeros[] = { 0, 0, 0 }, zero_then_page[] = { 0, 0, 4096 };
	check(stats_round_change(zeros, 3, zeros, 3, 0.01, 0.05, &c) == 0 &&
		      stats_judge(&c, &c, 0.05, 0) == STATS_NO_REGRESSION,
	      "0 bytes in every round of both sides: no regression", c.ratio);
	check(stats_round_change(zeros, 3, zero_then_page, 3, 0.01, 0.05, &c) == -EDOM &&
		      stats_judge(&c, &c, 0.05, 0) == STATS_NO_VERDICT,
	      "0 against 0, 0, 4096 bytes: no ratio, no verdict", c.ratio);
	check(stats_round_change(before, 1, slower, 10, 0, 0.05, &c) == -EDOM &&
		      stats_judge(&c, &c, 0.05, 0) == STATS_NO_VERDICT,
	      "1 round: no change computed, no verdict", 1);
}

int main(void)
{
	const double fixed[] = { 10, 11, 9, 10, 12, 10, 8, 10, 100 };
	size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	check(stats_median(fixed, nf) == 10, "median of fixed values is 10", stats_median(fixed, nf));
	/* |x - 10|: 0 1 1 0 2 0 2 0 90 -> median 1 -> 1.4826 */
	check(fabs(stats_mad(fixed, nf) - 1.4826) < 1e-9, "MAD of fixed values is 1.4826",
	      stats_mad(fixed, nf));
	check(stats_outliers(fixed, nf) == 1, "one outlier (100) among fixed values",
	      (double)stats_outliers(fixed, nf));

	/* coverage of the median's 95% interval */
	double v[400], w[400];
	int covered = 0;
	for (int t = 0; t < 400; t++) {
		fill(v, 41, 100, 5);
		double lo, hi;
		stats_median_ci(v, 41, 0.95, &lo, &hi);
		covered += lo <= 100 && 100 <= hi;
	}
	check(covered >= 360 && covered <= 396, "95% interval holds the true median in 90-99% of 400 trials",
	      covered / 4.0);

	/* the interval narrows with more values; MAD/median does not grow */
	struct stats_summary s10, s400;
	fill(v, 10, 100, 5);
	stats_summarize(v, 10, &s10);
	fill(v, 400, 100, 5);
	stats_summarize(v, 400, &s400);
	check(s400.noise < s10.noise / 2, "interval of 400 values under half that of 10", s400.noise);
	check(s400.dispersion > 0.04 && s400.dispersion < 0.06,
	      "MAD / median of N(100, 5) near 0.05 with 400 values", s400.dispersion);
	check(s10.dispersion < 0.12, "MAD / median with 10 values of the same order", s10.dispersion);

	/* the test: a 5% shift with sd 2% found, no shift not */
	int found = 0, false_alarms = 0;
	for (int t = 0; t < 200; t++) {
		fill(v, 30, 100, 2);
		fill(w, 30, 105, 2);
		found += stats_mann_whitney_p(v, 30, w, 30) <= 0.05;
		fill(w, 30, 100, 2);
		false_alarms += stats_mann_whitney_p(v, 30, w, 30) <= 0.05;
	}
	check(found >= 190, "5% shift significant in at least 95% of 200 trials", found / 2.0);
	check(false_alarms <= 16, "no shift significant in at most 8% of 200 trials",
	      false_alarms / 2.0);
	/* 3 vs 3 can never reach p <= 0.05; 30 vs 30 can */
	check(stats_mann_whitney_min_p(3, 3) > 0.05, "3 vs 3: smallest p above 0.05",
	      stats_mann_whitney_min_p(3, 3));
	check(stats_mann_whitney_min_p(30, 30) < 1e-6, "30 vs 30: smallest p tiny",
	      stats_mann_whitney_min_p(30, 30));

	/* effects said in the metric's direction; a 0 side as a difference */
	char text[64];
	stats_effect_text(10, 20, 0, "ms", "unprofiled", "profiled", text, sizeof(text));
	check(strcmp(text, "2.00x slower") == 0, "10 -> 20 ms (lower better): 2.00x slower", 2);
	stats_effect_text(10, 20, 1, "MB/s", "unprofiled", "profiled", text, sizeof(text));
	check(strcmp(text, "2.00x faster") == 0, "10 -> 20 MB/s (higher better): 2.00x faster", 2);
	stats_effect_text(0, 8192, 0, "bytes", "unprofiled", "profiled", text, sizeof(text));
	check(strcmp(text, "+8192 bytes (unprofiled: 0)") == 0, text, 8192);
	stats_effect_text(4096, 0, 0, "bytes", "unprofiled", "profiled", text, sizeof(text));
	check(strcmp(text, "-4096 bytes (profiled: 0)") == 0, text, -4096);
	stats_effect_text(0, 0, 0, "bytes", "unprofiled", "profiled", text, sizeof(text));
	check(strcmp(text, "same") == 0, "0 -> 0: same", 0);
	check_round_change();
	return failures ? 1 : 0;
}
