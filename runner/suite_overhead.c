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
#include "run.h"
#include "stats.h"
#include "suite.h"

#define RUN_TIMEOUT_MS 600000
#define ATTACH_TIMEOUT_MS 30000

enum workload_id { W_GETPPID, W_READ, W_EAGAIN, W_THREADS, W_NODE, N_WORKLOADS };

static const char *const workload_names[N_WORKLOADS] = {
	"getppid", "read", "eagain", "threads", "node",
};

enum profiler_id {
	P_KPROF,
	P_KPROF_EVENTS,
	P_KPROF_REWRITE,
	P_KPROF_REWRITE_EVENTS,
	P_KBPF,
	P_KBPF_EVENTS,
	P_KBPF_UNTRACED,
	P_BPF_COUNTER,
	P_BPFTRACE,
	P_PERF,
	P_STRACE,
	N_PROFILERS
};

struct profiler {
	const char *key;	/* in metric names */
	const char *label;	/* in the markdown table */
	bool slow;		/* tens of microseconds per call: fewer calls */
	bool getppid_only;	/* an anchor measured on the getppid loop only */
};

static const struct profiler profilers[N_PROFILERS] = {
	[P_KPROF] = { "kprof", "libkprof.so symbols (counts)", false, false },
	[P_KPROF_EVENTS] = { "kprof_events", "libkprof.so symbols KPROF_EVENTS=1", false, false },
	[P_KPROF_REWRITE] = { "kprof_rewrite", "libkprof.so rewrite (counts)", false, false },
	[P_KPROF_REWRITE_EVENTS] = { "kprof_rewrite_events", "libkprof.so rewrite KPROF_EVENTS=1",
				     false, false },
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
	{ "trace-calls", "2000000", "calls (event records) in the trace kanalyze reads" },
	{ "memory-threads", "16", "threads of the memory measurement" },
};

/* The suite's first failure goes into the result, like the runner's own. */
__attribute__((format(printf, 2, 3)))
static void suite_fail(struct suite_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nkrunner: %s: %s\n", ctx->suite->name, msg);
	if (!ctx->error)
		ctx->error = strdup(msg);
}

/* One run's output: calls and ns_per_call, or the memory figures. */
struct sample {
	double ns_per_call;
	double calls;
	double rss_1, vsz_1, rss_n, vsz_n, threads;
	unsigned seen;
};

static int on_sample_line(void *arg, const char *line)
{
	struct sample *s = arg;
	static const struct {
		const char *key;
		size_t offset;
	} keys[] = {
		{ "ns_per_call=", offsetof(struct sample, ns_per_call) },
		{ "calls=", offsetof(struct sample, calls) },
		{ "rss_1_kib=", offsetof(struct sample, rss_1) },
		{ "vsz_1_kib=", offsetof(struct sample, vsz_1) },
		{ "rss_n_kib=", offsetof(struct sample, rss_n) },
		{ "vsz_n_kib=", offsetof(struct sample, vsz_n) },
		{ "threads=", offsetof(struct sample, threads) },
	};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t n = strlen(keys[i].key);
		if (strncmp(line, keys[i].key, n) == 0) {
			char *end;
			double v = strtod(line + n, &end);
			if (end != line + n && *end == '\0' && isfinite(v)) {
				*(double *)((char *)s + keys[i].offset) = v;
				s->seen |= 1u << i;
			}
			return 0;
		}
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs argv; collects its output lines into *s. 0 or -errno (with the
 * suite failed and a message saying which command). */
static int run_command(struct suite_ctx *ctx, const char *what, const char *const argv[],
		       struct sample *s, int (*on_line)(void *, const char *), void *arg)
{
	/* bpftrace warns on every start where it cannot raise RLIMIT_MEMLOCK
	 * (not needed since 5.11: memcg accounting); a failure still shows
	 * as its exit status and the command below. */
	const char *slash = strrchr(argv[0], '/');
	bool quiet = strcmp(slash ? slash + 1 : argv[0], "bpftrace") == 0;
	struct exec_spec spec = {
		.argv = argv,
		.quiet_stderr = quiet,
		.timeout_ms = RUN_TIMEOUT_MS,
		.on_line = on_line,
		.arg = arg,
	};
	if (s) {
		memset(s, 0, sizeof(*s));
		spec.on_line = on_sample_line;
		spec.arg = s;
	}
	int status;
	bool timed_out = false;
	char text[96];
	int err = exec_run(&spec, &status, &timed_out);
	if (err) {
		suite_fail(ctx, "round %d: %s: cannot run %s: %s", suite_round_number(ctx), what,
			   argv[0], strerror(-err));
		return err;
	}
	if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		suite_fail(ctx, "round %d: %s: %s failed (%s)%s", suite_round_number(ctx), what,
			   argv[0], timed_out ? "timed out" : exec_status_text(status, text, sizeof(text)),
			   quiet ? "; its stderr was hidden, run it by hand to see why" : "");
		return -ECHILD;
	}
	return 0;
}

