/* SPDX-License-Identifier: MIT */
/*
 * How a command runs under one of kprof's profilers: the tracer that
 * starts it (kbpf-trace: words before the command) or the environment
 * that loads the shim (LD_PRELOAD, KPROF_*). One description for every
 * place krunner profiles: --profile (exec.c for suite programs,
 * app_process.c for application servers and clients) and the overhead
 * suite, whose rows are these profilers with different options.
 */
#ifndef KRUNNER_PROFILER_H
#define KRUNNER_PROFILER_H

#include <stddef.h>

enum profile_mode {
	PROFILE_NONE,
	PROFILE_PRELOAD,
	PROFILE_BPF,
};

struct profiler {
	enum profile_mode mode;
	const char *shim;	 /* libkprof.so (PROFILE_PRELOAD) */
	const char *kbpf_trace;	 /* kbpf-trace (PROFILE_BPF) */
	const char *trace_dir;	 /* where the trace goes */
	const char *hook;	 /* KPROF_HOOK, or NULL: the shim's default */
	int events;		 /* events too: 1, 0, or -1: the default */
	int gzip;		 /* KPROF_GZIP: 1, 0, or -1: the default */
	/* KPROF_INTERVAL_MS unless the environment sets it, or NULL */
	const char *interval_ms;
};

/* Room for profiler_prefix's words and profiler_env's assignments. */
#define PROFILER_WORDS 6
#define PROFILER_ENV 6

/*
 * The words that go before the command, NULL-terminated in out (cap
 * entries): "kbpf-trace [--events] -o DIR --" for PROFILE_BPF, none
 * otherwise. Their number, or -E2BIG.
 */
int profiler_prefix(const struct profiler *p, const char **out, int cap);

/*
 * The environment the command needs, as NAME=VALUE strings in env (max
 * entries, NULL-terminated), written into buf (cap bytes): LD_PRELOAD
 * with the shim ahead of old_preload (NULL or "": the shim alone),
 * KPROF_OUT, and KPROF_HOOK, KPROF_EVENTS, KPROF_GZIP where set. The
 * interval is left out: profiler_setenv() sets it, unless set already.
 * Their number (0 but for PROFILE_PRELOAD), or -ENAMETOOLONG / -E2BIG.
 */
int profiler_env(const struct profiler *p, const char *old_preload, char *buf,
		 size_t cap, const char **env, int max);

/* In the child, before exec: profiler_env() applied with setenv(), the
 * LD_PRELOAD already there kept after the shim. 0 or -errno. */
int profiler_setenv(const struct profiler *p);

#endif
