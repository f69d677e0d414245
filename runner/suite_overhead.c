/* SPDX-License-Identifier: MIT */
/*
 * overhead: what each profiler adds to the program it measures. The micro
 * workloads of programs/overhead.c and the Node workload of
 * programs/overhead_node.js run plain and under every profiler in one
 * round, interleaved (plain, P1, plain, P2, plain ...): a profiled run is
 * compared with the mean of the plain runs just before and just after it,
 * so that a load that changes during the round hits both sides alike; the
 * sequence runs --reps times per round. Per workload and profiler the round
 * reports the median over the reps of the ns added per syscall (clamped at
 * 0: a metric may not be negative; the ratio keeps a speed-up visible) and
 * of the slowdown ratio. Wall-clock time: what a user waits, and the only
 * clock that sees a tracer's work in another process (strace, perf) — on a
 * loaded machine it also sees the scheduler, hence the interleaving.
 *
 * The exec workload's "call" is a whole command run (fork, exec of
 * /bin/true, wait): what a profiler adds per process, start-up and exit,
 * which is what decides a compiler cache's or a kernel build's overhead;
 * and the syscalls each shim mode adds to one exec'd image, as strace -f
 * counts them (overhead_exec.c).
 *
 * Also: the shim's memory (per process and per thread, from the anonymous
 * resident memory and VmSize of programs/overhead.c --workload=memory with
 * and without the shim), and
 * kanalyze's read speed on a trace generated in setup (the shim with
 * events on a getppid loop), plain and gzip, next to gzip -dc alone.
 *
 * The suite applies its own profilers, so it runs without --profile and
 * --launcher; it needs root for the BPF tools. Teardown writes the medians
 * as a markdown table next to the result file.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
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
#include <stdarg.h>

#include "exec.h"
#include "overhead.h"
#include "run.h"
#include "stats.h"
#include "suite.h"

const char *const workload_names[N_WORKLOADS] = {
	"getppid", "read", "eagain", "threads", "node", "exec",
};

const struct profiler_row profiler_rows[N_PROFILERS] = {
	[P_KPROF] = { "kprof", "libkprof.so symbols (counts)", false, false },
	[P_KPROF_EVENTS] = { "kprof_events", "libkprof.so symbols KPROF_EVENTS=1", false, false },
	[P_KPROF_REWRITE] = { "kprof_rewrite", "libkprof.so rewrite (counts)", false, false },
	[P_KPROF_REWRITE_EVENTS] = { "kprof_rewrite_events", "libkprof.so rewrite KPROF_EVENTS=1",
				     false, false },
	[P_KPROF_PATCH] = { "kprof_patch", "libkprof.so patch (counts)", false, false },
	[P_KBPF] = { "kbpf", "kbpf-trace (aggregate)", false, false },
	[P_KBPF_EVENTS] = { "kbpf_events", "kbpf-trace --events", false, false },
	[P_KBPF_UNTRACED] = { "kbpf_untraced", "kbpf-trace tracing another process", false, true },
	[P_BPF_COUNTER] = { "bpf_counter", "bare sys_enter counter (bpftrace)", false, true },
	[P_BPFTRACE] = { "bpftrace", "bpftrace enter→exit timing, target pid", false, false },
	[P_PERF] = { "perf", "perf trace -s", true, false },
	[P_STRACE] = { "strace", "strace -c -f", true, false },
};

#define ADDED(w, p, what)                                                       \
	{ w "_" p "_added_ns", "ns", LOWER_IS_BETTER, w ": ns added per call by " what }, \
	{ w "_" p "_ratio", "x", LOWER_IS_BETTER, w ": profiled / plain time per call, " what }
#define WORKLOAD(w, what)                                                       \
	{ w "_plain_ns", "ns", LOWER_IS_BETTER, w ": ns per call without a profiler (" what ")" }, \
	ADDED(w, "kprof", "libkprof.so, symbol mode"),                           \
	ADDED(w, "kprof_events", "libkprof.so, symbol mode, KPROF_EVENTS=1"),    \
	ADDED(w, "kprof_rewrite", "libkprof.so, rewrite mode"),                  \
	ADDED(w, "kprof_rewrite_events", "libkprof.so, rewrite mode, KPROF_EVENTS=1"), \
	ADDED(w, "kprof_patch", "libkprof.so, patch mode"),                      \
	ADDED(w, "kbpf", "kbpf-trace"),                                          \
	ADDED(w, "kbpf_events", "kbpf-trace --events"),                          \
	ADDED(w, "bpftrace", "a bpftrace sys_enter->sys_exit timing script"),    \
	ADDED(w, "perf", "perf trace -s"),                                       \
	ADDED(w, "strace", "strace -c -f")

static const struct metric_def metrics[] = {
	WORKLOAD("getppid", "getppid() loop"),
	ADDED("getppid", "kbpf_untraced", "kbpf-trace attached to another process"),
	ADDED("getppid", "bpf_counter", "a bare sys_enter counter (bpftrace, every process)"),
	WORKLOAD("read", "1-byte read() of /dev/zero"),
	WORKLOAD("eagain", "read() of an empty non-blocking pipe, EAGAIN"),
	WORKLOAD("threads", "4 threads mixing the three, wall time / calls"),
	WORKLOAD("node", "node: readSync + writeSync of 1 byte"),
	WORKLOAD("exec", "fork, exec of /bin/true, wait: ns per command run"),
	{ "exec_syscalls_plain", "calls", LOWER_IS_BETTER,
	  "syscalls of one fork, exec of /bin/true and wait (strace -f -c), plain" },
	{ "exec_syscalls_kprof_added", "calls", LOWER_IS_BETTER,
	  "syscalls the shim adds to one exec'd image, symbol mode (start-up and exit)" },
	{ "exec_syscalls_kprof_rewrite_added", "calls", LOWER_IS_BETTER,
	  "the same, rewrite mode" },
	{ "exec_syscalls_kprof_patch_added", "calls", LOWER_IS_BETTER,
	  "the same, patch mode" },
	{ "memory_process_rss_bytes", "bytes", LOWER_IS_BETTER,
	  "shim: anonymous resident memory added to a one-thread process" },
	{ "memory_process_vsz_bytes", "bytes", LOWER_IS_BETTER,
	  "shim: address space added to a one-thread process" },
	{ "memory_process_rewrite_rss_bytes", "bytes", LOWER_IS_BETTER,
	  "shim in rewrite mode: anonymous resident memory added to a one-thread process" },
	{ "memory_thread_rss_bytes", "bytes", LOWER_IS_BETTER,
	  "shim: anonymous resident memory added per thread that made a call" },
	{ "memory_thread_vsz_bytes", "bytes", LOWER_IS_BETTER,
	  "shim: address space added per thread that made a call" },
	{ "memory_thread_events_vsz_bytes", "bytes", LOWER_IS_BETTER,
	  "shim with KPROF_EVENTS=1: address space added per thread" },
	{ "kanalyze_plain_mbps", "MB/s", HIGHER_IS_BETTER,
	  "kanalyze --format=json on the plain trace: file MB per second" },
	{ "kanalyze_plain_events_per_s", "events/s", HIGHER_IS_BETTER,
	  "the same: per-call event entries decoded per second" },
	{ "kanalyze_gzip_mbps", "MB/s", HIGHER_IS_BETTER,
	  "kanalyze on the gzip trace: uncompressed MB per second" },
	{ "kanalyze_gzip_events_per_s", "events/s", HIGHER_IS_BETTER,
	  "the same: event entries per second" },
	{ "gzip_inflate_mbps", "MB/s", HIGHER_IS_BETTER,
	  "gzip -dc of the same trace to /dev/null: uncompressed MB per second" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_PROGRAM, "overhead", NULL, false },
	{ ARTIFACT_INPUT, "programs/overhead_node.js", NULL, false },
	{ ARTIFACT_INPUT, "programs/overhead.bt", NULL, false },
	{ ARTIFACT_TOOL, "node", "apt-get install nodejs", false },
	{ ARTIFACT_TOOL, "env", "apt-get install coreutils", false },
	{ ARTIFACT_TOOL, "strace", "apt-get install strace", false },
	{ ARTIFACT_TOOL, "perf", "apt-get install linux-perf", false },
	{ ARTIFACT_TOOL, "bpftrace", "apt-get install bpftrace", false },
	{ ARTIFACT_TOOL, "gzip", "apt-get install gzip", false },
	{ ARTIFACT_TOOL, "sh", "apt-get install dash", false },
};

static const struct suite_option options[] = {
	{ "reps", "3", "times the interleaved sequence runs per round (median per round)" },
	{ "calls", "100000", "syscalls per run of the C workloads" },
	{ "warmup-ms", "300", "untimed calls first, for at least this long (steady state: "
	  "the shim's TSC clock calibrates in ~200 ms)" },
	{ "slow-calls", "4000", "syscalls per run under strace and perf trace" },
	{ "node-calls", "40000", "syscalls per run of the Node workload" },
	{ "node-slow-calls", "4000", "the same under strace and perf trace" },
	{ "exec-calls", "200", "commands run (fork, exec of /bin/true, wait) per run of exec" },
	{ "exec-slow-calls", "50", "the same under strace and perf trace" },
	{ "trace-calls", "2000000", "calls (event records) in the trace kanalyze reads" },
	{ "memory-threads", "16", "threads of the memory measurement" },
};

/* --- suite --- */

