/* SPDX-License-Identifier: MIT */
/*
 * command: `krunner run -- CMD ARGS`, hyperfine for any command. Each round
 * is one timed run of the command, a fresh process, from fork to exit, with
 * the user and system CPU time its process tree used: --runs=N is N rounds,
 * --warmup=N as many discarded ones. --prepare runs before every run (not
 * timed), --setup once before the first, --cleanup once after the last,
 * also after a failure or Ctrl-C. A parameter scan (-P/-L) makes one
 * benchmark per value, each its own suite "command[VAR=value]", with {VAR}
 * replaced in the command and the three hooks. --parse-metrics adds every
 * key=value line the command prints as a metric, unit and direction from
 * the name's suffix. The command's own output is discarded otherwise, and
 * a run that fails fails the suite, as hyperfine does. The executable is
 * an artifact like any program (path, size, SHA-256); setup notes the
 * Debian package that owns it without running the command (the result's
 * git is the directory's it ran in).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app_process.h"
#include "artifacts.h"
#include "exec.h"
#include "run.h"
#include "suite.h"

#define OWN_METRICS 3
/* Metrics a command may print with --parse-metrics. */
#define MAX_PARSED 64
#define MAX_ARGS 256
#define DPKG_TIMEOUT_MS 10000

static const struct metric_def own_metrics[OWN_METRICS] = {
	{ "wall_ms", "ms", LOWER_IS_BETTER, "one run of the command, fork to exit" },
	{ "user_ms", "ms", LOWER_IS_BETTER, "CPU time in user mode of the run's processes" },
	{ "sys_ms", "ms", LOWER_IS_BETTER, "CPU time in the kernel of the run's processes" },
};

/* The name's suffix says the unit and direction of a printed metric. */
static const struct {
	const char *suffix, *unit;
	enum metric_direction direction;
} suffixes[] = {
	{ "_us_per_op", "us/op", LOWER_IS_BETTER },
	{ "_ms", "ms", LOWER_IS_BETTER },
	{ "_us", "us", LOWER_IS_BETTER },
	{ "_ns", "ns", LOWER_IS_BETTER },
	{ "_s", "s", LOWER_IS_BETTER },
	{ "_bytes", "bytes", LOWER_IS_BETTER },
	{ "_mbps", "MB/s", HIGHER_IS_BETTER },
	{ "_per_sec", "1/s", HIGHER_IS_BETTER },
	{ "_ops", "ops", HIGHER_IS_BETTER },
};

/* One benchmark: the command, or the command with one parameter value. */
struct bench {
	struct suite *suite;
	struct metric_def metrics[OWN_METRICS + MAX_PARSED];
	struct artifact_def artifact;
	char name[128];
	const char *argv[MAX_ARGS];
	char *prepare, *setup, *cleanup;	/* {VAR} replaced; or NULL */
	const char *value;			/* the parameter's, or NULL */
};

static struct command_options conf;
static struct bench *benches;
static size_t n_benches;

static int round_command(struct suite_ctx *ctx);
static int setup_command(struct suite_ctx *ctx);
static void teardown_command(struct suite_ctx *ctx);

/* Until a command is set (--list, --help): the table of its own metrics. */
static struct suite command = {
	.name = "command",
	.description = "krunner run -- CMD ARGS: any command, one timed run per round",
	.metrics = own_metrics,
	.n_metrics = OWN_METRICS,
	.default_rounds = 10,
	.warmup_rounds = 1,
	.setup = setup_command,
	.round = round_command,
	.teardown = teardown_command,
};

SUITE_REGISTER(command)

static struct bench *bench_of(struct suite_ctx *ctx)
{
	for (size_t i = 0; i < n_benches; i++)
		if (benches[i].suite == ctx->suite)
			return &benches[i];
	return &benches[0];
}

/* text with every {VAR} replaced by value (malloc'd), or a copy. */
static char *substitute(const char *text, const char *var, const char *value)
{
	char pattern[160];
	if (!text)
		return NULL;
	if (!var)
		return strdup(text);
	snprintf(pattern, sizeof(pattern), "{%s}", var);
	size_t plen = strlen(pattern), vlen = strlen(value), n = 0;
	for (const char *p = strstr(text, pattern); p; p = strstr(p + plen, pattern))
		n++;
	char *out = malloc(strlen(text) + n * vlen + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = text;;) {
		const char *hit = strstr(p, pattern);
		size_t len = hit ? (size_t)(hit - p) : strlen(p);
		memcpy(o, p, len);
		o += len;
		if (!hit)
			break;
		memcpy(o, value, vlen);
		o += vlen;
		p = hit + plen;
	}
	*o = '\0';
	return out;
}

