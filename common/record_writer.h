/* SPDX-License-Identifier: MIT */
/*
 * Encoder of the kprof record stream (docs/FORMAT.md), shared by both
 * producers. It packs with msgpack-c's header-only packer into a caller's
 * buffer and hands full buffers to a caller's sink, so it never allocates
 * and never calls libc: the LD_PRELOAD shim uses it from inside hooks.
 * Errors are sticky: after the first failing sink call nothing more is
 * written and kp_writer_flush() returns the error.
 */
#ifndef KPROF_RECORD_WRITER_H
#define KPROF_RECORD_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <msgpack/pack.h>

#include "record_schema.h"

/* Returns 0 or -errno; on error nothing of buf is assumed written. */
typedef int (*kp_sink_fn)(void *ctx, const char *buf, size_t len);

struct kp_writer {
	msgpack_packer pk;
	char *buf;
	size_t len;
	size_t cap;
	kp_sink_fn sink;
	void *sink_ctx;
	int err;
	uint64_t records;	/* records begun since init */
	uint64_t bytes;		/* bytes handed to the sink successfully */
	uint64_t encoded;	/* bytes encoded since init, written or not */
};

/* Keys every record carries. */
struct kp_rec_common {
	uint64_t pid;
	uint64_t stream;
	uint64_t time_ns;
	uint64_t seq; /* per-stream record number from 1; 0: key omitted */
};

struct kp_rec_header {
	struct kp_rec_common c;
	const char *producer;		/* "preload" or "bpf" */
	uint64_t ppid;
	const char *origin;		/* "start", "fork", "exec", "attach" */
	uint64_t parent_stream;
	const char *exe;
	const char *comm;		/* NULL: key omitted; the main thread's name */
	const char *const *argv;
	unsigned argc;
	const char *host;
	const char *kernel;
	const char *arch;
	uint64_t monotonic_ns;
	uint64_t realtime_ns;
	const char *hook_mode;		/* NULL: key omitted (bpf) */
	const char *clock_source;	/* NULL: key omitted (bpf) */
	const char *coverage;
	bool events;
	uint64_t interval_ms;
	/* the parent meant to be traced that is not (pid 0: key omitted) */
	uint64_t untraced_parent_pid;
	const char *untraced_parent_exe;
	const char *untraced_parent_why;
	const char *runtime;		/* NULL: key omitted; "go" */
	const char *site_cache_note;	/* NULL: key omitted */
};

/* One user stack of a syscall: pcs innermost first (depth 0: unknown). */
struct kp_rec_stack {
	const uint64_t *pcs;
	unsigned depth;
	uint64_t count, time_ns;
};

/* One entry of an aggregate's `syscalls` array. */
struct kp_rec_syscall {
	uint32_t nr;
	KP_SC_COUNTERS(KP_SC_U64) /* record_schema.h */
	unsigned n_errno;
	const uint32_t *errno_value;	/* n_errno errno values ... */
	const uint64_t *errno_count;	/* ... and how often each failed */
	const uint32_t *hist32;		/* KP_HIST_BUCKETS counters, or */
	const uint64_t *hist64;		/* these (exactly one non-NULL) */
	unsigned n_sites;		/* 0: no "sites" key */
	const uint64_t *site_addr;	/* return address into the caller */
	const uint64_t *site_count;
	const uint64_t *site_time_ns;
	/* NULL or all counts 0: no "kinds" key; else KP_KINDS rows of
	 * KP_KIND_COUNTERS, rows with a zero count left out (read with relaxed
	 * atomic loads: the shim's threads may be counting) */
	const uint64_t (*kinds)[KP_KIND_COUNTERS];
	/* kbpf-trace's off_cpu_ns (of time_ns, off CPU: sched_switch); a
	 * key only where has_NAME */
	KP_SC_OPTIONAL(KP_SC_U64_HAS)
	unsigned n_stacks;		/* 0: no "stacks" key (kbpf-trace --stacks) */
	const struct kp_rec_stack *stacks;
};

/* One entry of a `maps` record (a file-backed executable mapping). */
struct kp_rec_map {
	uint64_t start, end, offset;
	const char *path;
	const char *build_id; /* lowercase hex, "" when unknown */
};

