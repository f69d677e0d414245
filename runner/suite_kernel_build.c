/* SPDX-License-Identifier: MIT */
/*
 * kernel-build: a Linux kernel build through a compiler cache, cold vs
 * warm. The source is Debian's linux-source tarball, unpacked once into a
 * cache outside the checkout (reused while its stamp matches the tarball)
 * and hard-linked (cp -al) into the scratch directory per cache mode. Per
 * mode: `make <kconfig>`, one cold build with an empty isolated cache, then
 * --warm-runs builds after `make clean`, optionally a warm build of a
 * second copy at another path (--relocate, through the cache's base_dir).
 * Each mode writes report.md, stats.json, the kernel.config built and the
 * build logs to
 * <out>/<stamp>-kernel-build-<mode>[-round-N]/; a missed threshold fails
 * the round after the report is written.
 *
 * The cache is run as CC="<cache> gcc"; its counters are read with
 * `<cache> --zero-stats` before and `<cache> --print-stats` after each
 * build (ccache's machine-readable `key<TAB>value` lines). A cache named
 * with --cache must answer both the same way — see README.md.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_process.h"
#include "artifacts.h"
#include "kernel_build_report.h"
#include "suite.h"

#define BUILD_TIMEOUT_MS (4 * 3600 * 1000)
#define STEP_TIMEOUT_MS (30 * 60 * 1000)
#define TARBALL_GLOB "/usr/src/linux-source-*.tar.xz"

/* The first cache mode's figures (--cache-mode's, direct with both), then
 * the relocated build's and the second mode's: every figure of the
 * default settings is a metric, so compare tracks each. */
static const struct metric_def metrics[] = {
	{ "cold_s", "s", LOWER_IS_BETTER, "build with an empty cache" },
	{ "warm_median_s", "s", LOWER_IS_BETTER, "median of the warm builds (after make clean)" },
	{ "warm_min_s", "s", LOWER_IS_BETTER, "fastest warm build" },
	{ "warm_max_s", "s", LOWER_IS_BETTER, "slowest warm build" },
	{ "warm_cold_ratio", "ratio", LOWER_IS_BETTER, "warm median / cold" },
	{ "hit_rate", "ratio", HIGHER_IS_BETTER, "cache hits / (hits + misses) over the warm builds" },
	{ "cache_entries", "files", LOWER_IS_BETTER, "files in the cache after the builds" },
	{ "cache_size_kib", "KiB", LOWER_IS_BETTER, "cache size after the builds" },
#define FIRST_OPTIONAL 8
	{ "relocated_s", "s", LOWER_IS_BETTER,
	  "warm build of a second copy at another path (--relocate=1)" },
	{ "cross_tree_hit_rate", "ratio", HIGHER_IS_BETTER,
	  "hit rate of that build: the cache shared across trees (--relocate=1)" },
	{ "preprocessed_cold_s", "s", LOWER_IS_BETTER,
	  "cold build, preprocessed mode (--cache-mode=both)" },
	{ "preprocessed_warm_median_s", "s", LOWER_IS_BETTER,
	  "median warm build, preprocessed mode (--cache-mode=both)" },
	{ "preprocessed_warm_cold_ratio", "ratio", LOWER_IS_BETTER,
	  "warm median / cold, preprocessed mode (--cache-mode=both)" },
	{ "preprocessed_hit_rate", "ratio", HIGHER_IS_BETTER,
	  "warm hit rate, preprocessed mode (--cache-mode=both)" },
	{ "preprocessed_cache_size_kib", "KiB", LOWER_IS_BETTER,
	  "cache size, preprocessed mode (--cache-mode=both)" },
	{ "preprocessed_cross_tree_hit_rate", "ratio", HIGHER_IS_BETTER,
	  "relocated hit rate, preprocessed mode (--cache-mode=both --relocate=1)" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_TOOL, "make", "apt-get install make", false },
	{ ARTIFACT_TOOL, "gcc", "apt-get install gcc", false },
	{ ARTIFACT_TOOL, "tar", "apt-get install tar", false },
	{ ARTIFACT_TOOL, "xz", "apt-get install xz-utils", false },
	{ ARTIFACT_TOOL, "cp", "apt-get install coreutils", false },
	{ ARTIFACT_TOOL, "bc", "apt-get install bc", false },
	{ ARTIFACT_TOOL, "flex", "apt-get install flex", false },
	{ ARTIFACT_TOOL, "bison", "apt-get install bison", false },
};

