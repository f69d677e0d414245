/* SPDX-License-Identifier: MIT */
/*
 * kernel_build_report: report.md and stats.json of a kernel-build
 * experiment (see kernel_build_report.h).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "kernel_build_report.h"
#include "stats.h"

void kernel_build_summarise(struct kernel_build_stats *st)
{
	double samples[KERNEL_BUILD_MAX_WARM];
	long long hits = 0, misses = 0;
	for (int i = 0; i < st->n_warm; i++) {
		samples[i] = st->warm[i].seconds;
		hits += st->warm[i].hits;
		misses += st->warm[i].misses;
	}
	st->warm_min_s = stats_min(samples, (size_t)st->n_warm);
	st->warm_median_s = stats_median(samples, (size_t)st->n_warm);
	st->warm_max_s = stats_max(samples, (size_t)st->n_warm);
	st->warm_cold_ratio = st->cold.seconds > 0 ? st->warm_median_s / st->cold.seconds : 0;
	st->hit_rate = hits + misses ? (double)hits / (double)(hits + misses) : 0;
	st->hit_rate_ok = st->hit_rate >= st->min_hit_rate;
	st->ratio_ok = st->warm_cold_ratio <= st->max_warm_ratio;
}

static json_t *build_json(const struct cache_build *b)
{
	return json_pack("{s:f, s:I, s:I, s:I, s:I, s:f, s:s}", "seconds", b->seconds, "hits",
			 (json_int_t)b->hits, "direct_hits", (json_int_t)b->direct_hits,
			 "preprocessed_hits", (json_int_t)b->preprocessed_hits, "misses",
			 (json_int_t)b->misses, "hit_rate", b->hit_rate, "log", b->log);
}

static int write_json(const struct kernel_build_stats *st, const char *path)
{
	json_t *warm = json_array();
	for (int i = 0; i < st->n_warm; i++)
		json_array_append_new(warm, build_json(&st->warm[i]));
	json_t *j = json_pack(
		"{s:s, s:s, s:s?, s:s, s:s, s:s, s:i, s:o, s:o, s:f, s:f, s:f, s:f, s:f, s:I, s:I,"
		" s:o, s:{s:f, s:b, s:f, s:b}}",
		"mode", st->mode, "cache", st->cache, "cache_version", st->cache_version, "kconfig",
		st->kconfig, "target", st->target, "source", st->source, "jobs", st->jobs, "cold",
		build_json(&st->cold), "warm", warm, "warm_min_s", st->warm_min_s, "warm_median_s",
		st->warm_median_s, "warm_max_s", st->warm_max_s, "warm_cold_ratio",
		st->warm_cold_ratio, "hit_rate", st->hit_rate, "cache_entries",
		(json_int_t)st->cache_entries, "cache_size_kib", (json_int_t)st->cache_size_kib,
		"relocate", st->relocated ? build_json(&st->relocate) : json_null(), "thresholds",
		"min_hit_rate", st->min_hit_rate, "hit_rate_ok", st->hit_rate_ok, "max_warm_ratio",
		st->max_warm_ratio, "warm_ratio_ok", st->ratio_ok);
	if (!j)
		return -ENOMEM;
	int err = json_dump_file(j, path, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) ? -EIO : 0;
	json_decref(j);
	return err;
}

static void build_row(FILE *f, const char *name, const struct cache_build *b)
{
	fprintf(f, "| %s | %.2f | %lld | %lld | %lld | %.4f | logs/%s |\n", name, b->seconds, b->hits,
		b->direct_hits, b->misses, b->hit_rate, b->log);
}

static int write_markdown(const struct kernel_build_stats *st, const char *path)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "# kernel-build: %s mode\n\n", st->mode);
	fprintf(f, "%s (%s), `make %s` then `make -j%d%s%s` with CC=\"%s gcc\", from %s.\n\n",
		st->cache, st->cache_version ? st->cache_version : "version unknown", st->kconfig,
		st->jobs, st->target[0] ? " " : "", st->target, st->cache, st->source);
	fprintf(f, "| build | seconds | hits | direct hits | misses | hit rate | log |\n");
	fprintf(f, "|---|---|---|---|---|---|---|\n");
	build_row(f, "cold", &st->cold);
	for (int i = 0; i < st->n_warm; i++) {
		char name[32];
		snprintf(name, sizeof(name), "warm %d", i + 1);
		build_row(f, name, &st->warm[i]);
	}
	if (st->relocated)
		build_row(f, "relocated", &st->relocate);
	fprintf(f, "\n| summary | value |\n|---|---|\n");
	fprintf(f, "| cold seconds | %.2f |\n", st->cold.seconds);
	fprintf(f, "| warm seconds min / median / max | %.2f / %.2f / %.2f |\n", st->warm_min_s,
		st->warm_median_s, st->warm_max_s);
	fprintf(f, "| warm/cold ratio | %.4f |\n", st->warm_cold_ratio);
	fprintf(f, "| warm hit rate | %.4f |\n", st->hit_rate);
	fprintf(f, "| cache entries | %lld |\n", st->cache_entries);
	fprintf(f, "| cache size KiB | %lld |\n", st->cache_size_kib);
	if (st->relocated)
		fprintf(f, "| cross-tree hit rate (relocated) | %.4f |\n", st->relocate.hit_rate);
	fprintf(f, "\nThresholds: hit rate >= %.2f: %s; warm/cold ratio <= %.2f: %s.\n",
		st->min_hit_rate, st->hit_rate_ok ? "met" : "**MISSED**", st->max_warm_ratio,
		st->ratio_ok ? "met" : "**MISSED**");
	fprintf(f, "\nHit rate = hits / (hits + misses) of the cache's own counters for that build "
		"alone (zeroed before it); calls the cache cannot serve (links, preprocessing "
		"only) are neither. stats.json holds the same numbers.\n");
	return fclose(f) ? -EIO : 0;
}

int kernel_build_write_report(const struct kernel_build_stats *st, const char *dir)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/stats.json", dir);
	int err = write_json(st, path);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/report.md", dir);
	return write_markdown(st, path);
}

void kernel_build_print_comparison(const struct kernel_build_stats *st, int n, void *out)
{
	FILE *f = out;
	fprintf(f, "| mode | cold s | warm median s | warm/cold | hit rate | cache entries | cache KiB |\n");
	fprintf(f, "|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "| %s | %.2f | %.2f | %.4f | %.4f | %lld | %lld |\n", st[i].mode,
			st[i].cold.seconds, st[i].warm_median_s, st[i].warm_cold_ratio,
			st[i].hit_rate, st[i].cache_entries, st[i].cache_size_kib);
}
