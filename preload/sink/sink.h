/* SPDX-License-Identifier: MIT */
/*
 * The sink layer: records out of the process. flush.c turns the thread
 * blocks into records (header, syscalls, events, own, maps, exit), output.c
 * writes them to the trace (a file or unix:PATH) through the output process
 * (output_proc.c), where the trace's descriptor lives. Below it is only
 * the core; lifecycle/ and the front ends call in.
 */
#ifndef KPROF_SINK_H
#define KPROF_SINK_H

#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "../core/account.h"
#include "../core/base.h"

/* ---- flushing (flush.c) ---- */

/* KP_FLUSH_MAPS: a periodic batch now, with a `maps` record (dlclose). */
/* KP_FLUSH_START: the header alone, at start-up (kp_flush_start). */
/* KP_FLUSH_DEATH: by the output process, the program dead (kp_flush_after_death). */
/* KP_FLUSH_PASSIVE: the last batch before the shim goes passive (kp_flush_passive). */
enum kp_flush_kind { KP_FLUSH_PERIODIC, KP_FLUSH_EXIT, KP_FLUSH_EXEC, KP_FLUSH_MAPS,
		     KP_FLUSH_START, KP_FLUSH_DEATH, KP_FLUSH_PASSIVE };
void kp_flush(enum kp_flush_kind kind, const char *exec_path);
void kp_flush_after_fork(void);
void kp_flush_start(void);
/*
 * The program is about to install a seccomp filter (a sandbox: Chromium's
 * renderers), under which the shim's own calls (the output process's
 * clone, /proc reads, the site helper) may be what kills it: the stream
 * ends with a last batch whose `drop` record says why, the trace's
 * descriptor goes, and the shim makes no call of its own from then on.
 */
void kp_flush_passive(const char *why);
/* In the output process, the program having died without its final batch. */
void kp_flush_after_death(int pid);
void kp_note_fork(pid_t child, const char *how);
/* Set by the exec of a child that shares this thread (vfork, posix_spawn):
 * why it cannot load the shim (NULL: it can) and its path; taken, and
 * cleared, by the next kp_note_fork of this thread (set by
 * lifecycle/entry_check.c; defined here, the layer below it). */
extern __thread const char *kp_child_why;
extern __thread char kp_child_path[256];
/* Final flush for a process ending with status (exit paths). */
void kp_finish(int64_t status, bool have_status);
/* Wires the sink into the layers below, before the trace opens: the
 * core's deadline calls kp_flush_periodic, the output process's notice of
 * the program's death calls kp_flush_after_death. */
void kp_flush_init(void);
void kp_flush_periodic(void);
/* The flush lock (flush_lock.c): one flush or descriptor move at a time.
 * kp_flush_lock(true) waits (false only when this thread holds it or it
 * stays taken); kp_flush_lock(false) tries once. */
bool kp_flush_lock(bool wait);
bool kp_flush_lock_wait(void);
void kp_flush_unlock(void);
/* Whether someone holds it (the output process, after the program died). */
bool kp_flush_locked(void);
void kp_flush_lock_reset(void);

/* ---- the `own` record (own_calls.c) ---- */
/* The `own` record, when there is something in it (flush.c). */
struct kp_writer;
struct kp_rec_site_calls;
void kp_own_write(struct kp_writer *w, bool final, bool exec);
/* Patch mode's dispatch path (rewrite/dispatch.c sets it when armed):
 * the busiest cap sites that trapped into out, how many; *calls: all
 * calls that came that way. NULL: no dispatch, no keys in the record. */
extern unsigned (*kp_own_dispatch)(struct kp_rec_site_calls *out, unsigned cap,
				   uint64_t *calls);
void kp_own_reset(void);
/* The stream starts now: the calls so far were the start-up's. */
void kp_own_mark_start(void);

/* ---- mappings snapshot (maps.c) ---- */
struct kp_writer;
/* A `maps` record of the executable file mappings, with build-ids. */
int kp_maps_write(struct kp_writer *w, uint64_t pid, uint64_t stream,
		  uint64_t *seq);