static int setup_overhead(struct suite_ctx *ctx)
{
	struct run *run = ctx->run;
	if (run->opts->profile != PROFILE_NONE || run->have_launcher) {
		suite_fail(ctx, "the overhead suite runs its own profilers; run it without "
				"--profile and --launcher");
		return -EINVAL;
	}
	if (geteuid() != 0) {
		suite_fail(ctx, "needs root: kbpf-trace, perf trace and bpftrace load BPF "
				"programs or open tracepoints");
		return -EPERM;
	}
	const char *tools[] = { run->loc->shim, run->loc->kanalyze, run->loc->kbpf_trace };
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		if (access(tools[i], X_OK) != 0 && access(tools[i], R_OK) != 0) {
			suite_fail(ctx, "missing: %s (make all)", tools[i]);
			return -ENOENT;
		}
	}
	int err = overhead_kanalyze_setup(ctx);
	if (!err) {
		char text[64];
		FILE *f = fopen("/proc/loadavg", "r");
		if (f && fgets(text, sizeof(text), f)) {
			text[strcspn(text, "\n")] = '\0';
			suite_note(ctx, "loadavg_at_setup", text);
		}
		if (f)
			fclose(f);
	}
	return err;
}

static int round_overhead(struct suite_ctx *ctx)
{
	int err = 0;
	for (int w = 0; !err && w < N_WORKLOADS; w++)
		err = overhead_round_workload(ctx, (enum workload_id)w);
	if (!err)
		err = overhead_round_exec_syscalls(ctx);
	if (!err)
		err = overhead_round_memory(ctx);
	if (!err)
		err = overhead_round_kanalyze(ctx);
	return err;
}

