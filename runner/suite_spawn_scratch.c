/* SPDX-License-Identifier: MIT */
/*
 * spawn-scratch: posix_spawn with a small and an 84,386-byte argv+envp,
 * and the memory the spawner keeps (its peak RSS; the user and kernel
 * memory retained once every spawn is done), measured by programs/spawn_scratch.c with
 * programs/hello.c as the child.
 */
#include <stdio.h>

#include "suite.h"

static const struct metric_def metrics[] = {
	{ "spawn_ms", "ms", LOWER_IS_BETTER,
	  "posix_spawn of hello (env LANG=C, PATH=/bin) + successful wait" },
	{ "spawn_large_wire_bytes", "bytes", LOWER_IS_BETTER,
	  "size of the deterministic argv+envp blob (asserted 84386)" },
	{ "spawn_large_first_ms", "ms", LOWER_IS_BETTER, "a process's first spawn + wait with the large blob" },
	{ "spawn_large_repeat_ms", "ms", LOWER_IS_BETTER, "spawn + wait with the large blob after the first" },
	{ "spawner_peak_rss_bytes", "bytes", LOWER_IS_BETTER,
	  "peak resident set of the spawning process (ru_maxrss)" },
	{ "spawn_scratch_retained_bytes", "bytes", LOWER_IS_BETTER,
	  "user memory the spawner still holds after every spawn: anonymous resident growth (RssAnon, 0 if none)" },
	{ "spawn_scratch_kernel_bytes", "bytes", LOWER_IS_BETTER,
	  "kernel memory held for the spawner after every spawn: page-table growth (VmPTE, 0 if none)" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_PROGRAM, "spawn_scratch", NULL, false },
	{ ARTIFACT_PROGRAM, "hello", NULL, false },
};

/* Shared with process-lifecycle: same name, same meaning. */
static const struct suite_option options[] = {
	SUITE_SAMPLER_OPTIONS,
};

static int round_spawn_scratch(struct suite_ctx *ctx)
{
	return suite_run_hello(ctx, "spawn_scratch");
}

static const struct suite spawn_scratch = {
	.name = "spawn-scratch",
	.description = "posix_spawn small and with an 84,386-byte argv+envp; spawner peak RSS",
	SUITE_TABLES(metrics, artifacts, options),
	.default_rounds = SUITE_SAMPLER_ROUNDS,
	.round = round_spawn_scratch,
};

SUITE_REGISTER(spawn_scratch)
