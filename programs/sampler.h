/* SPDX-License-Identifier: MIT */
/*
 * How the benchmark programs take their values, pyperf's and Google
 * Benchmark's way inside one process. A metric is measured in batches of
 * operations: the batch size is calibrated in a first, discarded pass
 * (doubling until a batch lasts at least --min-time-ms), then --warmups
 * batches are discarded and --samples batches each give one value,
 * computed from the batch's mean time per operation and printed as a
 * NAME=VALUE line, one per value. --iterations=N fixes the batch size
 * instead. krunner runs each program in several fresh processes (its
 * rounds) and keeps every value.
 *
 * A program measures several groups of metrics (a group: one operation,
 * which may time several phases at once, as a lock cycle times acquire,
 * conflict, replace and unlock: op() fills one elapsed time per metric).
 * Their sample batches are taken in turn, group after group, not one
 * group's back to back: a slow spell of the machine (one to a few hundred
 * milliseconds, from outside a virtual machine) then touches one or two
 * values of every metric instead of all values of one, and the round's
 * median leaves them out (docs/KRUNNER.md).
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

/* The metrics one operation measures. */
struct sampler_group {
	const struct sampler_metric *metrics;
	int n_metrics;
	sampler_op op;
	void *arg;
	/* optional, around every batch of the group, outside its timing: 0 or -1 */
	int (*enter)(void *arg);
	int (*leave)(void *arg);
	long n; /* the batch size: set by sampler_run_groups */
};

/* One batch of group g, between its enter and leave. */
static inline int sampler_group_batch(struct sampler_group *g, long n, int64_t *sum)
{
	if (g->enter && g->enter(g->arg))
		return -1;
	int err = sampler_batch(n, g->n_metrics, g->op, g->arg, sum);
	if (g->leave && g->leave(g->arg))
		err = -1;
	return err;
}

/* The batch size of g: --iterations, else calibrated (discarded). */
static inline int sampler_calibrate(const struct sampler_args *a, struct sampler_group *g)
{
	int64_t sum[SAMPLER_MAX_METRICS];
	g->n = a->iterations;
	for (long size = 1; !g->n; size *= 2) {
		int64_t total = 0;
		if (sampler_group_batch(g, size, sum))
			return -1;
		for (int k = 0; k < g->n_metrics; k++)
			total += sum[k];
		if (total >= a->min_ns || size >= SAMPLER_MAX_ITERATIONS)
			g->n = size;
	}
	return 0;
}

/* Prints the values of every group's metrics, the sample batches of the
 * groups taken in turn. 0, or -1 when an operation failed (*failed: the
 * group; nothing more is printed then). */
static inline int sampler_run_groups(const struct sampler_args *a, struct sampler_group *groups,
				     int n_groups, int *failed)
{
	int64_t sum[SAMPLER_MAX_METRICS];
	for (int g = 0; g < n_groups; g++) {
		*failed = g;
		if (groups[g].n_metrics > SAMPLER_MAX_METRICS || sampler_calibrate(a, &groups[g]))
			return -1;
		for (int w = 0; w < a->warmups; w++)
			if (sampler_group_batch(&groups[g], groups[g].n, sum))
				return -1;
	}
	for (int s = 0; s < a->samples; s++) {
		for (int g = 0; g < n_groups; g++) {
			struct sampler_group *grp = &groups[g];
			*failed = g;
			if (sampler_group_batch(grp, grp->n, sum))
				return -1;
			for (int k = 0; k < grp->n_metrics; k++)
				printf("%s=%.6f\n", grp->metrics[k].name,
				       grp->metrics[k].value((double)sum[k] / (double)grp->n, grp->arg));
		}
	}
	fflush(stdout);
	return 0;
}

/* One group alone: 0, or -1 when an operation failed. */
static inline int sampler_run(const struct sampler_args *a, const struct sampler_metric *m,
			      int n_metrics, sampler_op op, void *arg)
{
	struct sampler_group g = { m, n_metrics, op, arg, NULL, NULL, 0 };
	int failed;
	return sampler_run_groups(a, &g, 1, &failed);
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
