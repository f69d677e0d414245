/* SPDX-License-Identifier: MIT */
/*
 * The lifecycle layer: one process image's start, its fork children and
 * the environment its exec'd children get (init.c, child_env.c), used by
 * both front ends. Setup reads the configuration, the clock, the process's
 * identity and opens the trace; the front end that starts the shim
 * (symbols/start.c) runs it and then starts rewrite mode.
 */
#ifndef KPROF_LIFECYCLE_H
#define KPROF_LIFECYCLE_H

#include "../core/phases.h"
#include "../sink/sink.h"

/*
 * Whether this thread's process calls (fork, exec, exit) are the traced
 * program's, the one test both front ends make: the shim active, not a
 * vfork child before its exec, not the shim's own start-up or rescan on
 * this thread, not a process the program made that shares our memory
 * without being a thread of ours.
 */
static inline bool kp_tracing(void)
{
	return kp_state == KP_ACTIVE &&
	       !(kp_tls_flags & (KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT)) &&
	       !kp_foreign_process();
}

/* A stream id unique per process image, without a syscall. */
uint64_t kp_new_stream_id(uint64_t mix);
/* The arguments the constructor was given (glibc passes main's): the
 * header's argv without reading /proc/self/cmdline. */
void kp_start_args(int argc, char **argv);
/* Start-up, once per image (before the shim goes active): 0 or -errno. */
int kp_setup(void);
/* The stream starts now: the calls so far were the start-up's. */
void kp_setup_done(void);
/*
 * A fork child starts a stream of its own (pthread_atfork and the fork
 * hooks): true when this call reset the state, false when there was
 * nothing to do (not active, a vfork child, or rewrite mode's hook did it
 * already, kp_fork_reset_done).
 */
bool kp_after_fork_child(void);
/* Set in a fork child whose stream rewrite mode's hook already started. */
extern bool kp_fork_reset_done;
/*
 * child_env.c: what a child image's environment needs to stay traced:
 * envp with the shim's variables (LD_PRELOAD, KPROF_*), the marker, the
 * clock hand-off and sites (KPROF_EXEC_SITES=..., the rewrite front end's
 * site cache, or NULL) added where missing.
 */
void kp_child_env_init(const char *cwd);
char *const *kp_child_env(char *const envp[], char **arr, size_t cap,
			  char *scratch, size_t scratch_cap, const char *marker,
			  const char *sites);
/* Whether children get LD_PRELOAD added (KPROF_FOLLOW, the default). */
bool kp_child_env_follows(void);
/* Does this LD_PRELOAD value load this library? */
bool kp_child_preload_names_us(const char *value);
/* This library's file name ("libkprof.so"), NULL when unknown. */
const char *kp_child_preload_base(void);
/* Whether the program's envp (read as execve would) has an LD_PRELOAD of
 * this library: 1, 0, or -EFAULT / -E2BIG when it cannot tell. */
int kp_child_env_preloads(char *const envp[]);

/*
 * entry_check.c: why the file an exec is about to run cannot load the
 * shim (docs/FORMAT.md, the exec record's not_entered), or NULL: dirfd,
 * path and flags as execveat takes them (path already copied from the
 * program; AT_EMPTY_PATH with "": dirfd itself), plus KP_EXEC_SEARCH for
 * execvp's search of PATH; envp the environment the call passes, which
 * is not looked at when env_followed (the shim adds LD_PRELOAD to it).
 */
#define KP_EXEC_SEARCH 0x40000000
const char *kp_exec_not_entered(int dirfd, const char *path, int flags,
				char *const envp[], bool env_followed);
/*
 * The exec of a child that shares this thread's memory and TLS (a vfork
 * or posix_spawn child; or the parent, for the spawn it is about to
 * make): what kp_exec_not_entered says of it (path: the program's
 * pointer), kept in kp_child_why and kp_child_path for the parent's
 * fork record (sink/flush.c's kp_note_fork takes them).
 */
void kp_child_exec_check(int dirfd, const char *path, int flags, char *const envp[],
			 bool env_followed);
/*
 * At start-up of an image that is not a fork or exec of a traced one:
 * sets kp_proc's untraced_parent when the parent was meant to be traced
 * (its environment preloads this library) and is not. mark: the pid
 * the environment's KPROF_PARENT named (0: none).
 */
void kp_parent_check(uint64_t mark);
/* "go" when the executable is a Go program, else NULL (no call). */
const char *kp_exe_runtime(void);

#endif
