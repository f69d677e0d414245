/* Statistics over round samples: median, spread, Mann–Whitney U test. */
#ifndef KRUNNER_STATS_H
#define KRUNNER_STATS_H

#include <stddef.h>

double stats_median(const double *values, size_t n);
double stats_min(const double *values, size_t n);
double stats_max(const double *values, size_t n);

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
