/* SPDX-License-Identifier: MIT */
/*
 * The bottom of the shim (core layer): raw syscalls, which the shim's own
 * I/O uses instead of libc, the process-wide tracing state and the
 * per-thread flags that every layer reads, and the counters of the shim's
 * own calls that kp_raw() bumps (written as the `own` record by the sink).
 * The state variables are defined in core/state.c; the layers above set
 * them (lifecycle/init.c, the front ends).
 */
#ifndef KPROF_CORE_RAW_H
#define KPROF_CORE_RAW_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/syscall.h>

#include "arch_syscalls.h"
#include "syscalls.h"

#define KP_EXPORT __attribute__((visibility("default")))
#define KP_COMMA ,
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define kp_barrier() __asm__ __volatile__("" ::: "memory")

/* ---- raw syscalls: the shim's own I/O never goes through libc ---- */

static inline long kp_raw_syscall6(long nr, long a1, long a2, long a3, long a4,
				   long a5, long a6)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ __volatile__("svc 0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
			       "r"(x5)
			     : "memory");
	return x0;
#else
#error "kprof: no raw syscall for this architecture"
#endif
}

#define KP_RAW_A(...) KP_RAW_A_(0, ##__VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define KP_RAW_A_(d, a1, a2, a3, a4, a5, a6, ...)                              \
	(long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5), (long)(a6)
/* kp_raw(SYS_x, args...): -errno on failure, errno untouched. */
/* The shim's own calls, counted for the `own` record (sink/own_calls.c). */
#define kp_raw(nr, ...) kp_own_syscall6((nr), KP_RAW_A(__VA_ARGS__))
#define kp_raw0(nr) kp_own_syscall6((nr), 0, 0, 0, 0, 0, 0)

/* v in decimal in buf, returned from where it starts; no libc (usable in
 * hooks and in the output process). */
static inline const char *kp_u64_dec(char buf[24], uint64_t v)
{
	char *p = buf + 23;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}


/* ---- tracing state (core/state.c) ---- */

/* TLS flags that send a hook on the slow path. */
enum {
	KP_TLS_IN_INIT = 1,	  /* resolving real functions on this thread */
	KP_TLS_ATTACHING = 2,	  /* getting this thread's block */
	KP_TLS_EXITING = 4,	  /* after the pthread key destructor */
	KP_TLS_VFORK_CHILD = 8,	  /* between vfork and exec in the child */
	KP_TLS_FLUSHING = 16,	  /* this thread holds the flush lock */
};

extern __thread unsigned kp_tls_flags;

enum { KP_UNINIT, KP_ACTIVE, KP_PASSIVE };
extern volatile int kp_state;

/*
 * Rewrite mode runs (set once, by rewrite/setup.c's kp_rw_start): the
 * syscall-level hook accounts every call and the symbol hooks pass theirs
 * through. Read by every layer, so it lives here.
 */
extern bool kp_rw_active;

/*
 * The syscalls the shim makes for itself (trace output, /proc reads,
 * rewriting code), per number, from the first line of its start-up on:
 * written as the `own` record so that a comparison with a kernel-side
 * trace accounts for every one of them (sink/own_calls.c). Not counted: a
 * vfork child's (another process, same memory) and those made once the
 * shim went passive (its output process writing a dead program's batch).
 */
extern uint64_t kp_own_calls[KP_SYSCALL_MAX];
/* CLOCK_MONOTONIC ns when the shim's start-up began in this image (a
 * fork child: the fork); the process's calls before it are the loader's. */
extern uint64_t kp_own_startup_ns;
static inline bool kp_own_counting(void)
{
	return kp_state != KP_PASSIVE && !(kp_tls_flags & KP_TLS_VFORK_CHILD);
}
static inline long kp_own_syscall6(long nr, long a1, long a2, long a3, long a4,
				   long a5, long a6)
{
	if ((unsigned long)nr < KP_SYSCALL_MAX && kp_own_counting())
		__atomic_fetch_add(&kp_own_calls[nr], 1, __ATOMIC_RELAXED);
	return kp_raw_syscall6(nr, a1, a2, a3, a4, a5, a6);
}

#endif
