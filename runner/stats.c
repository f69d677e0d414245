/* SPDX-License-Identifier: MIT */
/*
 * stats: the figures of a metric's values (median, MAD, bootstrap interval
 * of the median, outliers) and the Mann–Whitney U test used by compare.
 * Kept apart so that they can be read, and checked on generated samples
 * (tests/runner_stats.c), on their own.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

double stats_mean(const double *values, size_t n)
{
	if (n == 0)
		return NAN;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += values[i];
	return sum / (double)n;
}

double stats_sd(const double *values, size_t n)
{
	if (n < 2)
		return NAN;
	double mean = stats_mean(values, n), sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (values[i] - mean) * (values[i] - mean);
	return sqrt(sum / (double)(n - 1));
}

/* Median of |x - center|, unscaled. */
static double raw_mad(const double *values, size_t n, double center)
{
	double *dev = malloc(n * sizeof(*dev));
	if (!dev)
		return NAN;
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(values[i] - center);
	double m = stats_median(dev, n);
	free(dev);
	return m;
}

double stats_mad(const double *values, size_t n)
{
	if (n == 0)
		return NAN;
	return 1.4826 * raw_mad(values, n, stats_median(values, n));
}

size_t stats_outliers(const double *values, size_t n)
{
	if (n < 3)
		return 0;
	double median = stats_median(values, n);
	double mad = raw_mad(values, n, median);
	if (!(mad > 0))
		return 0;
	size_t count = 0;
	for (size_t i = 0; i < n; i++)
		if (0.6745 * fabs(values[i] - median) / mad > 3.5)
			count++;
	return count;
}

/* xorshift64*: a small generator with a fixed seed (reproducible intervals). */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

int stats_median_ci(const double *values, size_t n, double level, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (n == 0)
		return 0;
	if (n == 1) {
		*lo = *hi = values[0];
		return 0;
	}
	double *medians = malloc(STATS_BOOTSTRAP * sizeof(*medians));
	double *resample = malloc(n * sizeof(*resample));
	if (!medians || !resample) {
		free(medians);
		free(resample);
		return -ENOMEM;
	}
	uint64_t state = 0x9E3779B97F4A7C15ULL;
	for (size_t b = 0; b < STATS_BOOTSTRAP; b++) {
		for (size_t i = 0; i < n; i++)
			resample[i] = values[next_random(&state) % n];
		qsort(resample, n, sizeof(*resample), cmp_double);
		medians[b] = n % 2 ? resample[n / 2]
				   : (resample[n / 2 - 1] + resample[n / 2]) / 2;
	}
	qsort(medians, STATS_BOOTSTRAP, sizeof(*medians), cmp_double);
	double tail = (1 - level) / 2;
	size_t i_lo = (size_t)floor(tail * (STATS_BOOTSTRAP - 1));
	size_t i_hi = (size_t)ceil((1 - tail) * (STATS_BOOTSTRAP - 1));
	*lo = medians[i_lo];
	*hi = medians[i_hi];
	free(medians);
	free(resample);
	return 0;
}

int stats_summarize(const double *values, size_t n, struct stats_summary *s)
{
	*s = (struct stats_summary){ .n = n };
	s->median = stats_median(values, n);
	s->mad = stats_mad(values, n);
	s->mean = stats_mean(values, n);
	s->sd = stats_sd(values, n);
	s->min = stats_min(values, n);
	s->max = stats_max(values, n);
	s->outliers = stats_outliers(values, n);
	int err = stats_median_ci(values, n, 0.95, &s->ci_lo, &s->ci_hi);
	if (err)
		return err;
	double scale = fabs(s->median);
	s->noise = scale > 0 ? (s->ci_hi - s->ci_lo) / 2 / scale : 0;
	s->dispersion = scale > 0 ? s->mad / scale : 0;
	return 0;
}

double stats_noise(const double *values, size_t n)
{
	double lo, hi, median = fabs(stats_median(values, n));
	if (n < 2 || !(median > 0) || stats_median_ci(values, n, 0.95, &lo, &hi))
		return 0;
	return (hi - lo) / 2 / median;
}

double stats_slowdown(double before, double after, int higher_is_better)
{
	double num = higher_is_better ? before : after;
	double den = higher_is_better ? after : before;
	if (num == 0 && den == 0)
		return 1; /* nothing either way: the same */
	return den > 0 && num >= 0 ? num / den : NAN;
}

void stats_slowdown_text(double slowdown, char *buf, size_t len)
{
	if (!isfinite(slowdown) || slowdown <= 0)
		snprintf(buf, len, "n/a");
	else if (fabs(slowdown - 1) < 0.005)
		snprintf(buf, len, "same");
	else if (slowdown > 1)
		snprintf(buf, len, "%.2fx slower", slowdown);
	else
		snprintf(buf, len, "%.2fx faster", 1 / slowdown);
}

