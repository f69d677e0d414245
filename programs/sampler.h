/* SPDX-License-Identifier: MIT */
/*
 * How the benchmark programs take their values, pyperf's and Google
 * Benchmark's way inside one process. A metric is measured in batches of
 * operations: the batch size is calibrated in a first, discarded pass
 * (doubling until a batch lasts at least --min-time-ms, default 100), then
 * --warmups batches are discarded (default 1) and --samples batches
 * (default 5) each give one value, computed from the batch's mean time per
 * operation and printed as a NAME=VALUE line, one per value.
 * --iterations=N fixes the batch size instead. krunner runs each program
 * in several fresh processes (its rounds) and keeps every value.
 *
 * An operation may time several phases at once (a lock cycle: acquire,
 * conflict, replace, unlock): op() fills one elapsed time per metric.
 */
#ifndef KPROF_PROGRAMS_SAMPLER_H
#define KPROF_PROGRAMS_SAMPLER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SAMPLER_MAX_METRICS 8
#define SAMPLER_MAX_ITERATIONS (1L << 24)

struct sampler_args {
	int samples, warmups;
	int64_t min_ns;
	long iterations; /* 0: calibrate */
};

#define SAMPLER_DEFAULTS { .samples = 5, .warmups = 1, .min_ns = 100000000, .iterations = 0 }
#define SAMPLER_USAGE "[--samples=N] [--warmups=N] [--min-time-ms=N] [--iterations=N]"

static inline int64_t sampler_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 1: arg was one of the sampler's and is taken; 0: not one; -1: bad value. */
static inline int sampler_parse_arg(struct sampler_args *a, const char *arg)
{
	static const struct {
		const char *prefix;
		long min, max;
	} keys[] = { { "--samples=", 1, 1000 }, { "--warmups=", 0, 1000 },
		     { "--min-time-ms=", 0, 60000 }, { "--iterations=", 1, SAMPLER_MAX_ITERATIONS } };
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		size_t len = strlen(keys[k].prefix);
		if (strncmp(arg, keys[k].prefix, len))
			continue;
		char *end;
		long v = strtol(arg + len, &end, 10);
		if (end == arg + len || *end || v < keys[k].min || v > keys[k].max)
			return -1;
		if (k == 0)
			a->samples = (int)v;
		else if (k == 1)
			a->warmups = (int)v;
		else if (k == 2)
			a->min_ns = (int64_t)v * 1000000;
		else
			a->iterations = v;
		return 1;
	}
	return 0;
}

/* One operation: its elapsed ns per metric into ns[] (added to). 0 or -1. */
typedef int (*sampler_op)(void *arg, int64_t *ns);

struct sampler_metric {
	const char *name;
	/* the metric's value from the mean ns of one operation */
	double (*value)(double mean_ns, void *arg);
};

/* A batch of n operations: the summed ns per metric into sum[]. */
static inline int sampler_batch(long n, int n_metrics, sampler_op op, void *arg, int64_t *sum)
{
	memset(sum, 0, (size_t)n_metrics * sizeof(*sum));
	for (long i = 0; i < n; i++)
		if (op(arg, sum))
			return -1;
	return 0;
}

/* Prints the values of n_metrics metrics measured by op. 0, or -1 when an
 * operation failed (nothing more is printed then). */
static inline int sampler_run(const struct sampler_args *a, const struct sampler_metric *m,
			      int n_metrics, sampler_op op, void *arg)
{
	int64_t sum[SAMPLER_MAX_METRICS];
	long n = a->iterations;
	if (n_metrics > SAMPLER_MAX_METRICS)
		return -1;
	/* the calibration pass: discarded */
	for (long size = 1; !n; size *= 2) {
		int64_t total = 0;
		if (sampler_batch(size, n_metrics, op, arg, sum))
			return -1;
		for (int k = 0; k < n_metrics; k++)
			total += sum[k];
		if (total >= a->min_ns || size >= SAMPLER_MAX_ITERATIONS)
			n = size;
	}
	for (int w = 0; w < a->warmups; w++)
		if (sampler_batch(n, n_metrics, op, arg, sum))
			return -1;
	for (int s = 0; s < a->samples; s++) {
		if (sampler_batch(n, n_metrics, op, arg, sum))
			return -1;
		for (int k = 0; k < n_metrics; k++)
			printf("%s=%.6f\n", m[k].name, m[k].value((double)sum[k] / (double)n, arg));
	}
	fflush(stdout);
	return 0;
}

/* Values of the usual units from the mean ns of one operation. */
static inline double sampler_us(double mean_ns, void *arg)
{
	(void)arg;
	return mean_ns / 1e3;
}

static inline double sampler_ms(double mean_ns, void *arg)
{
	(void)arg;
	return mean_ns / 1e6;
}

#endif
