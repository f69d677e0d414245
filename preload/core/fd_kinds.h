/* SPDX-License-Identifier: MIT */
/*
 * The kind of each of the process's descriptors (file, pipe, socket,
 * other), for the `kinds` counters of the aggregates and the kind element
 * of events (docs/FORMAT.md). A byte per descriptor number in .bss (only
 * the pages of numbers in use become resident); numbers beyond the table
 * count as "other". Threads update it with relaxed byte stores after the
 * call that changed the descriptor: two threads racing on one number are
 * racing in the kernel as well. Mostly the loser leaves "unknown", which
 * the next call on that descriptor classifies again; a close racing the
 * first use of the same descriptor on another thread may leave the old
 * kind until a hooked call makes, duplicates onto or closes that number.
 * Both front ends feed it: the symbol hooks and rewrite mode's raw
 * syscalls too (kp_fd_kinds_note).
 */
#ifndef KPROF_FD_KINDS_H
#define KPROF_FD_KINDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "record_schema.h" /* KP_KIND_* */
#include "syscalls.h"

#define KP_FD_TABLE 65536

/* KP_KIND_FILE..KP_KIND_OTHER, or KP_KIND_NONE: not known (yet). */
extern uint8_t kp_fd_kinds[KP_FD_TABLE];
/* Syscalls whose first argument is a descriptor (kp_syscall_fd_arg). */
extern uint64_t kp_fd_arg_bits[KP_SYSCALL_MAX / 64];

/* Start-up: the bitmap of calls whose first argument is a descriptor. */
void kp_fd_kinds_init(void);

/*
 * After syscall nr returned ret (-errno on failure) with arguments args
 * (the kernel's, in its order): records the descriptors it created,
 * duplicated or closed. Cheap for every other nr; reads the caller's
 * memory only where the kernel wrote descriptors into it (pipe2,
 * socketpair, recvmsg's SCM_RIGHTS, clone's pidfd).
 */
void kp_fd_kinds_note(unsigned nr, const long args[6], long ret);

/*
 * The syscalls kp_fd_kinds_note() acts on, one list for both hook modes:
 * X(name) per syscall. The legacy calls exist on x86_64 only; the recent
 * ones need kernel headers of 5.14 or later.
 */
#define KP_FD_NOTED(X)                                                          \
	X(openat) X(close) X(close_range) X(open_by_handle_at) X(mq_open)       \
	X(bpf) X(seccomp) X(memfd_create) X(pipe2) X(socketpair) X(socket)     \
	X(accept) X(accept4) X(eventfd2) X(epoll_create1) X(timerfd_create)    \
	X(signalfd4) X(inotify_init1) X(fanotify_init) X(userfaultfd)          \
	X(perf_event_open) X(io_uring_setup) X(fstat) X(newfstatat) X(statx)  \
	X(dup) X(dup3) X(fcntl) X(recvmsg) X(recvmmsg) X(clone) X(clone3)      \
	KP_FD_NOTED_LEGACY(X) KP_FD_NOTED_RECENT(X)
#ifdef __NR_open
#define KP_FD_NOTED_LEGACY(X)                                                  \
	X(open) X(creat) X(pipe) X(dup2) X(eventfd) X(epoll_create)            \
	X(signalfd) X(inotify_init)
#else
#define KP_FD_NOTED_LEGACY(X)
#endif
#ifdef __NR_memfd_secret
#define KP_FD_NOTED_RECENT(X)                                                  \
	X(openat2) X(open_tree) X(fsopen) X(fsmount) X(fspick) X(pidfd_getfd)  \
	X(memfd_secret) X(landlock_create_ruleset) X(pidfd_open)
#else
#define KP_FD_NOTED_RECENT(X)
#endif

/*
 * Whether kp_fd_kinds_note() does anything for nr: the hooks call it only
 * then (a hook whose nr is a constant folds this away; for the rewrite
 * mode it spares the note's page, one more TLB miss per call).
 */
static inline __attribute__((always_inline)) bool kp_fd_kinds_touches(unsigned long nr)
{
	switch (nr) {
#define KP_FD_NOTED_CASE(name) case __NR_##name:
	KP_FD_NOTED(KP_FD_NOTED_CASE)
#undef KP_FD_NOTED_CASE
		return true;
	default:
		return false;
	}
}

/* What the program's own fstat of fd said (st_mode): its kind, for free. */
void kp_fd_kinds_stat(long fd, unsigned mode);

/* The kind of fd from its inode (one raw fstat); KP_KIND_NONE if not open. */
unsigned kp_fd_kind_of(long fd);

/* Not in the table yet: classify once and remember. */
unsigned kp_fd_kind_lazy(long fd);

/*
 * Calls fn for each descriptor open in the process, with its kind, from
 * /proc/self/fd with raw syscalls. -errno when /proc cannot be read.
 */
int kp_fd_scan(void (*fn)(void *ctx, int fd, unsigned kind), void *ctx);

/*
 * Hot path: the kind of the descriptor argument of syscall nr at the
 * moment of the call, KP_KIND_NONE for a syscall without one. A negative
 * descriptor (EBADF) and one beyond the table are "other"; a descriptor
 * the table does not know yet costs one fstat, once.
 */
static inline unsigned kp_fd_kind_at_call(unsigned nr, long fd)
{
	if (nr >= KP_SYSCALL_MAX || !((kp_fd_arg_bits[nr / 64] >> (nr % 64)) & 1))
		return KP_KIND_NONE;
	if ((unsigned long)fd >= KP_FD_TABLE)
		return KP_KIND_OTHER;
	unsigned kind = __atomic_load_n(&kp_fd_kinds[fd], __ATOMIC_RELAXED);
	if (__builtin_expect(kind != KP_KIND_NONE, 1))
		return kind;
	return kp_fd_kind_lazy(fd);
}

#endif