static const struct suite_option options[] = {
	{ "kconfig", "tinyconfig", "kernel configuration target: tinyconfig or defconfig" },
	{ "cache", "ccache", "compiler-cache wrapper, run as CC=\"CACHE gcc\"" },
	{ "warm-runs", "3", "warm builds after the cold one" },
	{ "cache-mode", "both", "direct, preprocessed or both (each with its own cache)" },
	{ "min-hit-rate", "0.9", "fail when the warm hit rate is lower" },
	{ "max-warm-ratio", "0.5", "fail when warm median / cold is higher" },
	{ "relocate", "1", "also build warm from a second copy at another path (base_dir)" },
	{ "target", "", "make goals instead of the whole build, e.g. 'kernel/' (CI)" },
	{ "source-cache", "/var/tmp/kprof-linux-src", "where the kernel source is unpacked once" },
};

static char tarball[PATH_MAX];
static char source[PATH_MAX];		/* the unpacked tree */
static char cache_path[PATH_MAX];	/* the cache wrapper */
static char *cache_version;

static int step(struct suite_ctx *ctx, const char *const *argv, const char *const *env,
		const char *cwd, const char *log, int timeout_ms, double *seconds, bool profiled)
{
	struct app_command cmd = { .argv = argv, .env = env, .cwd = cwd, .log_path = log,
				   .quiet = !log, .timeout_ms = timeout_ms, .profiled = profiled };
	int status;
	double ms = 0;
	char text[96];
	int err = app_run(ctx, &cmd, &status, &ms, NULL);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: kernel-build: %s %s failed (%s)%s%s\n", argv[0],
			argv[1] ? argv[1] : "", app_status_text(status, text, sizeof(text)),
			log ? "; see " : "", log ? log : "");
		if (log)
			app_print_log_tail(log, 15);
		err = -ECHILD;
	}
	if (seconds)
		*seconds = ms / 1000;
	return err;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Unpacks the tarball once into --source-cache; the stamp (tarball path,
 * size, mtime) says the unpack is complete and current. */
