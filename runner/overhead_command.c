/* SPDX-License-Identifier: MIT */
/*
 * The overhead suite's commands: one run of a workload and its output
 * lines, and the command lines that put it under a profiler (profiler.h
 * for kprof's own, their usual options for strace, perf and bpftrace).
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

double overhead_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs argv; collects its output lines into *s. 0 or -errno (with the
 * suite failed and a message saying which command). */
int overhead_run(struct suite_ctx *ctx, const char *what, const char *const argv[],
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


void cmdline_add(struct cmdline *c, const char *arg)
{
	if (c->argc < (int)ARRAY_SIZE(c->argv) - 1)
		c->argv[c->argc++] = arg;
	c->argv[c->argc] = NULL;
}

const char *cmdline_fmt(struct cmdline *c, const char *fmt, const char *a, const char *b)
{
	char tmp[sizeof(c->strings[0])];
	char *s = c->strings[c->nstrings < 11 ? c->nstrings++ : 11];
	if (snprintf(tmp, sizeof(tmp), fmt, a, b ? b : "") >= (int)sizeof(tmp))
		c->truncated = true;
	memcpy(s, tmp, sizeof(tmp));
	return s;
}

/* The workload's own argv (program and arguments), calls per run given. */
/* bpftrace -c takes one string; the words have no spaces or quotes. */
const char *cmdline_joined(struct cmdline *c, const char **words, int n)
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

const char *overhead_trace_path(struct suite_ctx *ctx, struct cmdline *c, const char *name)
{
	return cmdline_fmt(c, "%s/%s", suite_scratch_dir(ctx), name);
}

/*
 * The words that put the command under one of kprof's profilers
 * (profiler.h): `env NAME=VALUE...` for the shim, the tracer's own for
 * kbpf-trace.
 */
void overhead_add_profiler(struct suite_ctx *ctx, struct cmdline *c, const struct profiler *pr)
{
	if (pr->mode == PROFILE_PRELOAD) {
		char buf[8192];
		const char *env[PROFILER_ENV];
		int n = profiler_env(pr, NULL, buf, sizeof(buf), env, PROFILER_ENV);
		if (n < 0) {
			c->truncated = true;
			return;
		}
		cmdline_add(c, suite_artifact_path(ctx, "env"));
		for (int i = 0; i < n; i++)
			cmdline_add(c, cmdline_fmt(c, "%s%s", env[i], NULL));
		return;
	}
	const char *words[PROFILER_WORDS];
	int n = profiler_prefix(pr, words, PROFILER_WORDS);
	for (int i = 0; i < n; i++)
		cmdline_add(c, words[i]);
}

/* The shim in a hook mode (symbols, rewrite, patch), with or without events. */
struct profiler overhead_shim_profiler(struct suite_ctx *ctx, const char *trace_dir,
				     const char *hook, bool events)
{
	struct profiler pr = suite_profiler_of(ctx, PROFILE_PRELOAD, trace_dir);
	pr.hook = hook;
	pr.events = events;
	return pr;
}
