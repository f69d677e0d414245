/* SPDX-License-Identifier: MIT */
/*
 * What each profiler adds to a call: the workloads run plain and under
 * every profiler, interleaved, and the ns added per call and the slowdown
 * ratio, per workload and profiler (suite_overhead.c says how).
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

/* The workload's own command: node with overhead_node.js, or programs/overhead. */
static void workload_argv(struct suite_ctx *ctx, enum workload_id w, const char *calls,
			  struct cmdline *c, const char **words, int *nwords)
{
	int n = 0;
	if (w == W_NODE) {
		words[n++] = suite_artifact_path(ctx, "node");
		words[n++] = suite_artifact_path(ctx, "programs/overhead_node.js");
		words[n++] = cmdline_fmt(c, "--calls=%s%s", calls, NULL);
		words[n++] = cmdline_fmt(c, "--dir=%s%s", suite_scratch_dir(ctx), NULL);
	} else {
		words[n++] = suite_artifact_path(ctx, "overhead");
		words[n++] = cmdline_fmt(c, "--workload=%s%s", workload_names[w], NULL);
		words[n++] = cmdline_fmt(c, "--calls=%s%s", calls, NULL);
		words[n++] = cmdline_fmt(c, "--warmup-ms=%s%s", suite_option(ctx, "warmup-ms"), NULL);
	}
	*nwords = n;
}

/* P_PLAIN = N_PROFILERS */
static void build_command(struct suite_ctx *ctx, int p, enum workload_id w, struct cmdline *c)
{
	const char *words[8];
	int nwords;
	bool slow = p < N_PROFILERS && profiler_rows[p].slow;
	const char *calls = suite_option(ctx, w == W_NODE ? (slow ? "node-slow-calls" : "node-calls")
					      : w == W_EXEC ? (slow ? "exec-slow-calls" : "exec-calls")
							    : (slow ? "slow-calls" : "calls"));
	memset(c, 0, sizeof(*c));
	workload_argv(ctx, w, calls, c, words, &nwords);
	switch (p) {
	case P_KPROF:
	case P_KPROF_EVENTS:
	case P_KPROF_REWRITE:
	case P_KPROF_REWRITE_EVENTS:
	case P_KPROF_PATCH: {
		/* side by side: symbol mode, the syscall-site rewriting (which
		 * needs root; without it the row is symbol mode again) and
		 * patch mode (jumps to trampolines, Syscall User Dispatch) */
		struct profiler pr = overhead_shim_profiler(
			ctx, overhead_trace_path(ctx, c, "kprof"),
			p == P_KPROF_PATCH ? "patch"
			: p == P_KPROF_REWRITE || p == P_KPROF_REWRITE_EVENTS ? "rewrite"
									     : "symbols",
			p == P_KPROF_EVENTS || p == P_KPROF_REWRITE_EVENTS);
		overhead_add_profiler(ctx, c, &pr);
		break;
	}
	case P_KBPF:
	case P_KBPF_EVENTS: {
		struct profiler pr = suite_profiler_of(ctx, PROFILE_BPF, overhead_trace_path(ctx, c, "kbpf"));
		pr.events = p == P_KBPF_EVENTS;
		overhead_add_profiler(ctx, c, &pr);
		break;
	}
	case P_BPF_COUNTER:
	case P_BPFTRACE:
		cmdline_add(c, suite_artifact_path(ctx, "bpftrace"));
		if (p == P_BPF_COUNTER) {
			cmdline_add(c, "-e");
			cmdline_add(c, "tracepoint:raw_syscalls:sys_enter { @calls = count(); }");
		} else {
			cmdline_add(c, suite_artifact_path(ctx, "programs/overhead.bt"));
		}
		cmdline_add(c, "-c");
		cmdline_add(c, cmdline_joined(c, words, nwords));
		return;
	case P_PERF:
		cmdline_add(c, suite_artifact_path(ctx, "perf"));
		cmdline_add(c, "trace");
		cmdline_add(c, "-s");
		cmdline_add(c, "-o");
		cmdline_add(c, overhead_trace_path(ctx, c, "perf-trace.txt"));
		cmdline_add(c, "--");
		break;
	case P_STRACE:
		cmdline_add(c, suite_artifact_path(ctx, "strace"));
		cmdline_add(c, "-c");
		cmdline_add(c, "-f");
		cmdline_add(c, "-o");
		cmdline_add(c, overhead_trace_path(ctx, c, "strace.txt"));
		break;
	default: /* plain, and P_KBPF_UNTRACED (the tracer runs beside it) */
		break;
	}
	for (int i = 0; i < nwords; i++)
		cmdline_add(c, words[i]);
}

/* --- kbpf-trace attached to an idle process while the workload runs plain --- */

struct bystander {
	pid_t idle;
	pid_t tracer;
};

