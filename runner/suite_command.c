/* SPDX-License-Identifier: MIT */
/*
 * command: `krunner run -- CMD ARGS`, hyperfine for any command. Each round
 * (a fresh set of runs) discards --warmups runs, then times --runs runs of
 * the command from fork to exit, with the user and system CPU time its
 * process tree used; every run is a value. The command's own output is
 * discarded and a run that exits non-zero fails the suite, as hyperfine
 * does. The executable is an artifact like any program (path, size,
 * SHA-256), so compare knows when two results ran different binaries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "app_process.h"
#include "suite.h"

static const struct metric_def metrics[] = {
	{ "wall_ms", "ms", LOWER_IS_BETTER, "one run of the command, fork to exit" },
	{ "user_ms", "ms", LOWER_IS_BETTER, "CPU time in user mode of the run's processes" },
	{ "sys_ms", "ms", LOWER_IS_BETTER, "CPU time in the kernel of the run's processes" },
};

/* The command's executable, set from the command line (suite_command_set). */
static struct artifact_def artifacts[] = {
	{ ARTIFACT_TOOL, "", "a command on PATH, or a path to one", true },
};

static const struct suite_option options[] = {
	{ "runs", "10", "timed runs of the command per round" },
	{ "warmups", "1", "runs discarded before each round's timed runs" },
};

static const char *const *command_argv;

void suite_command_set(const char *const *argv)
{
	command_argv = argv;
	artifacts[0].name = argv[0];
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* One run; its values recorded when keep. */
static int run_once(struct suite_ctx *ctx, bool keep)
{
	const char *argv[256];
	size_t n = 0;
	argv[n++] = suite_artifact_path(ctx, artifacts[0].name);
	for (size_t i = 1; command_argv[i] && n < 255; i++)
		argv[n++] = command_argv[i];
	argv[n] = NULL;
	struct app_command cmd = { .argv = argv, .quiet = true, .profiled = true };
	struct rusage before, after;
	int status;
	double ms;
	char text[96];
	getrusage(RUSAGE_CHILDREN, &before);
	int err = app_run(ctx, &cmd, &status, &ms, NULL);
	getrusage(RUSAGE_CHILDREN, &after);
	if (err)
		return err;
	if (!app_exited_ok(status)) {
		fprintf(stderr, "krunner: command: %s failed (%s)\n", command_argv[0],
			app_status_text(status, text, sizeof(text)));
		return -ECHILD;
	}
	if (!keep)
		return 0;
	if ((err = suite_metric(ctx, "wall_ms", ms)) ||
	    (err = suite_metric(ctx, "user_ms", tv_ms(after.ru_utime) - tv_ms(before.ru_utime))) ||
	    (err = suite_metric(ctx, "sys_ms", tv_ms(after.ru_stime) - tv_ms(before.ru_stime))))
		return err;
	return 0;
}

static int round_command(struct suite_ctx *ctx)
{
	long runs = strtol(suite_option(ctx, "runs"), NULL, 10);
	long warmups = strtol(suite_option(ctx, "warmups"), NULL, 10);
	if (runs < 1) {
		fprintf(stderr, "krunner: command: --runs wants at least 1\n");
		return -EINVAL;
	}
	int err = 0;
	for (long i = 0; !err && i < warmups + runs; i++)
		err = run_once(ctx, i >= warmups);
	return err;
}

static const struct suite command = {
	.name = "command",
	.description = "krunner run -- CMD ARGS: any command, timed run by run",
	SUITE_TABLES(metrics, artifacts, options),
	.round = round_command,
};

SUITE_REGISTER(command)
