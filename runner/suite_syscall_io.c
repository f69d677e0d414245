/* SPDX-License-Identifier: MIT */
/*
 * syscall-io: pipe, file and getpid throughput/latency and OFD lock costs,
 * measured by programs/syscall_io.c.
 */
#include <stdio.h>

#include "suite.h"

static const struct metric_def metrics[] = {
	{ "pipe_mbps", "MB/s", HIGHER_IS_BETTER, "1 MB through a pipe to a forked child" },
	{ "file_write_mbps", "MB/s", HIGHER_IS_BETTER, "1 MB written to a file (page cache)" },
	{ "file_read_mbps", "MB/s", HIGHER_IS_BETTER, "1 MB read back from the file" },
	{ "syscall_latency_us", "us", LOWER_IS_BETTER, "one getpid() round trip" },
	{ "lock_many_files_acquire_us_per_op", "us", LOWER_IS_BETTER,
	  "OFD write lock, 127 records on 64 files" },
	{ "lock_many_files_conflict_us_per_op", "us", LOWER_IS_BETTER,
	  "F_OFD_GETLK finding the conflict from another description" },
	{ "lock_many_files_replace_us_per_op", "us", LOWER_IS_BETTER,
	  "write lock to read lock, same owner" },
	{ "lock_many_files_unlock_us_per_op", "us", LOWER_IS_BETTER, "unlock" },
	{ "lock_dense_file_acquire_us_per_op", "us", LOWER_IS_BETTER,
	  "OFD write lock, 256 separated ranges on one file" },
	{ "lock_dense_file_conflict_us_per_op", "us", LOWER_IS_BETTER,
	  "F_OFD_GETLK finding the conflict from another description" },
	{ "lock_dense_file_replace_us_per_op", "us", LOWER_IS_BETTER,
	  "write lock to read lock, same owner" },
	{ "lock_dense_file_unlock_us_per_op", "us", LOWER_IS_BETTER, "unlock" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_PROGRAM, "syscall_io", NULL, false },
};

static const struct suite_option options[] = {
	SUITE_SAMPLER_OPTIONS,
};

static int round_syscall_io(struct suite_ctx *ctx)
{
	char sampler[SUITE_SAMPLER_ARGS][48], dir[4200];
	suite_sampler_args(ctx, sampler);
	snprintf(dir, sizeof(dir), "--dir=%s", suite_scratch_dir(ctx));
	const char *argv[] = { suite_artifact_path(ctx, "syscall_io"), sampler[0], sampler[1],
			       sampler[2], dir, NULL };
	return suite_run(ctx, argv);
}

static const struct suite syscall_io = {
	.name = "syscall-io",
	.description = "pipe and file throughput, getpid latency, OFD record locks",
	SUITE_TABLES(metrics, artifacts, options),
	.default_rounds = SUITE_SAMPLER_ROUNDS,
	.round = round_syscall_io,
};

SUITE_REGISTER(syscall_io)