/* --- the profiled command lines --- */

struct cmdline {
	const char *argv[40];
	int argc;
	char strings[12][4200];
	int nstrings;
	bool truncated;		/* a path too long: the command is not run */
};

static void cmd_add(struct cmdline *c, const char *arg)
{
	if (c->argc < (int)ARRAY_SIZE(c->argv) - 1)
		c->argv[c->argc++] = arg;
	c->argv[c->argc] = NULL;
}

static const char *cmd_fmt(struct cmdline *c, const char *fmt, const char *a, const char *b)
{
	char tmp[sizeof(c->strings[0])];
	char *s = c->strings[c->nstrings < 11 ? c->nstrings++ : 11];
	if (snprintf(tmp, sizeof(tmp), fmt, a, b ? b : "") >= (int)sizeof(tmp))
		c->truncated = true;
	memcpy(s, tmp, sizeof(tmp));
	return s;
}

/* The workload's own argv (program and arguments), calls per run given. */
static void workload_argv(struct suite_ctx *ctx, enum workload_id w, const char *calls,
			  struct cmdline *c, const char **words, int *nwords)
{
	int n = 0;
	if (w == W_NODE) {
		words[n++] = suite_artifact_path(ctx, "node");
		words[n++] = suite_artifact_path(ctx, "programs/overhead_node.js");
		words[n++] = cmd_fmt(c, "--calls=%s%s", calls, NULL);
		words[n++] = cmd_fmt(c, "--dir=%s%s", suite_scratch_dir(ctx), NULL);
	} else {
		words[n++] = suite_artifact_path(ctx, "overhead");
		words[n++] = cmd_fmt(c, "--workload=%s%s", workload_names[w], NULL);
		words[n++] = cmd_fmt(c, "--calls=%s%s", calls, NULL);
		words[n++] = cmd_fmt(c, "--warmup-ms=%s%s", suite_option(ctx, "warmup-ms"), NULL);
	}
	*nwords = n;
}

/* bpftrace -c takes one string; the words have no spaces or quotes. */
static const char *joined(struct cmdline *c, const char **words, int n)
{
	char *s = c->strings[c->nstrings < 11 ? c->nstrings++ : 11];
	size_t len = 0;
	s[0] = '\0';
	for (int i = 0; i < n; i++)
		if (len < sizeof(c->strings[0]))
			len += (size_t)snprintf(s + len, sizeof(c->strings[0]) - len, "%s%s",
						i ? " " : "", words[i]);
	if (len >= sizeof(c->strings[0]))
		c->truncated = true;
	return s;
}

static const char *trace_path(struct suite_ctx *ctx, struct cmdline *c, const char *name)
{
	return cmd_fmt(c, "%s/%s", suite_scratch_dir(ctx), name);
}