/*
 * Rewrite and patch mode: kp_maps_tracked set, kp_maps_changed() after
 * each mmap, mprotect, munmap or mremap; kp_maps_seen() hands over the
 * list read at start-up (executable file mappings are kept) with the
 * generation it was read at.
 */
extern uint64_t kp_maps_gen;
extern bool kp_maps_tracked;
void kp_maps_changed(void);
struct kp_maps_line;
void kp_maps_seen(const struct kp_maps_line *lines, size_t n, uint64_t gen);
/* A file's build-id, known already (the site cache's key): the record
 * need not read it again. */
void kp_maps_know_build_id(uint32_t dev_major, uint32_t dev_minor, uint64_t inode,
			   const char *id);

/* ---- zlib, loaded for a gzip trace only (zlib_load.c) ---- */

#include <zlib.h>

struct kp_zlib {
	int (*init2)(z_streamp, int level, int method, int window_bits, int mem_level,
		     int strategy, const char *version, int stream_size);
	int (*deflate)(z_streamp, int flush); /* NULL: not loaded */
	int (*reset)(z_streamp);
};
extern struct kp_zlib kp_zlib;
/* Loads libz.so.1, at start-up: one try, said on stderr when it fails
 * (the trace is then written without gzip); false then. */
bool kp_zlib_load(void);

/* ---- output (output.c) ---- */

int kp_output_open(void);
/* Whether the trace is to be gzipped, as far as the configuration tells
 * (a socket destination found later may still turn it off). */
bool kp_output_gzip_wanted(void);
/* Before an exec's final batch: true when it goes from this process, its
 * descriptor closed before the exec (output.c says when). */
bool kp_output_exec_local(void);
/* Whether the batch being written is such a batch. */
bool kp_output_local(void);
int kp_output_begin_batch(void);
int kp_output_write(void *ctx, const char *buf, size_t len);
int kp_output_end_batch(bool finish);
void kp_output_abort_batch(void);
void kp_output_after_fork(void);
bool kp_output_is_ours(int fd);
void kp_output_forget_stale(int fd);
int kp_output_fd(void);
/* Moves our descriptor away when the program wants its number. */
void kp_output_move_away(void);
void kp_output_exec_failed(void);
/* The stream ends here for good (kp_flush_passive): no descriptor of ours
 * and no output process left. */
void kp_output_close(void);
/* After the exec record: the output process goes if the execve succeeds. */
void kp_output_before_exec(void);
/* The trace file's path (or KPROF_OUT), for messages. */
const char *kp_output_path(void);
bool kp_output_refused(void);
/* The program died (output process only): can its stream be finished here? */
bool kp_output_after_death(bool mid_batch);

/* ---- the output process, where the trace descriptor lives (output_proc.c) ---- */

int kp_outproc_start(void);
/* Its pid; 0 when there is none (never started, stopped, or gone). */
int kp_outproc_pid(void);
/*
 * A wait for any child with __WALL or __WCLONE (options) would report the
 * output process, a clone child of the program's: with no other child
 * left it blocks for ever where the kernel said ECHILD without the shim
 * (strace ends only on ECHILD). True when the program has no other child
 * (its /proc/self/task/<tid>/children): the wait is to get ECHILD.
 */
bool kp_outproc_only_child(int options);
/* Runs fn(arg) there; -ESRCH without one, -EPIPE when it went away. */
int kp_outproc_call(int (*fn)(void *), void *arg);
void kp_outproc_stop(void);
bool kp_outproc_exec_arm(void);
void kp_outproc_exec_failed(void);
void kp_outproc_after_fork(void);
void kp_outproc_reap_later(int pid);
void kp_outproc_reap(void);
/* Start-up: the earlier image's output process reaped before main. */
void kp_outproc_reap_at_start(void);
/* In the output process: the dead program's wait status, -1 unknown. */
int kp_outproc_exit_code(void);
/* Set by kp_flush_init: what the output process calls when the program
 * died without its final batch. */
extern void (*kp_outproc_on_death)(int pid);

#endif
