/*
 * stats: median and the Mann–Whitney U test used by compare. Kept apart so
 * that the test of significance can be read (and checked) on its own.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double stats_median(const double *values, size_t n)
{
	if (n == 0)
		return NAN;
	double *sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return NAN;
	memcpy(sorted, values, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	double m = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
	return m;
}

double stats_min(const double *values, size_t n)
{
	double m = n ? values[0] : NAN;
	for (size_t i = 1; i < n; i++)
		if (values[i] < m)
			m = values[i];
	return m;
}

double stats_max(const double *values, size_t n)
{
	double m = n ? values[0] : NAN;
	for (size_t i = 1; i < n; i++)
		if (values[i] > m)
			m = values[i];
	return m;
}

struct ranked {
	double value;
	int from_a;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->value, &((const struct ranked *)b)->value);
}

double stats_mann_whitney_min_p(size_t m, size_t n)
{
	if (m == 0 || n == 0)
		return 1.0;
	double combinations = 1;
	for (size_t i = 1; i <= m; i++)
		combinations = combinations * (double)(n + i) / (double)i;
	double p = 2 / combinations;
	return p > 1 ? 1 : p;
}

/*
 * Doubled mid-ranks are integers, so the rank sum of a is an integer in
 * doubled units and its exact null distribution is a count of the subsets
 * of size m of the pooled doubled ranks with each sum: a knapsack count,
 * ways[k][s], over the N pooled values. Counts are doubles: C(60,30) ~ 1e17
 * is exact enough for a p-value.
 */
static double exact_p(const int *rank2, size_t total, size_t m, long observed2)
{
	long max_sum = 0;
	for (size_t i = 0; i < total; i++)
		max_sum += rank2[i];
	size_t width = (size_t)max_sum + 1;
	double *ways = calloc((m + 1) * width, sizeof(*ways));
	if (!ways)
		return NAN;
	ways[0] = 1;
	for (size_t i = 0; i < total; i++)
		for (size_t k = (i + 1 < m ? i + 1 : m); k >= 1; k--)
			for (long s = max_sum; s >= rank2[i]; s--)
				ways[k * width + s] += ways[(k - 1) * width + s - rank2[i]];
	/* E[2R] = m (N + 1); two-sided: as far or farther from it. */
	long expected2 = (long)(m * (total + 1));
	long distance = labs(observed2 - expected2);
	double extreme = 0, all = 0;
	for (long s = 0; s <= max_sum; s++) {
		double w = ways[m * width + s];
		all += w;
		if (labs(s - expected2) >= distance)
			extreme += w;
	}
	free(ways);
	return all > 0 ? extreme / all : NAN;
}

static double normal_p(double rank_sum_a, size_t m, size_t n, double tie_term)
{
	double N = (double)(m + n);
	double u = rank_sum_a - (double)m * (m + 1) / 2;
	double mean = (double)m * n / 2;
	double var = (double)m * n / 12 * ((N + 1) - tie_term / (N * (N - 1)));
	if (var <= 0)
		return 1.0;
	double z = (fabs(u - mean) - 0.5) / sqrt(var);	/* continuity correction */
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2));
}

double stats_mann_whitney_p(const double *a, size_t m, const double *b, size_t n)
{
	if (m == 0 || n == 0)
		return 1.0;
	size_t total = m + n;
	struct ranked *pool = malloc(total * sizeof(*pool));
	int *rank2 = malloc(total * sizeof(*rank2));
	double p = NAN;
	if (!pool || !rank2)
		goto out;
	for (size_t i = 0; i < m; i++)
		pool[i] = (struct ranked){ a[i], 1 };
	for (size_t i = 0; i < n; i++)
		pool[m + i] = (struct ranked){ b[i], 0 };
	qsort(pool, total, sizeof(*pool), cmp_ranked);

	long observed2 = 0;
	double tie_term = 0;
	for (size_t i = 0; i < total;) {
		size_t j = i;
		while (j + 1 < total && pool[j + 1].value == pool[i].value)
			j++;
		int mid2 = (int)(i + 1 + j + 1);	/* twice the mean of ranks i+1..j+1 */
		double t = (double)(j - i + 1);
		tie_term += t * t * t - t;
		for (size_t k = i; k <= j; k++) {
			rank2[k] = mid2;
			if (pool[k].from_a)
				observed2 += mid2;
		}
		i = j + 1;
	}
	if (total <= STATS_EXACT_MAX)
		p = exact_p(rank2, total, m, observed2);
	else
		p = normal_p(observed2 / 2.0, m, n, tie_term);
	if (p > 1)
		p = 1;
out:
	free(pool);
	free(rank2);
	return p;
}