/* P_PLAIN = N_PROFILERS */
static void build_command(struct suite_ctx *ctx, int p, enum workload_id w, struct cmdline *c)
{
	struct run *run = ctx->run;
	const char *words[8];
	int nwords;
	bool slow = p < N_PROFILERS && profilers[p].slow;
	const char *calls = suite_option(ctx, w == W_NODE ? (slow ? "node-slow-calls" : "node-calls")
							 : (slow ? "slow-calls" : "calls"));
	memset(c, 0, sizeof(*c));
	workload_argv(ctx, w, calls, c, words, &nwords);
	switch (p) {
	case P_KPROF:
	case P_KPROF_EVENTS:
	case P_KPROF_REWRITE:
	case P_KPROF_REWRITE_EVENTS:
		cmd_add(c, suite_artifact_path(ctx, "env"));
		cmd_add(c, cmd_fmt(c, "LD_PRELOAD=%s%s", run->loc->shim, NULL));
		cmd_add(c, cmd_fmt(c, "KPROF_OUT=%s%s", trace_path(ctx, c, "kprof"), NULL));
		cmd_add(c, p == P_KPROF_EVENTS || p == P_KPROF_REWRITE_EVENTS ? "KPROF_EVENTS=1"
									     : "KPROF_EVENTS=0");
		/* side by side: symbol mode and the syscall-site rewriting
		 * (which needs root; without it the row is symbol mode again) */
		cmd_add(c, p == P_KPROF_REWRITE || p == P_KPROF_REWRITE_EVENTS ? "KPROF_HOOK=rewrite"
									       : "KPROF_HOOK=symbols");
		break;
	case P_KBPF:
	case P_KBPF_EVENTS:
		cmd_add(c, run->loc->kbpf_trace);
		if (p == P_KBPF_EVENTS)
			cmd_add(c, "--events");
		cmd_add(c, cmd_fmt(c, "--output=%s%s", trace_path(ctx, c, "kbpf"), NULL));
		cmd_add(c, "--");
		break;
	case P_BPF_COUNTER:
	case P_BPFTRACE:
		cmd_add(c, suite_artifact_path(ctx, "bpftrace"));
		if (p == P_BPF_COUNTER) {
			cmd_add(c, "-e");
			cmd_add(c, "tracepoint:raw_syscalls:sys_enter { @calls = count(); }");
		} else {
			cmd_add(c, suite_artifact_path(ctx, "programs/overhead.bt"));
		}
		cmd_add(c, "-c");
		cmd_add(c, joined(c, words, nwords));
		return;
	case P_PERF:
		cmd_add(c, suite_artifact_path(ctx, "perf"));
		cmd_add(c, "trace");
		cmd_add(c, "-s");
		cmd_add(c, "-o");
		cmd_add(c, trace_path(ctx, c, "perf-trace.txt"));
		cmd_add(c, "--");
		break;
	case P_STRACE:
		cmd_add(c, suite_artifact_path(ctx, "strace"));
		cmd_add(c, "-c");
		cmd_add(c, "-f");
		cmd_add(c, "-o");
		cmd_add(c, trace_path(ctx, c, "strace.txt"));
		break;
	default: /* plain, and P_KBPF_UNTRACED (the tracer runs beside it) */
		break;
	}
	for (int i = 0; i < nwords; i++)
		cmd_add(c, words[i]);
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
	double deadline = now_s() + ATTACH_TIMEOUT_MS / 1000.0;
	while (now_s() < deadline) {
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
		 p < N_PROFILERS ? profilers[p].key : "no profiler");
	build_command(ctx, p, w, &c);
	int err = 0;
	if (p == P_KBPF_UNTRACED)
		err = bystander_start(ctx, &b);
	if (!err)
		err = c.truncated ? -ENAMETOOLONG : run_command(ctx, what, c.argv, &s, NULL, NULL);
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_REPS 64

/*
 * reps x (plain, P1, plain, P2, ..., plain). Each profiled run is compared
 * with the mean of its two plain neighbours; the round reports the median
 * over the reps of each comparison.
 */
static int round_workload(struct suite_ctx *ctx, enum workload_id w)
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
		if (!profilers[p].getppid_only || w == W_GETPPID)
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
	err = suite_metric(ctx, name, median_of(plain, n_plain));
	for (int i = 0; !err && i < n; i++) {
		const char *pk = profilers[order[i]].key;
		double a = median_of(added[i], reps);
		err = put_metric(ctx, wn, pk, "added_ns", a > 0 ? a : 0);
		if (!err)
			err = put_metric(ctx, wn, pk, "ratio", median_of(ratio[i], reps));
	}
	return err;
}

