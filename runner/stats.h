/* SPDX-License-Identifier: MIT */
/*
 * Statistics over a metric's values: median, robust spread (MAD), a
 * bootstrap confidence interval of the median, outliers, the Mann–Whitney
 * U test, and the change between two sides over their rounds (one value
 * per process) with its interval and verdict.
 */
#ifndef KRUNNER_STATS_H
#define KRUNNER_STATS_H

#include <stddef.h>

double stats_median(const double *values, size_t n);
double stats_min(const double *values, size_t n);
double stats_max(const double *values, size_t n);
double stats_mean(const double *values, size_t n);
/* Sample standard deviation (n - 1); NAN below 2 values. */
double stats_sd(const double *values, size_t n);

/* Median absolute deviation from the median, times 1.4826 (so that it
 * estimates a normal distribution's sigma). */
double stats_mad(const double *values, size_t n);

/*
 * Values far from the others: modified z-score 0.6745 |x - median| / MAD
 * above 3.5 (Iglewicz and Hoaglin). 0 when the MAD is 0.
 */
size_t stats_outliers(const double *values, size_t n);

/*
 * A percentile bootstrap confidence interval (level 0.95: 95%) of the
 * median: STATS_BOOTSTRAP resamples with replacement, drawn from a fixed
 * seed so that the same values always give the same interval. 0 or
 * -ENOMEM; with one value the interval is that value.
 */
#define STATS_BOOTSTRAP 2000
int stats_median_ci(const double *values, size_t n, double level, double *lo, double *hi);

/* Everything a result says of one metric's values. */
struct stats_summary {
	size_t n;
	double median, mad, mean, sd, min, max;
	double ci_lo, ci_hi;	/* 95% interval of the median */
	double noise;		/* relative half-width of that interval */
	double dispersion;	/* MAD / median: does not grow with n */
	size_t outliers;
};
int stats_summarize(const double *values, size_t n, struct stats_summary *s);
/* Half the width of the median's 95% interval over the median (0 when the
 * median is 0, or with fewer than 2 values). */
double stats_noise(const double *values, size_t n);

/* How many times slower `after` is than `before` (below 1: faster), for a
 * metric where higher or lower is better; NAN when it cannot be told. */
double stats_slowdown(double before, double after, int higher_is_better);
/* "2.10x slower", "1.05x faster", "same" into buf. */
void stats_slowdown_text(double slowdown, char *buf, size_t len);
/* The same said of two medians; where no ratio exists (a 0 on one side, as
 * with retained memory) the difference in the metric's unit instead, naming
 * the side that was 0: "+8192 bytes (unprofiled: 0)". */
void stats_effect_text(double before, double after, int higher_is_better, const char *unit,
		       const char *before_name, const char *after_name, char *buf, size_t len);

/*
 * Two-sided p-value of the Mann–Whitney U test (Wilcoxon rank-sum) that
 * samples a and b come from the same distribution. Exact: the permutation
 * distribution of the rank sum, ties given mid-ranks, for up to
 * STATS_EXACT_MAX samples in all; beyond that the normal approximation with
 * the tie correction. 1.0 when either side is empty.
 */
#define STATS_EXACT_MAX 60
double stats_mann_whitney_p(const double *a, size_t m, const double *b, size_t n);

/* The smallest p the exact test can give for m vs n samples without ties:
 * 2 / C(m+n, m). */
double stats_mann_whitney_min_p(size_t m, size_t n);

/* Student's t distribution: P(T <= t) with df degrees of freedom (df > 0,
 * not necessarily an integer), and its inverse for 0 < p < 1. */
double stats_t_cdf(double t, double df);
double stats_t_quantile(double p, double df);

/*
 * The change from before to after, each side given as its rounds' medians
 * (a round is a fresh process: the independent unit; values inside one
 * share its luck). Computed on the logarithms: the change is the ratio of
 * the sides' geometric means of round medians, its interval a Welch t
 * interval whose variance is s_b^2/n_b + s_a^2/n_a + 2 run_sd^2, where
 * run_sd is the standard deviation (of the log) of a whole run's level
 * beyond what its rounds show: the between-run term of two separate runs
 * (0 when the sides ran interleaved in one run). The extra term is taken
 * as known (no degrees of freedom of its own).
 */
struct stats_change {
	size_t n_before, n_after;	/* rounds */
	double ratio;			/* after / before */
	double lo, hi;			/* its (1 - alpha) interval, as ratios */
	double p;			/* two-sided, of "no change" */
	double df;			/* Welch–Satterthwaite, or HUGE_VAL */
	/* the smallest change (relative, either way) this comparison
	 * finds with 80% power at alpha: (t_{1-alpha/2} + t_{0.8}) * se */
	double detectable;
	double se;			/* of the log ratio */
};
#define STATS_POWER 0.8
/* 0; -EDOM when a side has fewer than 2 rounds or a round median that is
 * not above 0 (no logarithm: the figures are NAN and no verdict can be
 * given) - unless every round of both sides has the same value (a count,
 * often 0): then the change is exactly none. */
int stats_round_change(const double *before, size_t n_before, const double *after,
		       size_t n_after, double run_sd, double alpha, struct stats_change *c);

enum stats_verdict {
	STATS_NO_REGRESSION,	/* the interval excludes a worse change of threshold */
	STATS_REGRESSION,	/* worse beyond threshold, and worse with confidence */
	STATS_NO_VERDICT,	/* the data cannot tell which */
};
/*
 * With threshold as a fraction (0.05): a regression when the change is
 * the wrong way beyond the threshold (after/before above 1 + threshold
 * for a lower-is-better metric, below 1 - threshold for a higher-is-better
 * one) and family's whole interval is on the wrong side of 1 (family: the
 * same change at the alpha of a family of metrics, alpha / metrics, so
 * that one of many metrics is not a regression by chance); no regression
 * when c's interval has its worse end within the threshold; else no
 * verdict. A change that could not be computed (stats_round_change
 * failed) is no verdict.
 */
enum stats_verdict stats_judge(const struct stats_change *c, const struct stats_change *family,
			       double threshold, int higher_is_better);
const char *stats_verdict_name(enum stats_verdict v);

/* The standard deviation of the logs of values (all > 0), NAN below 2 or
 * with a value not above 0. */
double stats_log_sd(const double *values, size_t n);
/* The mean of the logs of values, NAN when one is not above 0. */
double stats_log_mean(const double *values, size_t n);

#endif
