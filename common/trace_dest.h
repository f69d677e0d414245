/* SPDX-License-Identifier: MIT */
/*
 * Where a producer's trace goes, the same for the shim and kbpf-trace: a
 * directory made private (0700) and checked to be the user's own, one file
 * per process image named DIR/<exe>.<pid>.<n>.msgpack[.gz], a file named
 * by a template, or a connection to `kanalyze --listen` at unix:PATH whose
 * listener must be the user's own (or root's).
 *
 * Free of libc calls that make syscalls: every syscall goes through the
 * caller's `sys` function, which returns -errno on failure. The shim passes
 * its raw syscalls (so that its output process makes them, counted as the
 * shim's own); kbpf-trace passes kp_dest_libc_sys, syscall(2) underneath.
 */
#ifndef KPROF_TRACE_DEST_H
#define KPROF_TRACE_DEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A syscall: its result, or -errno. */
typedef long (*kp_dest_sys_fn)(long nr, long a1, long a2, long a3, long a4,
			       long a5, long a6);

/* syscall(2) with -errno results, for a producer that may use libc. */
long kp_dest_libc_sys(long nr, long a1, long a2, long a3, long a4, long a5,
		      long a6);

/* File names tried per process image (or template) before giving up. */
#define KP_DEST_NAMES 10000
/* The directory a producer falls back to when a listener cannot be
 * reached, relative to the working directory at start. */
#define KP_DEST_FALLBACK_DIR "kprof-trace"

/*
 * mkdir -p DIR with mode 0700, each directory it makes chmod'ed to 0700
 * whatever the program's umask; 0 or -errno.
 */
int kp_dest_mkdir(kp_dest_sys_fn sys, const char *dir);

/*
 * 0 when DIR may hold our traces: a directory owned by us, by root or by
 * also_uid (-1: nobody else), reached through no symlink that someone else
 * owns (one of ours is followed); -errno otherwise (-EPERM: another user's,
 * -ELOOP: another user's link, -ENOTDIR). A directory another user made
 * in /tmp could be theirs to read or swap.
 */
int kp_dest_check_dir(kp_dest_sys_fn sys, const char *dir, long also_uid);

/*
 * "DIR/<basename of exe>.<pid>" into head (cap bytes), "unknown" for an
 * empty exe; false when it does not fit.
 */
bool kp_dest_head(char *head, size_t cap, const char *dir, const char *exe,
		  uint64_t pid);

/*
 * Creates the first of head[.N]suffix that does not exist yet (N from 0,
 * without ".0" unless dot_zero, up to KP_DEST_NAMES), 0600, O_EXCL and
 * O_NOFOLLOW; its name into path (cap bytes). The fd, or -errno (-EEXIST:
 * every name taken).
 */
int kp_dest_create(kp_dest_sys_fn sys, char *path, size_t cap, const char *head,
		   bool dot_zero, const char *suffix);

/* The suffix a template or file name ends in: ".msgpack.gz", ".msgpack",
 * ".gz" or "". */
const char *kp_dest_suffix(const char *name);

/*
 * Connects to the listener at PATH (without "unix:"): the socket's fd, or
 * -errno. The listener must be root, us, or also_uid (kbpf-trace under
 * sudo: the invoking user; -1: nobody else): -EPERM otherwise, because it
 * would receive every traced command line, path and timing.
 */
int kp_dest_connect(kp_dest_sys_fn sys, const char *path, long also_uid);

#endif
