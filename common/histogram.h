/* SPDX-License-Identifier: MIT */
/*
 * Latency histogram shared by every producer and reader: log-linear
 * buckets, 4 per power of two, 160 in all (docs/FORMAT.md). Header-only
 * so that the shim's hot path and the BPF program compute the same index.
 */
#ifndef KPROF_HISTOGRAM_H
#define KPROF_HISTOGRAM_H

/* The BPF side (bpf/kbpf_trace.bpf.c) gets these types from vmlinux.h. */
#ifndef __bpf__
#include <stdbool.h>
#include <stdint.h>
#endif

#define KP_HIST_BUCKETS 160
#define KP_HIST_MAX_LOG2 40

/* floor(log2(v)) for v > 0. */
static inline unsigned kp_log2_u64(uint64_t v)
{
#ifdef __bpf__
	/* clang 14 crashes lowering __builtin_clzll for the BPF target. */
	unsigned r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
#else
	return 63 - (unsigned)__builtin_clzll(v);
#endif
}

static inline unsigned kp_hist_bucket(uint64_t ns)
{
	if (ns < 4)
		return (unsigned)ns;
	if (ns >= (1ULL << KP_HIST_MAX_LOG2))
		return KP_HIST_BUCKETS - 1;
	unsigned e = kp_log2_u64(ns);
	return 4 * (e - 1) + (unsigned)((ns >> (e - 2)) & 3);
}

/* Smallest value that falls in bucket b. */
static inline uint64_t kp_hist_bucket_low(unsigned b)
{
	if (b < 4)
		return b;
	return (uint64_t)(4 + b % 4) << (b / 4 - 1);
}

/* One past the largest value of bucket b. */
static inline uint64_t kp_hist_bucket_high(unsigned b)
{
	if (b < 4)
		return b + 1;
	return (uint64_t)(5 + b % 4) << (b / 4 - 1);
}

struct kp_hist {
	uint64_t bucket[KP_HIST_BUCKETS];
};

/*
 * Value at quantile q (0..1) by linear interpolation inside the bucket
 * that holds it; 0 for an empty histogram. Clamped to [min, max] when
 * those are known (non-zero max).
 */
uint64_t kp_hist_quantile(const struct kp_hist *h, double q, uint64_t min_ns,
			  uint64_t max_ns);
/*
 * The bucket the quantile q falls in, as [*lo, *hi): what the histogram
 * knows of it, said as a range rather than a point (clamped to
 * [min_ns, max_ns] when they are known). false without data.
 */
bool kp_hist_quantile_range(const struct kp_hist *h, double q, uint64_t min_ns,
			    uint64_t max_ns, uint64_t *lo, uint64_t *hi);
void kp_hist_add(struct kp_hist *into, const struct kp_hist *from);

#endif