static int prepare_source(struct suite_ctx *ctx)
{
	glob_t g;
	if (glob(TARBALL_GLOB, 0, NULL, &g) != 0) {
		fprintf(stderr, "krunner: kernel-build: no kernel source (%s): "
			"apt-get install linux-source\n", TARBALL_GLOB);
		return -ENOENT;
	}
	snprintf(tarball, sizeof(tarball), "%s", g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
	struct stat st;
	if (stat(tarball, &st) < 0)
		return -errno;
	const char *base = strrchr(tarball, '/') + 1;
	char name[NAME_MAX], stamp[PATH_MAX + 64], want[PATH_MAX + 128];
	snprintf(name, sizeof(name), "%.*s", (int)(strlen(base) - strlen(".tar.xz")), base);
	const char *root = suite_option(ctx, "source-cache");
	if (snprintf(source, sizeof(source), "%s/%s", root, name) >= (int)sizeof(source))
		return -ENAMETOOLONG;
	snprintf(stamp, sizeof(stamp), "%s.stamp", source);
	snprintf(want, sizeof(want), "%s %lld %lld\n", tarball, (long long)st.st_size,
		 (long long)st.st_mtime);
	suite_note(ctx, "kernel_source", tarball);
	int err = suite_add_input(ctx, "linux-source tarball", tarball);
	if (err)
		return err;
	char *have = app_read_file(stamp);
	bool current = have && strcmp(have, want) == 0 && exists(source);
	free(have);
	if (current)
		return 0;

	fprintf(stderr, "krunner: kernel-build: unpacking %s into %s (once)\n", tarball, root);
	const char *mkdir_argv[] = { "mkdir", "-p", root, NULL };
	err = step(ctx, mkdir_argv, NULL, NULL, NULL, STEP_TIMEOUT_MS, NULL, false);
	if (err)
		return err;
	/* A tree without a current stamp is incomplete or of another tarball. */
	unlink(stamp);
	app_remove_tree(source);
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s/unpack.XXXXXX", root);
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "krunner: kernel-build: cannot create %s: %s\n", tmp, strerror(errno));
		return -errno;
	}
	const char *tar_argv[] = { "tar", "-xJf", tarball, "-C", tmp, NULL };
	char unpacked[PATH_MAX + NAME_MAX];
	snprintf(unpacked, sizeof(unpacked), "%s/%s", tmp, name);
	err = step(ctx, tar_argv, NULL, NULL, NULL, STEP_TIMEOUT_MS, NULL, false);
	if (!err && !exists(unpacked)) {
		fprintf(stderr, "krunner: kernel-build: %s has no %s/\n", tarball, name);
		err = -ENOENT;
	}
	if (!err) {
		/* When another krunner renamed its unpack into place meanwhile,
		 * that one is used. */
		if (rename(unpacked, source) == 0)
			err = app_write_file(stamp, want);
		else if (errno != ENOTEMPTY && errno != EEXIST)
			err = -errno;
	}
	app_remove_tree(tmp);
	for (int waited = 0; !err && waited < 600; waited++) {
		have = app_read_file(stamp);
		current = have && strcmp(have, want) == 0;
		free(have);
		if (current)
			break;
		if (suite_interrupted())
			return -EINTR;
		usleep(100000);
	}
	if (!err && !current) {
		fprintf(stderr, "krunner: kernel-build: %s is there but its stamp %s never "
			"matched; remove both\n", source, stamp);
		err = -EBUSY;
	}
	return err;
}

static long long stat_value(const char *stats, const char *key)
{
	size_t len = strlen(key);
	for (const char *line = stats; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, key, len) == 0 && line[len] == '\t')
			return atoll(line + len + 1);
	}
	return 0;
}

struct mode_env {
	char dir[PATH_MAX - 256];	/* scratch/<mode> */
	char logs[PATH_MAX + 8];
	char cache_dir[PATH_MAX + 16], config[PATH_MAX + 32], base_dir[PATH_MAX + 16];
	const char *env[12];
};

/* `<cache> --print-stats` (counters since the last --zero-stats). */
static int cache_stats(struct suite_ctx *ctx, struct mode_env *m, char **out)
{
	const char *argv[] = { cache_path, "--print-stats", NULL };
	struct app_command cmd = { .argv = argv, .env = m->env, .timeout_ms = 60000 };
	int status;
	double ms;
	int err = app_run(ctx, &cmd, &status, &ms, out);
	if (!err && (!app_exited_ok(status) || !strstr(*out, "cache_miss\t"))) {
		fprintf(stderr, "krunner: kernel-build: `%s --print-stats` printed no cache_miss "
			"counter; a --cache must print ccache's key<TAB>value statistics\n",
			cache_path);
		err = -EPROTO;
	}
	return err;
}

static int zero_stats(struct suite_ctx *ctx, struct mode_env *m)
{
	const char *argv[] = { cache_path, "--zero-stats", NULL };
	return step(ctx, argv, m->env, NULL, NULL, 60000, NULL, false);
}

