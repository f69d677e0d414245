/* SPDX-License-Identifier: MIT */
/*
 * The overhead suite's parts (suite_overhead.c registers it): the rows it
 * compares and running a command under one of them (overhead_command.c),
 * the per-call cost of each (overhead_calls.c), the shim's memory
 * (overhead_memory.c), the calls it adds to each exec'd image
 * (overhead_exec.c) and kanalyze's read speed (overhead_kanalyze.c).
 */
#ifndef KRUNNER_OVERHEAD_H
#define KRUNNER_OVERHEAD_H

#include <stdbool.h>

#include "profiler.h"
#include "suite.h"

#define RUN_TIMEOUT_MS 600000
#define ATTACH_TIMEOUT_MS 30000

enum workload_id { W_GETPPID, W_READ, W_EAGAIN, W_THREADS, W_NODE, W_EXEC, N_WORKLOADS };

extern const char *const workload_names[N_WORKLOADS];

enum profiler_id {
	P_KPROF,
	P_KPROF_EVENTS,
	P_KPROF_REWRITE,
	P_KPROF_REWRITE_EVENTS,
	P_KPROF_PATCH,
	P_KBPF,
	P_KBPF_EVENTS,
	P_KBPF_UNTRACED,
	P_BPF_COUNTER,
	P_BPFTRACE,
	P_PERF,
	P_STRACE,
	N_PROFILERS
};

struct profiler_row {
	const char *key;	/* in metric names */
	const char *label;	/* in the markdown table */
	bool slow;		/* tens of microseconds per call: fewer calls */
	bool getppid_only;	/* an anchor measured on the getppid loop only */
};

extern const struct profiler_row profiler_rows[N_PROFILERS];

/* One run's output: calls and ns_per_call, or the memory figures. */
struct sample {
	double ns_per_call;
	double calls;
	double rss_1, vsz_1, rss_n, vsz_n, threads;
	unsigned seen;
};

struct cmdline {
	const char *argv[40];
	int argc;
	char strings[12][4200];
	int nstrings;
	bool truncated;		/* a path too long: the command is not run */
};

/* overhead_command.c */
double overhead_now_s(void);
/* Runs argv; its output lines into *s (or to on_line when s is NULL). 0 or
 * -errno, the suite failed with a message saying which command. */
int overhead_run(struct suite_ctx *ctx, const char *what, const char *const argv[],
		 struct sample *s, int (*on_line)(void *, const char *), void *arg);
void cmdline_add(struct cmdline *c, const char *arg);
/* fmt with up to two strings, kept in c. */
const char *cmdline_fmt(struct cmdline *c, const char *fmt, const char *a, const char *b);
/* The words joined by spaces, kept in c. */
const char *cmdline_joined(struct cmdline *c, const char **words, int n);
/* SCRATCH/name, kept in c. */
const char *overhead_trace_path(struct suite_ctx *ctx, struct cmdline *c, const char *name);
void overhead_add_profiler(struct suite_ctx *ctx, struct cmdline *c, const struct profiler *pr);
struct profiler overhead_shim_profiler(struct suite_ctx *ctx, const char *trace_dir,
				     const char *hook, bool events);

/* One round of each measurement. */
int overhead_round_workload(struct suite_ctx *ctx, enum workload_id w);
int overhead_round_memory(struct suite_ctx *ctx);
int overhead_round_kanalyze(struct suite_ctx *ctx);
/* overhead_exec.c: the syscalls each shim mode adds to an exec'd image. */
int overhead_round_exec_syscalls(struct suite_ctx *ctx);
/* overhead_kanalyze.c: the traces it reads, made in setup. */
int overhead_kanalyze_setup(struct suite_ctx *ctx);

#endif