/* --- memory --- */

static int memory_sample(struct suite_ctx *ctx, int p, struct sample *s)
{
	struct cmdline c;
	memset(&c, 0, sizeof(c));
	if (p != N_PROFILERS) {
		cmd_add(&c, suite_artifact_path(ctx, "env"));
		cmd_add(&c, cmd_fmt(&c, "LD_PRELOAD=%s%s", ctx->run->loc->shim, NULL));
		cmd_add(&c, cmd_fmt(&c, "KPROF_OUT=%s%s", trace_path(ctx, &c, "memory"), NULL));
		cmd_add(&c, p == P_KPROF_EVENTS ? "KPROF_EVENTS=1" : "KPROF_EVENTS=0");
		cmd_add(&c, p == P_KPROF_REWRITE ? "KPROF_HOOK=rewrite" : "KPROF_HOOK=symbols");
	}
	cmd_add(&c, suite_artifact_path(ctx, "overhead"));
	cmd_add(&c, "--workload=memory");
	cmd_add(&c, cmd_fmt(&c, "--threads=%s%s", suite_option(ctx, "memory-threads"), NULL));
	int err = c.truncated ? -ENAMETOOLONG : run_command(ctx, "memory", c.argv, s, NULL, NULL);
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

static int round_memory(struct suite_ctx *ctx)
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

/* --- kanalyze throughput --- */

struct trace_input {
	char dir[4200];
	double file_bytes;	/* on disk */
	double data_bytes;	/* uncompressed */
	double events;
};

static struct trace_input trace_plain, trace_gzip;

static double dir_bytes(const char *dir)
{
	double total = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[8400];
	struct stat st;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			total += (double)st.st_size;
	}
	closedir(d);
	return total;
}

/* Runs kanalyze --format=json on the trace: seconds taken, events seen. */
static int kanalyze_timed(struct suite_ctx *ctx, const char *dir, double *seconds, double *events)
{
	const char *argv[] = { ctx->run->loc->kanalyze, "--format=json", dir, NULL };
	struct suite_text out = { 0 };
	double t0 = now_s();
	int err = run_command(ctx, "kanalyze", argv, NULL, suite_text_line, &out);
	*seconds = now_s() - t0;
	json_error_t jerr;
	json_t *profile = err ? NULL : json_loads(out.data ? out.data : "", 0, &jerr);
	json_t *count = json_object_get(json_object_get(profile, "total"), "count");
	if (!err && !json_is_integer(count)) {
		suite_fail(ctx, "kanalyze printed no total count for %s", dir);
		err = -ENODATA;
	}
	if (!err)
		*events = (double)json_integer_value(count);
	json_decref(profile);
	free(out.data);
	return err;
}

