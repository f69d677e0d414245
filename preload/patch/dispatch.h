/* SPDX-License-Identifier: MIT */
/*
 * Syscall User Dispatch under patch mode (dispatch.c): the syscall
 * instructions no jump replaced reach the hook through SIGSYS.
 */
#ifndef KPROF_PATCH_DISPATCH_H
#define KPROF_PATCH_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>

/* Dispatch is armed (patch mode, a kernel that has it). */
extern bool kp_sud_on;

/*
 * What dispatch needs of the mode that starts it (rewrite/setup.c): patch
 * is a layer below rewrite, and reaches it only through these.
 */
struct kp_sud_host {
	uint64_t entry;		/* a trampoline calls it (kp_rw_entry) */
	/* the shim's own code, whose syscalls dispatch lets through */
	uint64_t text_start, text_end;
	/* a trampoline's key made known to the hook: 0 or -errno */
	int (*site_add)(uint64_t key);
	void (*lock)(void), (*unlock)(void); /* serialize with the scans */
	void (*count_sigreturn)(void); /* an rt_sigreturn that trapped */
};

/* Installs the SIGSYS handler and arms the calling thread: 0 or -errno
 * (-EINVAL: a kernel without Syscall User Dispatch). */
int kp_sud_start(const struct kp_sud_host *host);
/* Arms the calling thread (a new thread, at its first hooked call). */
void kp_sud_arm_thread(void);
/* In a fork child, from the hook's fork path. */
void kp_sud_after_fork_child(void);

/*
 * The program's signal calls while dispatch is on (hook.c): its SIGSYS
 * action is kept here; SIGSYS never blocked for real. call makes the
 * syscall with the (possibly replaced) pointer arguments.
 */
typedef long (*kp_sud_call_fn)(void *ctx, uint64_t x, uint64_t y);
long kp_sud_sigaction(long sig, uint64_t act, uint64_t old, uint64_t size,
		      kp_sud_call_fn call, void *ctx);
long kp_sud_sigprocmask(long how, uint64_t set, uint64_t old, uint64_t size,
			kp_sud_call_fn call, void *ctx);
long kp_sud_sigsuspend(uint64_t set, uint64_t size, kp_sud_call_fn call, void *ctx);
/* After a call made through the hook (hook.c, kp_rw_post): a read of the
 * process's own /proc status gets the program's SIGSYS disposition. */
void kp_sud_after_call(uint64_t nr, const uint64_t *args, long result);
/* Some descriptor was opened on the process's own /proc status. */
extern bool kp_sud_status_marked;
/* Whether kp_sud_after_call has anything to do with a call of nr: opens
 * and copies of descriptors; reads once a status file was opened. Inline,
 * so that the hot path makes no call for the rest. */
static inline __attribute__((always_inline)) bool kp_sud_watches(uint64_t nr)
{
	if (nr == SYS_read || nr == SYS_pread64)
		return __atomic_load_n(&kp_sud_status_marked, __ATOMIC_RELAXED);
	return nr == SYS_openat || nr == SYS_open || nr == SYS_dup || nr == SYS_dup2 ||
	       nr == SYS_dup3 || nr == SYS_fcntl;
}
/* Around execve: the new image gets the mask the program believes in. */
void kp_sud_before_exec(void);
void kp_sud_exec_failed(void);

/* Where a clone child on a new stack returns to: past a dispatch
 * trampoline's stack adjustment (the child's stack is its own). */
uint64_t kp_sud_return(uint64_t ret_addr);
/* The shim went passive: no syscall instruction is dispatched any more
 * (the selector opens, for every thread at once). */
void kp_sud_passive(void);
/* A dispatch trampoline for the syscall at site (dispatch.c's layout)
 * into b (64 bytes); *key: the hook's key, relative to b. Its length. */
int kp_sud_tramp_write(uint8_t *b, uint64_t site, uint64_t entry, uint64_t *key);

#endif
