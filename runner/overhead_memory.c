/* SPDX-License-Identifier: MIT */
/*
 * The shim's memory: anonymous resident memory and VmSize of
 * programs/overhead.c --workload=memory, per process and per thread, with
 * and without the shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "exec.h"
#include "overhead.h"
#include "run.h"
#include "stats.h"

/* --- memory --- */

static int memory_sample(struct suite_ctx *ctx, int p, struct sample *s)
{
	struct cmdline c;
	memset(&c, 0, sizeof(c));
	if (p != N_PROFILERS) {
		struct profiler pr = overhead_shim_profiler(ctx, overhead_trace_path(ctx, &c, "memory"),
						   p == P_KPROF_REWRITE ? "rewrite" : "symbols",
						   p == P_KPROF_EVENTS);
		overhead_add_profiler(ctx, &c, &pr);
	}
	cmdline_add(&c, suite_artifact_path(ctx, "overhead"));
	cmdline_add(&c, "--workload=memory");
	cmdline_add(&c, cmdline_fmt(&c, "--threads=%s%s", suite_option(ctx, "memory-threads"), NULL));
	int err = c.truncated ? -ENAMETOOLONG : overhead_run(ctx, "memory", c.argv, s, NULL, NULL);
	if (!err && (s->seen & 0x7c) != 0x7c) {
		suite_fail(ctx, "round %d: memory: missing rss/vsz lines", suite_round_number(ctx));
		err = -ENODATA;
	}
	return err;
}

static double nonneg(double v)
{
	return v > 0 ? v : 0;
}

int overhead_round_memory(struct suite_ctx *ctx)
{
	struct sample plain, shim, events, rewrite;
	int err = memory_sample(ctx, N_PROFILERS, &plain);
	if (!err)
		err = memory_sample(ctx, P_KPROF, &shim);
	if (!err)
		err = memory_sample(ctx, P_KPROF_EVENTS, &events);
	if (!err)
		err = memory_sample(ctx, P_KPROF_REWRITE, &rewrite);
	if (err)
		return err;
	double t = plain.threads;
	err = suite_metric(ctx, "memory_process_rss_bytes", nonneg((shim.rss_1 - plain.rss_1) * 1024));
	if (!err) /* the rewritten pages of libc & co. are copies of the process's own */
		err = suite_metric(ctx, "memory_process_rewrite_rss_bytes",
				   nonneg((rewrite.rss_1 - plain.rss_1) * 1024));
	if (!err)
		err = suite_metric(ctx, "memory_process_vsz_bytes",
				   nonneg((shim.vsz_1 - plain.vsz_1) * 1024));
	if (!err)
		err = suite_metric(ctx, "memory_thread_rss_bytes",
				   nonneg(((shim.rss_n - shim.rss_1) - (plain.rss_n - plain.rss_1)) *
					  1024 / t));
	if (!err)
		err = suite_metric(ctx, "memory_thread_vsz_bytes",
				   nonneg(((shim.vsz_n - shim.vsz_1) - (plain.vsz_n - plain.vsz_1)) *
					  1024 / t));
	if (!err)
		err = suite_metric(ctx, "memory_thread_events_vsz_bytes",
				   nonneg(((events.vsz_n - events.vsz_1) -
					   (plain.vsz_n - plain.vsz_1)) * 1024 / t));
	return err;
}