static int make_trace(struct suite_ctx *ctx, struct trace_input *t, bool gzip)
{
	if (snprintf(t->dir, sizeof(t->dir), "%s/trace-%s", suite_scratch_dir(ctx),
		     gzip ? "gzip" : "plain") >= (int)sizeof(t->dir))
		return -ENAMETOOLONG;
	struct cmdline c;
	struct sample s;
	memset(&c, 0, sizeof(c));
	cmd_add(&c, suite_artifact_path(ctx, "env"));
	cmd_add(&c, cmd_fmt(&c, "LD_PRELOAD=%s%s", ctx->run->loc->shim, NULL));
	cmd_add(&c, cmd_fmt(&c, "KPROF_OUT=%s%s", t->dir, NULL));
	cmd_add(&c, "KPROF_EVENTS=1");
	cmd_add(&c, gzip ? "KPROF_GZIP=1" : "KPROF_GZIP=0");
	cmd_add(&c, suite_artifact_path(ctx, "overhead"));
	cmd_add(&c, "--workload=getppid");
	cmd_add(&c, cmd_fmt(&c, "--calls=%s%s", suite_option(ctx, "trace-calls"), NULL));
	int err = c.truncated ? -ENAMETOOLONG :
		  run_command(ctx, "generating the kanalyze trace", c.argv, &s, NULL, NULL);
	if (err)
		return err;
	t->file_bytes = dir_bytes(t->dir);
	t->data_bytes = t->file_bytes;
	if (gzip) {
		char script[4400];
		snprintf(script, sizeof(script), "gzip -dc \"$1\"/* | wc -c");
		const char *argv[] = { suite_artifact_path(ctx, "sh"), "-c", script, "sh", t->dir,
				       NULL };
		struct suite_text out = { 0 };
		err = run_command(ctx, "measuring the uncompressed trace", argv, NULL, suite_text_line, &out);
		t->data_bytes = err || !out.data ? 0 : strtod(out.data, NULL);
		free(out.data);
	}
	if (!err && !(t->data_bytes > 0)) {
		suite_fail(ctx, "the generated trace %s is empty", t->dir);
		err = -ENODATA;
	}
	return err;
}

static int round_kanalyze(struct suite_ctx *ctx)
{
	double sec, events;
	int err = kanalyze_timed(ctx, trace_plain.dir, &sec, &events);
	if (!err)
		err = suite_metric(ctx, "kanalyze_plain_mbps", trace_plain.data_bytes / 1e6 / sec);
	if (!err)
		err = suite_metric(ctx, "kanalyze_plain_events_per_s", events / sec);
	if (!err)
		err = kanalyze_timed(ctx, trace_gzip.dir, &sec, &events);
	if (!err)
		err = suite_metric(ctx, "kanalyze_gzip_mbps", trace_gzip.data_bytes / 1e6 / sec);
	if (!err)
		err = suite_metric(ctx, "kanalyze_gzip_events_per_s", events / sec);
	if (err)
		return err;
	const char *argv[] = { suite_artifact_path(ctx, "sh"), "-c",
			       "gzip -dc \"$1\"/* > /dev/null", "sh", trace_gzip.dir, NULL };
	double t0 = now_s();
	err = run_command(ctx, "gzip -dc", argv, NULL, NULL, NULL);
	sec = now_s() - t0;
	if (!err)
		err = suite_metric(ctx, "gzip_inflate_mbps", trace_gzip.data_bytes / 1e6 / sec);
	return err;
}

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
	int err = make_trace(ctx, &trace_plain, false);
	if (!err)
		err = make_trace(ctx, &trace_gzip, true);
	if (!err) {
		char text[64];
		snprintf(text, sizeof(text), "%.0f", trace_plain.file_bytes);
		suite_note(ctx, "kanalyze_trace_plain_bytes", text);
		snprintf(text, sizeof(text), "%.0f", trace_gzip.file_bytes);
		suite_note(ctx, "kanalyze_trace_gzip_bytes", text);
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
		err = round_workload(ctx, (enum workload_id)w);
	if (!err)
		err = round_memory(ctx);
	if (!err)
		err = round_kanalyze(ctx);
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
		   "slowdown ratio. Load average at the end: %s.\n\n| profiler |",
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
		fprintf(f, "\n| %s |", profilers[p].label);
		for (int w = 0; w < N_WORKLOADS; w++) {
			snprintf(name, sizeof(name), "%s_%s_added_ns", workload_names[w],
				 profilers[p].key);
			cell(ctx, name, "%.0f", text[0], sizeof(text[0]));
			snprintf(name, sizeof(name), "%s_%s_ratio", workload_names[w],
				 profilers[p].key);
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
		    strncmp(metrics[m].name, "gzip_", 5))
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
	.setup = setup_overhead,
	.round = round_overhead,
	.teardown = teardown_overhead,
};

SUITE_REGISTER(overhead)
