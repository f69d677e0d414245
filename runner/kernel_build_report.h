/* SPDX-License-Identifier: MIT */
/*
 * kernel_build_report: the numbers of one kernel-build experiment (one
 * cache mode: a cold build, warm builds, optionally a relocated build) and
 * the files written from them — report.md for people, stats.json for
 * scripts, both from the same struct so that they cannot disagree.
 */
#ifndef KRUNNER_KERNEL_BUILD_REPORT_H
#define KRUNNER_KERNEL_BUILD_REPORT_H

#include <stdbool.h>

#define KERNEL_BUILD_MAX_WARM 100

/* One build through the cache, with the cache's counters for it alone. */
struct cache_build {
	double seconds;
	long long hits, direct_hits, preprocessed_hits, misses;
	double hit_rate;	/* hits / (hits + misses); 0 when nothing was cacheable */
	char log[64];		/* file name under logs/ */
};

struct kernel_build_stats {
	const char *mode;	/* direct, preprocessed */
	const char *cache;	/* ccache */
	const char *kconfig;
	const char *target;	/* "" = the default goal (everything) */
	const char *source;	/* the unpacked tree the copies came from */
	const char *cache_version;
	int jobs;
	struct cache_build cold;
	struct cache_build warm[KERNEL_BUILD_MAX_WARM];
	int n_warm;
	bool relocated;
	struct cache_build relocate;
	double warm_min_s, warm_median_s, warm_max_s, warm_cold_ratio;
	double hit_rate;	/* over every warm build */
	long long cache_entries, cache_size_kib;
	double min_hit_rate, max_warm_ratio;
	bool hit_rate_ok, ratio_ok;
};

/* Fills the summary fields (min/median/max, ratio, hit rate, verdicts). */
void kernel_build_summarise(struct kernel_build_stats *st);
/* Writes dir/report.md and dir/stats.json. 0 or -errno. */
int kernel_build_write_report(const struct kernel_build_stats *st, const char *dir);
/* The side-by-side table of several modes, markdown, on f. */
void kernel_build_print_comparison(const struct kernel_build_stats *st, int n, void *f);

#endif