static int bystander_start(struct suite_ctx *ctx, struct bystander *b)
{
	int fds[2];
	char pid_text[32];
	b->idle = b->tracer = -1;
	b->idle = fork();
	if (b->idle < 0)
		return -errno;
	if (b->idle == 0) {
		for (;;)
			pause();
	}
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	snprintf(pid_text, sizeof(pid_text), "--pid=%d", (int)b->idle);
	char out[4200];
	snprintf(out, sizeof(out), "--output=%s/untraced", suite_scratch_dir(ctx));
	b->tracer = fork();
	if (b->tracer < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (b->tracer == 0) {
		dup2(fds[1], STDERR_FILENO);
		int null_fd = open("/dev/null", O_RDWR);
		if (null_fd >= 0) {
			dup2(null_fd, STDIN_FILENO);
			dup2(null_fd, STDOUT_FILENO);
		}
		execl(ctx->run->loc->kbpf_trace, "kbpf-trace", "-v", pid_text, out, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/* -v says "attached" once the programs are live. */
	char buf[4096];
	size_t used = 0;
	int err = -ETIMEDOUT;
	double deadline = overhead_now_s() + ATTACH_TIMEOUT_MS / 1000.0;
	while (overhead_now_s() < deadline) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		ssize_t n = read(fds[0], buf + used, sizeof(buf) - 1 - used);
		if (n <= 0) {
			err = -ECHILD;
			break;
		}
		used += (size_t)n;
		buf[used] = '\0';
		if (strstr(buf, "attached")) {
			err = 0;
			break;
		}
		if (used > sizeof(buf) / 2) {
			memmove(buf, buf + used - 64, 64);
			used = 64;
		}
	}
	close(fds[0]);	/* later -v lines get EPIPE: kbpf-trace ignores stderr errors */
	if (err)
		suite_fail(ctx, "round %d: kbpf-trace --pid=%d did not attach (%s)",
			   suite_round_number(ctx), (int)b->idle, strerror(-err));
	return err;
}

static void bystander_stop(struct bystander *b)
{
	if (b->tracer > 0) {
		kill(b->tracer, SIGTERM);
		waitpid(b->tracer, NULL, 0);
	}
	if (b->idle > 0) {
		kill(b->idle, SIGKILL);
		waitpid(b->idle, NULL, 0);
	}
}

/* One run of workload w under profiler p (N_PROFILERS: plain): ns per call. */
static int measure(struct suite_ctx *ctx, int p, enum workload_id w, double *ns)
{
	struct cmdline c;
	struct sample s;
	struct bystander b = { -1, -1 };
	char what[96];
	snprintf(what, sizeof(what), "%s under %s", workload_names[w],
		 p < N_PROFILERS ? profiler_rows[p].key : "no profiler");
	build_command(ctx, p, w, &c);
	int err = 0;
	if (p == P_KBPF_UNTRACED)
		err = bystander_start(ctx, &b);
	if (!err)
		err = c.truncated ? -ENAMETOOLONG : overhead_run(ctx, what, c.argv, &s, NULL, NULL);
	if (p == P_KBPF_UNTRACED)
		bystander_stop(&b);
	if (err)
		return err;
	if ((s.seen & 3) != 3 || !(s.ns_per_call > 0) || !(s.calls > 0)) {
		suite_fail(ctx, "round %d: %s: no ns_per_call/calls line", suite_round_number(ctx),
			   what);
		return -ENODATA;
	}
	*ns = s.ns_per_call;
	return 0;
}

static int put_metric(struct suite_ctx *ctx, const char *a, const char *b, const char *c,
		      double value)
{
	char name[128];
	snprintf(name, sizeof(name), "%s_%s_%s", a, b, c);
	return suite_metric(ctx, name, value);
}

#define MAX_REPS 64

/*
 * reps x (plain, P1, plain, P2, ..., plain). Each profiled run is compared
 * with the mean of its two plain neighbours; the round reports the median
 * over the reps of each comparison.
 */
int overhead_round_workload(struct suite_ctx *ctx, enum workload_id w)
{
	static double plain[MAX_REPS * (N_PROFILERS + 1)];
	static double added[N_PROFILERS][MAX_REPS], ratio[N_PROFILERS][MAX_REPS];
	int order[N_PROFILERS], n = 0, n_plain = 0, err = 0;
	int reps = atoi(suite_option(ctx, "reps"));
	if (reps < 1 || reps > MAX_REPS) {
		suite_fail(ctx, "--reps=%s: must be 1..%d", suite_option(ctx, "reps"), MAX_REPS);
		return -EINVAL;
	}
	for (int p = 0; p < N_PROFILERS; p++)
		if (!profiler_rows[p].getppid_only || w == W_GETPPID)
			order[n++] = p;
	for (int rep = 0; !err && rep < reps; rep++) {
		double before, after, profiled;
		err = measure(ctx, N_PROFILERS, w, &before);
		if (!err)
			plain[n_plain++] = before;
		for (int i = 0; !err && i < n; i++) {
			err = measure(ctx, order[i], w, &profiled);
			if (!err)
				err = measure(ctx, N_PROFILERS, w, &after);
			if (!err && exec_interrupted())
				err = -EINTR;
			if (err)
				break;
			plain[n_plain++] = after;
			double base = (before + after) / 2;
			added[i][rep] = profiled - base;
			ratio[i][rep] = profiled / base;
			before = after;
		}
	}
	if (err)
		return err;
	const char *wn = workload_names[w];
	char name[64];
	snprintf(name, sizeof(name), "%s_plain_ns", wn);
	err = suite_metric(ctx, name, stats_median(plain, (size_t)n_plain));
	for (int i = 0; !err && i < n; i++) {
		const char *pk = profiler_rows[order[i]].key;
		double a = stats_median(added[i], (size_t)reps);
		err = put_metric(ctx, wn, pk, "added_ns", a > 0 ? a : 0);
		if (!err)
			err = put_metric(ctx, wn, pk, "ratio", stats_median(ratio[i], (size_t)reps));
	}
	return err;
}