static int bench_init(struct bench *b, struct suite *suite, const char *const *argv,
		      const char *value)
{
	const char *var = value ? conf.param : NULL;
	size_t n = 0;
	for (; argv[n] && n < MAX_ARGS - 1; n++)
		if (!(b->argv[n] = substitute(argv[n], var, value)))
			return -ENOMEM;
	if (argv[n]) {
		fprintf(stderr, "krunner: the command has more than %d arguments\n", MAX_ARGS - 1);
		return -E2BIG;
	}
	b->value = value;
	b->prepare = substitute(conf.prepare, var, value);
	b->setup = substitute(conf.setup, var, value);
	b->cleanup = substitute(conf.cleanup, var, value);
	if ((conf.prepare && !b->prepare) || (conf.setup && !b->setup) ||
	    (conf.cleanup && !b->cleanup))
		return -ENOMEM;
	memcpy(b->metrics, own_metrics, sizeof(own_metrics));
	b->artifact = (struct artifact_def){ ARTIFACT_TOOL, b->argv[0],
					     "a command on PATH, or a path to one", true };
	b->suite = suite;
	suite->metrics = b->metrics;
	suite->n_metrics = OWN_METRICS;
	suite->first_optional_metric = OWN_METRICS;	/* the printed ones */
	suite->metrics_capacity = OWN_METRICS + (conf.parse_metrics ? MAX_PARSED : 0);
	suite->artifacts = &b->artifact;
	suite->n_artifacts = 1;
	return 0;
}

