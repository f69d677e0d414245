/* SPDX-License-Identifier: MIT */
/* Histogram arithmetic used by readers (quantiles, merging). */
#include "histogram.h"

uint64_t kp_hist_quantile(const struct kp_hist *h, double q, uint64_t min_ns,
			  uint64_t max_ns)
{
	uint64_t total = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		total += h->bucket[b];
	if (total == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* rank of the wanted call, 1-based: the ceil(q * total)-th call */
	double want = q * (double)total;
	uint64_t rank = (uint64_t)want;
	if ((double)rank < want || rank == 0)
		rank++;
	uint64_t seen = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++) {
		uint64_t n = h->bucket[b];
		if (n == 0)
			continue;
		if (seen + n >= rank) {
			uint64_t low = kp_hist_bucket_low(b);
			uint64_t high = kp_hist_bucket_high(b);
			double frac = (double)(rank - seen) / (double)n;
			uint64_t v = low + (uint64_t)(frac * (double)(high - low - 1));
			if (max_ns && v > max_ns)
				v = max_ns;
			if (v < min_ns)
				v = min_ns;
			return v;
		}
		seen += n;
	}
	return max_ns;
}

void kp_hist_add(struct kp_hist *into, const struct kp_hist *from)
{
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		into->bucket[b] += from->bucket[b];
}
