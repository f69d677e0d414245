/* SPDX-License-Identifier: MIT */
/*
 * The syscalls the shim adds to each process image it starts in: the
 * exec workload (fork, exec of /bin/true, wait; programs/overhead.c)
 * under strace -f -c, plain and in each hook mode, and the difference per
 * command run. strace sees the image's start-up and exit and the fork
 * child's calls before the exec; not the output process's (a clone that
 * no ptracer follows), nor the image that runs the loop, beyond its share
 * of one start-up spread over the runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overhead.h"

/* The calls column of strace -c's total line: "100.00 ... calls [errors] total". */
static int strace_total(const char *path, double *calls)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	char line[512];
	int err = -ENODATA;
	while (fgets(line, sizeof(line), f)) {
		double pct, secs, usecs, n;
		char word[16];
		if (sscanf(line, "%lf %lf %lf %lf %15s", &pct, &secs, &usecs, &n, word) == 5 &&
		    (strcmp(word, "total") == 0 ||
		     (strstr(line, " total") && n >= 0))) {
			*calls = n;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Syscalls per command run with hook (NULL: plain). */
static int exec_calls(struct suite_ctx *ctx, const char *hook, double *per_run)
{
	struct cmdline c;
	memset(&c, 0, sizeof(c));
	const char *out = overhead_trace_path(ctx, &c, "strace-exec.txt");
	cmdline_add(&c, suite_artifact_path(ctx, "strace"));
	cmdline_add(&c, "-f");
	cmdline_add(&c, "-c");
	cmdline_add(&c, "-o");
	cmdline_add(&c, out);
	if (hook) {
		struct profiler pr = overhead_shim_profiler(
			ctx, overhead_trace_path(ctx, &c, "kprof-exec"), hook, false);
		overhead_add_profiler(ctx, &c, &pr);
	}
	const char *runs = suite_option(ctx, "exec-slow-calls");
	cmdline_add(&c, suite_artifact_path(ctx, "overhead"));
	cmdline_add(&c, "--workload=exec");
	cmdline_add(&c, cmdline_fmt(&c, "--calls=%s%s", runs, NULL));
	char what[64];
	snprintf(what, sizeof(what), "exec under strace -f -c (%s)", hook ? hook : "plain");
	struct sample s;
	int err = c.truncated ? -ENAMETOOLONG : overhead_run(ctx, what, c.argv, &s, NULL, NULL);
	if (err)
		return err;
	double total = 0;
	err = strace_total(out, &total);
	if (err) {
		suite_fail(ctx, "round %d: %s: no total line in %s", suite_round_number(ctx), what,
			   out);
		return err;
	}
	/* the runs timed and the warm-up's calls/10 (at least 1) */
	long n = atol(runs), warm = n / 10 > 1 ? n / 10 : 1;
	*per_run = total / (double)(n + warm);
	return 0;
}

int overhead_round_exec_syscalls(struct suite_ctx *ctx)
{
	static const struct {
		const char *hook, *metric;
	} modes[] = {
		{ "symbols", "exec_syscalls_kprof_added" },
		{ "rewrite", "exec_syscalls_kprof_rewrite_added" },
		{ "patch", "exec_syscalls_kprof_patch_added" },
	};
	double plain;
	int err = exec_calls(ctx, NULL, &plain);
	if (!err)
		err = suite_metric(ctx, "exec_syscalls_plain", plain);
	for (size_t i = 0; !err && i < sizeof(modes) / sizeof(modes[0]); i++) {
		double with;
		err = exec_calls(ctx, modes[i].hook, &with);
		if (!err)
			err = suite_metric(ctx, modes[i].metric, with > plain ? with - plain : 0);
	}
	return err;
}