int suite_command_set(const char *const *argv, const struct command_options *options)
{
	conf = *options;
	n_benches = conf.n_values ? conf.n_values : 1;
	benches = calloc(n_benches, sizeof(*benches));
	if (!benches)
		return -ENOMEM;
	if (!conf.n_values)
		return bench_init(&benches[0], &command, argv, NULL);
	for (size_t i = 0; i < n_benches; i++) {
		struct bench *b = &benches[i];
		struct suite *copy = malloc(sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		*copy = command;
		snprintf(b->name, sizeof(b->name), "command[%s=%s]", conf.param, conf.values[i]);
		copy->name = b->name;
		int err = bench_init(b, copy, argv, conf.values[i]);
		if (err)
			return err;
		suite_register(copy);
	}
	return 0;
}

size_t suite_command_count(void)
{
	return n_benches;
}

const char *suite_command_name(size_t i)
{
	return i < n_benches ? benches[i].suite->name : NULL;
}

const char *const *suite_command_argv(size_t i)
{
	return i < n_benches ? benches[i].argv : NULL;
}

const char *suite_command_value(size_t i)
{
	return i < n_benches ? benches[i].value : NULL;
}

/* --setup, --prepare, --cleanup: CMD run by /bin/sh, its stdout discarded,
 * in krunner's process group (a daemon it starts stays up). */
static int run_hook(struct suite_ctx *ctx, const char *option, const char *text)
{
	const char *argv[] = { "/bin/sh", "-c", text, NULL };
	struct exec_spec spec = { .argv = argv, .discard_stdout = true };
	int status;
	char why[96];
	int err = exec_run(&spec, &status, NULL);
	if (!err && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	suite_fail(ctx, "--%s command '%s' failed (%s)", option, text,
		   err ? strerror(-err) : exec_status_text(status, why, sizeof(why)));
	return err ? err : -ECHILD;
}

/* The Debian package that owns path and its version, as notes. dpkg
 * knows a file by the path it installed, /bin/sleep before usrmerge
 * moved it: the path without /usr is asked too. */
static void note_package(struct suite_ctx *ctx, const char *path)
{
	const char *argv[] = { "dpkg", "-S", path, NULL, NULL };
	if (strncmp(path, "/usr/", 5) == 0) {
		argv[3] = path + 4;
		argv[4] = NULL;
	}
	struct suite_text out = { 0 };
	struct exec_spec spec = { .argv = argv, .timeout_ms = DPKG_TIMEOUT_MS,
				  .quiet_stderr = true, .on_line = suite_text_line, .arg = &out };
	int status;
	char exe[PATH_MAX];
	if (find_executable("dpkg", exe, sizeof(exe)) == 0 && exec_run(&spec, &status, NULL) == 0 &&
	    WIFEXITED(status) && out.data) {	/* 1 when one of two paths is unknown */
		/* "coreutils: /usr/bin/true"; a diversion line has no ": /" */
		char *colon = strstr(out.data, ": /");
		if (colon) {
			*colon = '\0';
			suite_note(ctx, "command_package", out.data);
			const char *q[] = { "dpkg-query", "-W", "-f=${Version}", out.data, NULL };
			struct suite_text version = { 0 };
			spec.argv = q;
			spec.arg = &version;
			if (exec_run(&spec, &status, NULL) == 0 && WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0 && version.data) {
				version.data[strcspn(version.data, "\n")] = '\0';
				suite_note(ctx, "command_package_version", version.data);
			}
			free(version.data);
		}
	}
	free(out.data);
}

static int setup_command(struct suite_ctx *ctx)
{
	struct bench *b = bench_of(ctx);
	const char *path = suite_artifact_path(ctx, b->artifact.name);
	suite_note(ctx, "command_path", path);
	note_package(ctx, path);
	if (b->value)
		suite_note(ctx, conf.param, b->value);
	if (!b->setup)
		return 0;
	int err = run_hook(ctx, "setup", b->setup);
	if (err && b->cleanup)
		run_hook(ctx, "cleanup", b->cleanup);
	return err;
}

static void teardown_command(struct suite_ctx *ctx)
{
	struct bench *b = bench_of(ctx);
	if (b->cleanup)
		run_hook(ctx, "cleanup", b->cleanup);
}

/* "run 3", "warm-up run": a round is one run. */
static const char *run_label(struct suite_ctx *ctx, char *buf, size_t len)
{
	int n = suite_round_number(ctx);
	if (n)
		snprintf(buf, len, "run %d", n);
	else
		snprintf(buf, len, "warm-up run");
	return buf;
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* A printed metric's slot, declared on first sight. -1: not one to add. */
static int declare(struct suite_ctx *ctx, struct bench *b, const char *key)
{
	struct suite *s = b->suite;
	for (size_t m = 0; m < s->n_metrics; m++)
		if (strcmp(b->metrics[m].name, key) == 0)
			return m < OWN_METRICS ? -1 : (int)m;
	if (s->n_metrics == s->metrics_capacity) {
		suite_fail(ctx, "the command printed more than %d metrics", MAX_PARSED);
		return -1;
	}
	struct metric_def *def = &b->metrics[s->n_metrics];
	size_t klen = strlen(key);
	char *name = strdup(key);
	if (!name)
		return -1;
	*def = (struct metric_def){ name, "", DIRECTION_UNKNOWN, "printed by the command" };
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t slen = strlen(suffixes[i].suffix);
		if (klen > slen && strcmp(key + klen - slen, suffixes[i].suffix) == 0) {
			def->unit = suffixes[i].unit;
			def->direction = suffixes[i].direction;
			break;
		}
	}
	if (def->direction == DIRECTION_UNKNOWN)
		fprintf(stderr, "krunner: %s: metric %s has no known unit suffix (_ms, _us, _ns, "
			"_s, _us_per_op, _bytes, _mbps, _per_sec, _ops): kept with direction "
			"unknown, not gated\n", s->name, key);
	return (int)s->n_metrics++;
}

/* --parse-metrics: every KEY=VALUE line of the output is a metric. */
static int parse_output(struct suite_ctx *ctx, struct bench *b, char *out)
{
	char label[32];
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		size_t key_len;
		double value;
		int kind = suite_metric_line(line, &key_len, &value);
		if (kind == 0)
			continue;	/* the command talking */
		char *eq = line + strcspn(line, "=");
		*eq = '\0';
		if (kind < 0 || !isfinite(value) || value < 0) {
			suite_fail(ctx, "%s: the line '%s=%s' is not KEY=VALUE with a finite "
				   "number >= 0", run_label(ctx, label, sizeof(label)), line, eq + 1);
			return -ERANGE;
		}
		int m = declare(ctx, b, line);
		if (m < 0) {
			if (!ctx->error)
				suite_fail(ctx, "%s: the command printed %s, a metric krunner "
					   "measures itself", run_label(ctx, label, sizeof(label)), line);
			return -EINVAL;
		}
		int err = suite_metric(ctx, line, value);
		if (err)
			return err;
	}
	return 0;
}

static int round_command(struct suite_ctx *ctx)
{
	struct bench *b = bench_of(ctx);
	const char *argv[MAX_ARGS];
	size_t n = 0;
	argv[n++] = suite_artifact_path(ctx, b->artifact.name);
	for (size_t i = 1; b->argv[i]; i++)
		argv[n++] = b->argv[i];
	argv[n] = NULL;
	if (b->prepare) {
		int err = run_hook(ctx, "prepare", b->prepare);
		if (err)
			return err;
	}
	struct app_command cmd = { .argv = argv, .quiet = true, .profiled = true,
				   .launched = true };
	struct rusage before, after;
	int status;
	double ms;
	char text[96], label[32], *out = NULL;
	const char *launcher = ctx->run->opts->launcher;
	getrusage(RUSAGE_CHILDREN, &before);
	int err = app_run(ctx, &cmd, &status, &ms, conf.parse_metrics ? &out : NULL);
	getrusage(RUSAGE_CHILDREN, &after);
	if (err) {
		if (err != -EINTR)
			suite_fail(ctx, "%s: cannot run %s: %s", run_label(ctx, label, sizeof(label)),
				   argv[0], strerror(-err));
		return err;
	}
	if (!app_exited_ok(status)) {
		suite_fail(ctx, "%s: %s%s%s%s failed: %s", run_label(ctx, label, sizeof(label)), b->argv[0],
			   launcher ? " under the launcher '" : "", launcher ? launcher : "",
			   launcher ? "'" : "", app_status_text(status, text, sizeof(text)));
		free(out);
		return -ECHILD;
	}
	if ((err = suite_metric(ctx, "wall_ms", ms)) ||
	    (err = suite_metric(ctx, "user_ms", tv_ms(after.ru_utime) - tv_ms(before.ru_utime))) ||
	    (err = suite_metric(ctx, "sys_ms", tv_ms(after.ru_stime) - tv_ms(before.ru_stime))))
		goto out;
	if (out)
		err = parse_output(ctx, b, out);
out:
	free(out);
	return err;
}