/* One timed build in tree with the cache's counters for it alone. */
static int cache_build(struct suite_ctx *ctx, struct mode_env *m, const char *tree,
		       const char *log_name, struct cache_build *b)
{
	char jobs[32], cc[PATH_MAX + 8], log[PATH_MAX + 80];
	snprintf(jobs, sizeof(jobs), "-j%ld", sysconf(_SC_NPROCESSORS_ONLN));
	snprintf(cc, sizeof(cc), "CC=%s gcc", cache_path);
	snprintf(log, sizeof(log), "%s/%s", m->logs, log_name);
	snprintf(b->log, sizeof(b->log), "%s", log_name);
	const char *argv[64] = { "make", jobs, cc };
	int n = 3;
	char *targets = strdup(suite_option(ctx, "target"));
	if (!targets)
		return -ENOMEM;
	for (char *save = NULL, *t = strtok_r(targets, " ", &save); t && n < 62;
	     t = strtok_r(NULL, " ", &save))
		argv[n++] = t;
	argv[n] = NULL;
	int err = zero_stats(ctx, m);
	if (!err)
		err = step(ctx, argv, m->env, tree, log, BUILD_TIMEOUT_MS, &b->seconds, true);
	free(targets);
	char *stats = NULL;
	if (!err)
		err = cache_stats(ctx, m, &stats);
	if (err)
		return err;
	b->direct_hits = stat_value(stats, "direct_cache_hit");
	b->preprocessed_hits = stat_value(stats, "preprocessed_cache_hit");
	b->hits = b->direct_hits + b->preprocessed_hits + stat_value(stats, "cache_hit");
	b->misses = stat_value(stats, "cache_miss");
	b->hit_rate = b->hits + b->misses ? (double)b->hits / (double)(b->hits + b->misses) : 0;
	free(stats);
	fprintf(stderr, "krunner: kernel-build: %s: %.1f s, %lld hits, %lld misses\n", log_name,
		b->seconds, b->hits, b->misses);
	return 0;
}

/* A hard-linked copy of the source at dir/name, configured. */
static int make_tree(struct suite_ctx *ctx, struct mode_env *m, const char *name,
		     char *tree, size_t len)
{
	if (snprintf(tree, len, "%s/%s", m->dir, name) >= (int)len)
		return -ENAMETOOLONG;
	const char *link_argv[] = { "cp", "-al", source, tree, NULL };
	const char *copy_argv[] = { "cp", "-a", source, tree, NULL };
	if (step(ctx, link_argv, NULL, NULL, NULL, STEP_TIMEOUT_MS, NULL, false) != 0) {
		/* Another file system: a real copy. */
		app_remove_tree(tree);
		int err = step(ctx, copy_argv, NULL, NULL, NULL, STEP_TIMEOUT_MS, NULL, false);
		if (err)
			return err;
	}
	char log[PATH_MAX + 64];
	snprintf(log, sizeof(log), "%s/%s-config.log", m->logs, name);
	const char *config_argv[] = { "make", suite_option(ctx, "kconfig"), NULL };
	return step(ctx, config_argv, m->env, tree, log, STEP_TIMEOUT_MS, NULL, false);
}