static ssize_t metric_index(const char *name)
{
	for (size_t m = 0; m < ARRAY_SIZE(metrics); m++)
		if (strcmp(metrics[m].name, name) == 0)
			return (ssize_t)m;
	return -1;
}

/* "median [min–max]" of a metric's values, or "" */
static void cell(struct suite_ctx *ctx, const char *name, const char *fmt, char *buf, size_t len)
{
	ssize_t m = metric_index(name);
	buf[0] = '\0';
	if (m < 0 || ctx->rounds_done < 1)
		return;
	const double *v = ctx->values[m].v;
	size_t n = ctx->values[m].n;
	if (!n)
		return;
	char a[24], b[24], c[24];
	snprintf(a, sizeof(a), fmt, stats_median(v, n));
	if (n == 1) {
		snprintf(buf, len, "%s", a);
		return;
	}
	snprintf(b, sizeof(b), fmt, stats_min(v, n));
	snprintf(c, sizeof(c), fmt, stats_max(v, n));
	snprintf(buf, len, "%s [%s–%s]", a, b, c);
}

static void teardown_overhead(struct suite_ctx *ctx)
{
	struct run *run = ctx->run;
	if (ctx->error || ctx->rounds_done < 1)
		return;
	char path[8400], name[128], text[3][128];
	snprintf(path, sizeof(path), "%s/%s.md", run->loc->out_dir, run->base_name);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "krunner: overhead: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	char load[64] = "?";
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (fgets(load, sizeof(load), lf))
			load[strcspn(load, "\n")] = '\0';
		fclose(lf);
	}
	fprintf(f, "Overhead per syscall: ns added (median over %d rounds [min–max]) and "
		   "slowdown ratio; for exec, per command run (fork, exec of /bin/true, "
		   "wait). Load average at the end: %s.\n\n| profiler |",
		ctx->rounds_done, load);
	for (int w = 0; w < N_WORKLOADS; w++)
		fprintf(f, " %s |", workload_names[w]);
	fprintf(f, "\n|---|");
	for (int w = 0; w < N_WORKLOADS; w++)
		fprintf(f, "---|");
	fprintf(f, "\n| plain (ns per call) |");
	for (int w = 0; w < N_WORKLOADS; w++) {
		snprintf(name, sizeof(name), "%s_plain_ns", workload_names[w]);
		cell(ctx, name, "%.0f", text[0], sizeof(text[0]));
		fprintf(f, " %s |", text[0]);
	}
	for (int p = 0; p < N_PROFILERS; p++) {
		fprintf(f, "\n| %s |", profiler_rows[p].label);
		for (int w = 0; w < N_WORKLOADS; w++) {
			snprintf(name, sizeof(name), "%s_%s_added_ns", workload_names[w],
				 profiler_rows[p].key);
			cell(ctx, name, "%.0f", text[0], sizeof(text[0]));
			snprintf(name, sizeof(name), "%s_%s_ratio", workload_names[w],
				 profiler_rows[p].key);
			cell(ctx, name, "%.2f", text[1], sizeof(text[1]));
			if (text[0][0])
				fprintf(f, " +%s ns (%s×) |", text[0], text[1]);
			else
				fprintf(f, " – |");
		}
	}
	fprintf(f, "\n\n| other | value |\n|---|---|\n");
	for (size_t m = 0; m < ARRAY_SIZE(metrics); m++) {
		if (strncmp(metrics[m].name, "memory_", 7) && strncmp(metrics[m].name, "kanalyze_", 9) &&
		    strncmp(metrics[m].name, "gzip_", 5) && strncmp(metrics[m].name, "exec_syscalls_", 14))
			continue;
		cell(ctx, metrics[m].name, "%.0f", text[0], sizeof(text[0]));
		fprintf(f, "| %s (%s) | %s |\n", metrics[m].name, metrics[m].unit, text[0]);
	}
	fclose(f);
	fprintf(stderr, "krunner: overhead: table in %s\n", path);
}

static const struct suite overhead = {
	.name = "overhead",
	.description = "ns added per syscall by libkprof.so, kbpf-trace, strace, perf trace, "
		       "bpftrace; shim memory; kanalyze speed (root)",
	SUITE_TABLES(metrics, artifacts, options),
	.no_launcher = "it runs its own profilers and commands",
	.setup = setup_overhead,
	.round = round_overhead,
	.teardown = teardown_overhead,
};

SUITE_REGISTER(overhead)
