/* SPDX-License-Identifier: MIT */
/*
 * process-lifecycle: starting and ending processes and threads, measured by
 * programs/process_lifecycle.c with programs/hello.c as the child.
 */
#include <stdio.h>

#include "suite.h"

static const struct metric_def metrics[] = {
	{ "hello_start_ms", "ms", LOWER_IS_BETTER, "fork + exec of hello to its exit" },
	{ "fork_ms", "ms", LOWER_IS_BETTER, "fork + wait of a child that exits at once" },
	{ "exec_ms", "ms", LOWER_IS_BETTER, "execve of hello up to its main" },
	{ "clone_ms", "ms", LOWER_IS_BETTER, "create and join a thread" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_PROGRAM, "process_lifecycle", NULL, false },
	{ ARTIFACT_PROGRAM, "hello", NULL, false },
};

static const struct suite_option options[] = {
	SUITE_SAMPLER_OPTIONS,
};

static int round_process_lifecycle(struct suite_ctx *ctx)
{
	return suite_run_hello(ctx, "process_lifecycle");
}

static const struct suite process_lifecycle = {
	.name = "process-lifecycle",
	.description = "process start (fork+exec), fork, exec, thread create+join",
	SUITE_TABLES(metrics, artifacts, options),
	.default_rounds = SUITE_SAMPLER_ROUNDS,
	.round = round_process_lifecycle,
};

SUITE_REGISTER(process_lifecycle)