struct kp_rec_exit {
	struct kp_rec_common c;
	int64_t status;
	uint64_t signal;
	uint64_t fds_file, fds_pipe, fds_socket, fds_other;
	uint64_t pending_pipe_readers;
	uint64_t pending_pipe_writers;
	/* written by the shim's output process after the program died */
	bool after_death;
	/* calls other threads were inside, which never return to be counted:
	 * n_in_progress pairs (in_progress_nr[i], in_progress[i]); 0: no key */
	unsigned n_in_progress;
	const uint32_t *in_progress_nr;
	const uint64_t *in_progress;
};

struct kp_rec_drop {
	struct kp_rec_common c;
	uint64_t records;
	uint64_t events;
	uint64_t bytes;
	const char *reason;
};

void kp_writer_init(struct kp_writer *w, char *buf, size_t cap,
		    kp_sink_fn sink, void *sink_ctx);
/* Hand what is buffered to the sink. Returns 0 or the sticky -errno. */
int kp_writer_flush(struct kp_writer *w);
/* Forget what is buffered and the sticky error (after a failed batch). */
void kp_writer_discard(struct kp_writer *w);

void kp_rec_header(struct kp_writer *w, const struct kp_rec_header *h);
/* name: the thread's name (comm) when known, else NULL (no key) */
void kp_rec_aggregate_begin(struct kp_writer *w, const struct kp_rec_common *c,
			    uint64_t thread, uint64_t tid, const char *name, bool exited,
			    bool final, unsigned n_syscalls);
void kp_rec_syscall(struct kp_writer *w, const struct kp_rec_syscall *s);
void kp_rec_events_begin(struct kp_writer *w, const struct kp_rec_common *c,
			 uint64_t tid, unsigned n_events);
void kp_rec_event(struct kp_writer *w, uint64_t start_ns, uint64_t duration_ns,
		  uint32_t nr, int64_t ret);
/* The six-element form: fd -1 and kind KP_KIND_NONE for calls without a
 * descriptor argument. */
void kp_rec_event_fd(struct kp_writer *w, uint64_t start_ns,
		     uint64_t duration_ns, uint32_t nr, int64_t ret, int64_t fd,
		     unsigned kind);
void kp_rec_fork(struct kp_writer *w, const struct kp_rec_common *c,
		 uint64_t child, const char *how);
/* The same with the path the child exec'd and why the shim cannot be
 * in it (not_entered; NULL: both keys omitted). */
void kp_rec_fork_note(struct kp_writer *w, const struct kp_rec_common *c,
		      uint64_t child, const char *how, const char *path,
		      const char *not_entered);
void kp_rec_exec(struct kp_writer *w, const struct kp_rec_common *c,
		 const char *path);
/* The same with not_entered: why the new image cannot load the shim
 * ("static", "setuid", ...; NULL: key omitted). */
void kp_rec_exec_note(struct kp_writer *w, const struct kp_rec_common *c,
		      const char *path, const char *not_entered);
void kp_rec_exit(struct kp_writer *w, const struct kp_rec_exit *e);
/*
 * The `exit` record of a stream that ends because tracing ended while the
 * process goes on (kbpf-trace detaching): status -1, descriptors and
 * pending pipe I/O as seen at the end of tracing, plus "detached": true.
 */
void kp_rec_exit_detached(struct kp_writer *w, const struct kp_rec_exit *e);
void kp_rec_drop(struct kp_writer *w, const struct kp_rec_drop *d);
/* The producer's own syscalls, counted from startup_ns (CLOCK_MONOTONIC;
 * 0: key omitted): n pairs (nr[i], count[i]), of which those made before
 * the stream's start (its header's time) are (startup_nr[i], startup[i]). */
struct kp_rec_site_calls {
	uint64_t site, calls;
};
struct kp_rec_own {
	uint64_t startup_ns;
	const uint32_t *nr;
	const uint64_t *count;
	unsigned n;
	const uint32_t *startup_nr;
	const uint64_t *startup;
	unsigned n_startup; /* 0 with startup_ns 0: no "startup" key */
	/* patch mode's dispatch path (SIGSYS): the calls that came that way,
	 * and the busiest sites with their calls; no keys unless dispatch */
	bool dispatch;
	uint64_t dispatch_calls;
	const struct kp_rec_site_calls *dispatch_sites;
	unsigned n_dispatch_sites;
};
void kp_rec_own(struct kp_writer *w, const struct kp_rec_common *c,
		const struct kp_rec_own *own);
void kp_rec_maps_begin(struct kp_writer *w, const struct kp_rec_common *c,
		       unsigned n_maps);
void kp_rec_map(struct kp_writer *w, const struct kp_rec_map *m);

#endif