static int run_mode(struct suite_ctx *ctx, const char *mode, struct kernel_build_stats *st,
		    const char *report_dir)
{
	struct mode_env m;
	char tree[PATH_MAX], log[PATH_MAX + 64];
	int err;
	snprintf(m.dir, sizeof(m.dir), "%s/%s", suite_scratch_dir(ctx), mode);
	snprintf(m.logs, sizeof(m.logs), "%s/logs", report_dir);
	snprintf(m.cache_dir, sizeof(m.cache_dir), "CCACHE_DIR=%s/cache", m.dir);
	snprintf(m.config, sizeof(m.config), "CCACHE_CONFIGPATH=%s/ccache.conf", m.dir);
	snprintf(m.base_dir, sizeof(m.base_dir), "CCACHE_BASEDIR=%s", m.dir);
	const char *env[] = { m.cache_dir, m.config, m.base_dir,
			      strcmp(mode, "direct") == 0 ? "CCACHE_DIRECT=1" : "CCACHE_NODIRECT=1",
			      "CCACHE_MAXSIZE=20G", "KBUILD_BUILD_TIMESTAMP=2024-01-01",
			      "KBUILD_BUILD_USER=kprof", "KBUILD_BUILD_HOST=kprof", NULL };
	memcpy(m.env, env, sizeof(env));
	if (mkdir(m.dir, 0755) < 0 || mkdir(m.logs, 0755) < 0) {
		fprintf(stderr, "krunner: kernel-build: cannot create %s: %s\n", m.dir, strerror(errno));
		return -errno;
	}
	char conf_path[PATH_MAX];
	snprintf(conf_path, sizeof(conf_path), "%s/ccache.conf", m.dir);
	err = app_write_file(conf_path, "# isolated by krunner kernel-build\n");
	if (!err)
		err = make_tree(ctx, &m, "tree", tree, sizeof(tree));
	if (!err) {
		/* the configuration built, kept beside the report */
		char from[PATH_MAX + 16], to[PATH_MAX + 16];
		snprintf(from, sizeof(from), "%s/.config", tree);
		snprintf(to, sizeof(to), "%s/kernel.config", report_dir);
		char *config = app_read_file(from);
		err = config ? app_write_file(to, config) : -ENOENT;
		free(config);
		if (err)
			fprintf(stderr, "krunner: kernel-build: cannot keep %s as %s: %s\n", from, to,
				strerror(-err));
	}
	if (!err)
		err = cache_build(ctx, &m, tree, "cold.log", &st->cold);
	for (int i = 0; !err && i < st->n_warm; i++) {
		char name[32];
		snprintf(log, sizeof(log), "%s/warm-%d-clean.log", m.logs, i + 1);
		const char *clean_argv[] = { "make", "clean", NULL };
		err = step(ctx, clean_argv, m.env, tree, log, STEP_TIMEOUT_MS, NULL, false);
		snprintf(name, sizeof(name), "warm-%d.log", i + 1);
		if (!err)
			err = cache_build(ctx, &m, tree, name, &st->warm[i]);
	}
	if (!err && st->relocated) {
		char moved[PATH_MAX];
		err = make_tree(ctx, &m, "relocated", moved, sizeof(moved));
		if (!err)
			err = cache_build(ctx, &m, moved, "relocated.log", &st->relocate);
		app_remove_tree(moved);
	}
	char *stats = NULL;
	if (!err && (err = cache_stats(ctx, &m, &stats)) == 0) {
		st->cache_entries = stat_value(stats, "files_in_cache");
		st->cache_size_kib = stat_value(stats, "cache_size_kibibyte");
	}
	free(stats);
	app_remove_tree(m.dir);
	return err;
}

static int parse_number(struct suite_ctx *ctx, const char *name, double min, double max,
			double *out)
{
	char *end;
	*out = strtod(suite_option(ctx, name), &end);
	if (*end || end == suite_option(ctx, name) || !(*out >= min && *out <= max)) {
		fprintf(stderr, "krunner: kernel-build: --%s wants a number from %g to %g, not '%s'\n",
			name, min, max, suite_option(ctx, name));
		return -EINVAL;
	}
	return 0;
}

/* gcc is a driver: the compiler proper, whose build decides the object
 * code and the time, is cc1; the cache wrapper is fingerprinted as well. */
static int note_compiler_proper(struct suite_ctx *ctx)
{
	const char *argv[] = { suite_artifact_path(ctx, "gcc"), "-print-prog-name=cc1", NULL };
	struct app_command cmd = { .argv = argv, .quiet = true, .timeout_ms = 10000 };
	int status;
	double ms;
	char *out = NULL;
	int err = app_run(ctx, &cmd, &status, &ms, &out);
	if (!err && (!app_exited_ok(status) || !out || out[0] != '/')) {
		fprintf(stderr, "krunner: kernel-build: gcc -print-prog-name=cc1 named no file\n");
		err = -ENOENT;
	}
	if (!err) {
		out[strcspn(out, "\n")] = '\0';
		err = suite_add_input(ctx, "cc1", out);
	}
	free(out);
	return err ? err : suite_add_input(ctx, "cache", cache_path);
}

