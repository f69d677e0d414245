/* SPDX-License-Identifier: MIT */
/* Histogram arithmetic used by readers (quantiles, merging). */
#include "histogram.h"

/*
 * The bucket that holds the quantile q's call, the ceil(q * total)-th
 * (1-based: *rank), with *before calls in the buckets below it. false
 * without data.
 */
static bool quantile_bucket(const struct kp_hist *h, double q, unsigned *bucket,
			    uint64_t *rank, uint64_t *before)
{
	uint64_t total = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		total += h->bucket[b];
	if (total == 0)
		return false;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	double want = q * (double)total;
	*rank = (uint64_t)want;
	if ((double)*rank < want || *rank == 0)
		(*rank)++;
	uint64_t seen = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++) {
		uint64_t n = h->bucket[b];
		if (n && seen + n >= *rank) {
			*bucket = b;
			*before = seen;
			return true;
		}
		seen += n;
	}
	return false; /* not reached: rank <= total */
}

uint64_t kp_hist_quantile(const struct kp_hist *h, double q, uint64_t min_ns,
			  uint64_t max_ns)
{
	unsigned b;
	uint64_t rank, seen;
	if (!quantile_bucket(h, q, &b, &rank, &seen))
		return 0;
	uint64_t low = kp_hist_bucket_low(b);
	uint64_t high = kp_hist_bucket_high(b);
	double frac = (double)(rank - seen) / (double)h->bucket[b];
	uint64_t v = low + (uint64_t)(frac * (double)(high - low - 1));
	if (max_ns && v > max_ns)
		v = max_ns;
	if (v < min_ns)
		v = min_ns;
	return v;
}

bool kp_hist_quantile_range(const struct kp_hist *h, double q, uint64_t min_ns,
			    uint64_t max_ns, uint64_t *lo, uint64_t *hi)
{
	unsigned b;
	uint64_t rank, seen;
	if (!quantile_bucket(h, q, &b, &rank, &seen))
		return false;
	*lo = kp_hist_bucket_low(b);
	*hi = kp_hist_bucket_high(b);
	if (*lo < min_ns)
		*lo = min_ns;
	if (max_ns && *hi > max_ns + 1)
		*hi = max_ns + 1;
	if (*hi < *lo)
		*hi = *lo;
	return true;
}

void kp_hist_add(struct kp_hist *into, const struct kp_hist *from)
{
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		into->bucket[b] += from->bucket[b];
}