void stats_effect_text(double before, double after, int higher_is_better, const char *unit,
		       const char *before_name, const char *after_name, char *buf, size_t len)
{
	double slowdown = stats_slowdown(before, after, higher_is_better);
	if ((isfinite(slowdown) && slowdown > 0) || !isfinite(before) || !isfinite(after))
		stats_slowdown_text(slowdown, buf, len);
	else
		snprintf(buf, len, "%+.6g %s (%s: 0)", after - before, unit,
			 before == 0 ? before_name : after_name);
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

/* The continued fraction of the regularized incomplete beta function
 * (modified Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	d = 1 / (fabs(d) < tiny ? tiny : d);
	double f = d;
	for (int m = 1; m <= 300; m++) {
		for (int odd = 0; odd < 2; odd++) {
			double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
					 : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
			d = 1 + num * d;
			d = 1 / (fabs(d) < tiny ? tiny : d);
			c = 1 + num / c;
			if (fabs(c) < tiny)
				c = tiny;
			f *= c * d;
			if (odd && fabs(c * d - 1) < 1e-15)
				return f;
		}
	}
	return f;
}

/* I_x(a, b) */
static double incomplete_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_fraction(a, b, x) / a;
	return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(df) || df > 1e7)
		return 0.5 * erfc(-t / sqrt(2));
	double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	double lo = -1, hi = 1;
	while (stats_t_cdf(lo, df) > p)
		lo *= 2;
	while (stats_t_cdf(hi, df) < p)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * (1 + fabs(lo)); i++) {
		double mid = (lo + hi) / 2;
		if (stats_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double stats_log_mean(const double *values, size_t n)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(values[i] > 0))
			return NAN;
		sum += log(values[i]);
	}
	return n ? sum / (double)n : NAN;
}

double stats_log_sd(const double *values, size_t n)
{
	double mean = stats_log_mean(values, n), sum = 0;
	if (n < 2 || isnan(mean))
		return NAN;
	for (size_t i = 0; i < n; i++)
		sum += (log(values[i]) - mean) * (log(values[i]) - mean);
	return sqrt(sum / (double)(n - 1));
}

int stats_round_change(const double *before, size_t n_before, const double *after,
		       size_t n_after, double run_sd, double alpha, struct stats_change *c)
{
	*c = (struct stats_change){ .n_before = n_before, .n_after = n_after, .ratio = NAN,
				    .lo = NAN, .hi = NAN, .p = NAN, .df = NAN,
				    .detectable = NAN, .se = NAN };
	if (n_before < 2 || n_after < 2)
		return -EDOM;
	/* every round of both sides the same value (a count, often 0): no
	 * change, whether or not a logarithm exists */
	double first = before[0];
	bool constant = true;
	for (size_t i = 0; i < n_before + n_after && constant; i++)
		constant = (i < n_before ? before[i] : after[i - n_before]) == first;
	if (constant) {
		c->ratio = c->lo = c->hi = c->p = 1;
		c->df = HUGE_VAL;
		c->se = c->detectable = 0;
		return 0;
	}
	double sd_b = stats_log_sd(before, n_before), sd_a = stats_log_sd(after, n_after);
	if (isnan(sd_b) || isnan(sd_a))
		return -EDOM;
	double var_b = sd_b * sd_b / (double)n_before, var_a = sd_a * sd_a / (double)n_after;
	double var_run = 2 * run_sd * run_sd;
	double var = var_b + var_a + var_run;
	double d = stats_log_mean(after, n_after) - stats_log_mean(before, n_before);
	c->ratio = exp(d);
	if (!(var > 0)) { /* every round alike on both sides: exact */
		c->lo = c->hi = c->ratio;
		c->p = d == 0 ? 1 : 0;
		c->df = HUGE_VAL;
		c->se = c->detectable = 0;
		return 0;
	}
	/* Welch–Satterthwaite over the two estimated terms; the run term is
	 * taken as known, which only adds degrees of freedom */
	double denom = (var_b > 0 ? var_b * var_b / (double)(n_before - 1) : 0) +
		       (var_a > 0 ? var_a * var_a / (double)(n_after - 1) : 0);
	c->df = denom > 0 ? var * var / denom : HUGE_VAL;
	c->se = sqrt(var);
	double t_crit = stats_t_quantile(1 - alpha / 2, c->df);
	c->lo = exp(d - t_crit * c->se);
	c->hi = exp(d + t_crit * c->se);
	c->p = 2 * stats_t_cdf(-fabs(d) / c->se, c->df);
	c->detectable = exp((t_crit + stats_t_quantile(STATS_POWER, c->df)) * c->se) - 1;
	return 0;
}

enum stats_verdict stats_judge(const struct stats_change *c, const struct stats_change *family,
			       double threshold, int higher_is_better)
{
	if (isnan(c->ratio) || isnan(c->lo) || isnan(c->hi) || isnan(family->lo) ||
	    isnan(family->hi))
		return STATS_NO_VERDICT;
	if (higher_is_better) {
		if (c->ratio < 1 - threshold && family->hi < 1)
			return STATS_REGRESSION;
		return c->lo > 1 - threshold ? STATS_NO_REGRESSION : STATS_NO_VERDICT;
	}
	if (c->ratio > 1 + threshold && family->lo > 1)
		return STATS_REGRESSION;
	return c->hi < 1 + threshold ? STATS_NO_REGRESSION : STATS_NO_VERDICT;
}

const char *stats_verdict_name(enum stats_verdict v)
{
	switch (v) {
	case STATS_NO_REGRESSION:
		return "no regression";
	case STATS_REGRESSION:
		return "regression";
	default:
		return "no verdict";
	}
}