static int setup_kernel_build(struct suite_ctx *ctx)
{
	double v;
	const char *mode = suite_option(ctx, "cache-mode");
	const char *kconfig = suite_option(ctx, "kconfig");
	if (parse_number(ctx, "warm-runs", 1, KERNEL_BUILD_MAX_WARM, &v) ||
	    parse_number(ctx, "min-hit-rate", 0, 1, &v) ||
	    parse_number(ctx, "max-warm-ratio", 0, 1000, &v) ||
	    parse_number(ctx, "relocate", 0, 1, &v))
		return -EINVAL;
	if (strcmp(mode, "direct") && strcmp(mode, "preprocessed") && strcmp(mode, "both")) {
		fprintf(stderr, "krunner: kernel-build: --cache-mode is direct, preprocessed or "
			"both, not '%s'\n", mode);
		return -EINVAL;
	}
	if (strcmp(kconfig, "tinyconfig") && strcmp(kconfig, "defconfig")) {
		fprintf(stderr, "krunner: kernel-build: --kconfig is tinyconfig or defconfig, "
			"not '%s'\n", kconfig);
		return -EINVAL;
	}
	const char *cache = suite_option(ctx, "cache");
	char hint[128];
	snprintf(hint, sizeof(hint), "%s", strcmp(cache, "ccache") == 0 ? "apt-get install ccache"
									 : "install it");
	/* The cache is an option, so it is resolved here rather than as a
	 * declared artifact; still before anything is timed. */
	if (find_executable(cache, cache_path, sizeof(cache_path)) != 0) {
		fprintf(stderr, "krunner: kernel-build: %s not found: %s\n", cache, hint);
		return -ENOENT;
	}
	const char *version_argv[] = { cache_path, "--version", NULL };
	struct app_command cmd = { .argv = version_argv, .quiet = true, .timeout_ms = 10000 };
	int status;
	double ms;
	char *out = NULL;
	if (app_run(ctx, &cmd, &status, &ms, &out) == 0 && app_exited_ok(status)) {
		out[strcspn(out, "\n")] = '\0';
		cache_version = out;
		suite_note(ctx, "cache", out);
	} else {
		free(out);
	}
	int err = note_compiler_proper(ctx);
	return err ? err : prepare_source(ctx);
}

struct named_value {
	const char *name;
	double value;
};

static int put_values(struct suite_ctx *ctx, const struct named_value *v, size_t n)
{
	int err = 0;
	for (size_t i = 0; i < n && !err; i++)
		err = suite_metric(ctx, v[i].name, v[i].value);
	return err;
}

/* The first mode's figures under the plain names, the second's (always
 * preprocessed: "both" runs direct first) under preprocessed_. */
static int put_metrics(struct suite_ctx *ctx, const struct kernel_build_stats *st, int n_modes)
{
	const struct kernel_build_stats *s = &st[0];
	const struct named_value first[] = {
		{ "cold_s", s->cold.seconds }, { "warm_median_s", s->warm_median_s },
		{ "warm_min_s", s->warm_min_s }, { "warm_max_s", s->warm_max_s },
		{ "warm_cold_ratio", s->warm_cold_ratio }, { "hit_rate", s->hit_rate },
		{ "cache_entries", (double)s->cache_entries },
		{ "cache_size_kib", (double)s->cache_size_kib },
	};
	const struct named_value relocated[] = {
		{ "relocated_s", s->relocate.seconds },
		{ "cross_tree_hit_rate", s->relocate.hit_rate },
	};
	int err = put_values(ctx, first, ARRAY_SIZE(first));
	if (!err && s->relocated)
		err = put_values(ctx, relocated, ARRAY_SIZE(relocated));
	if (err || n_modes < 2)
		return err;
	const struct kernel_build_stats *p = &st[1];
	const struct named_value second[] = {
		{ "preprocessed_cold_s", p->cold.seconds },
		{ "preprocessed_warm_median_s", p->warm_median_s },
		{ "preprocessed_warm_cold_ratio", p->warm_cold_ratio },
		{ "preprocessed_hit_rate", p->hit_rate },
		{ "preprocessed_cache_size_kib", (double)p->cache_size_kib },
	};
	err = put_values(ctx, second, ARRAY_SIZE(second));
	if (!err && p->relocated)
		err = suite_metric(ctx, "preprocessed_cross_tree_hit_rate", p->relocate.hit_rate);
	return err;
}

