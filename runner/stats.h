/* SPDX-License-Identifier: MIT */
/*
 * Statistics over a metric's values: median, robust spread (MAD), a
 * bootstrap confidence interval of the median, outliers, and the
 * Mann–Whitney U test.
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

#endif