static int round_kernel_build(struct suite_ctx *ctx)
{
	const char *mode = suite_option(ctx, "cache-mode");
	const char *modes[2] = { mode, NULL };
	int n_modes = 1, err = 0;
	if (strcmp(mode, "both") == 0) {
		modes[0] = "direct";
		modes[1] = "preprocessed";
		n_modes = 2;
	}
	static struct kernel_build_stats st[2];
	bool failed = false;
	for (int i = 0; i < n_modes && !err; i++) {
		char name[128], dir[PATH_MAX];
		int round = suite_round_number(ctx);
		const char *plain = suite_round_unprofiled(ctx) ? "-unprofiled" : "";
		if (round == 1)
			snprintf(name, sizeof(name), "kernel-build-%s%s", modes[i], plain);
		else
			snprintf(name, sizeof(name), "kernel-build-%s%s-round-%d", modes[i], plain,
				 round);
		err = suite_result_dir(ctx, name, dir, sizeof(dir));
		if (err) {
			fprintf(stderr, "krunner: kernel-build: cannot create %s: %s\n", dir,
				strerror(-err));
			break;
		}
		struct kernel_build_stats *s = &st[i];
		memset(s, 0, sizeof(*s));
		s->mode = modes[i];
		s->cache = suite_option(ctx, "cache");
		s->cache_version = cache_version;
		s->kconfig = suite_option(ctx, "kconfig");
		s->target = suite_option(ctx, "target");
		s->source = source;
		s->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
		s->n_warm = atoi(suite_option(ctx, "warm-runs"));
		s->relocated = strcmp(suite_option(ctx, "relocate"), "1") == 0;
		s->min_hit_rate = strtod(suite_option(ctx, "min-hit-rate"), NULL);
		s->max_warm_ratio = strtod(suite_option(ctx, "max-warm-ratio"), NULL);
		err = run_mode(ctx, modes[i], s, dir);
		if (err)
			break;
		kernel_build_summarise(s);
		err = kernel_build_write_report(s, dir);
		if (err) {
			fprintf(stderr, "krunner: kernel-build: cannot write the report in %s: %s\n",
				dir, strerror(-err));
			break;
		}
		fprintf(stderr, "krunner: kernel-build: %s mode: report in %s/report.md\n", modes[i],
			dir);
		suite_note(ctx, name, dir);
		if (!s->hit_rate_ok)
			fprintf(stderr, "krunner: kernel-build: %s mode: hit rate %.4f is below "
				"--min-hit-rate=%g\n", modes[i], s->hit_rate, s->min_hit_rate);
		if (!s->ratio_ok)
			fprintf(stderr, "krunner: kernel-build: %s mode: warm/cold ratio %.4f is above "
				"--max-warm-ratio=%g\n", modes[i], s->warm_cold_ratio,
				s->max_warm_ratio);
		failed |= !s->hit_rate_ok || !s->ratio_ok;
	}
	if (err)
		return err;
	if (n_modes == 2)
		kernel_build_print_comparison(st, n_modes, stderr);
	if (failed)
		return -ERANGE;
	return put_metrics(ctx, st, n_modes);
}

static void teardown_kernel_build(struct suite_ctx *ctx)
{
	(void)ctx;
	free(cache_version);
	cache_version = NULL;
}

static const struct suite kernel_build = {
	.name = "kernel-build",
	.description = "Linux kernel build through a compiler cache: cold vs warm, hit rate",
	SUITE_TABLES(metrics, artifacts, options),
	.first_optional_metric = FIRST_OPTIONAL,
	.no_launcher = "a build is make starting thousands of compilers through the cache; "
		       "compare two caches with --cache=PATH in two runs instead",
	.setup = setup_kernel_build,
	.round = round_kernel_build,
	.teardown = teardown_kernel_build,
};

SUITE_REGISTER(kernel_build)
