/* SPDX-License-Identifier: MIT */
/*
 * The shim's own stack, one per thread (core/stack.c, stack_switch.S).
 *
 * A hook runs on whatever stack its call came from: a goroutine's 8 KiB,
 * a coroutine's or a green thread's stack, which the program sized for
 * its own code, not for the shim's bookkeeping and its periodic flush
 * (tens of KiB with compression). So each thread's block (account.c)
 * comes with a stack of KP_STACK_SIZE bytes above a guard page, and the
 * rewrite entry (rewrite/entry.S) and every flush (sink/flush.c) move to
 * it. What is left on the program's stack is the return address of the
 * rewritten call (8 bytes, in the top slot of its red zone, as before).
 *
 * Nesting. A signal can arrive while a thread runs on its shim stack, and
 * its handler can make calls that come back into the shim:
 *  - a handler without SA_ONSTACK runs on the shim stack itself, below
 *    the interrupted frames: such a call builds its frame below its own
 *    stack pointer (entry.S: "in range");
 *  - a handler on a sigaltstack (Go's gsignal stacks) comes from outside:
 *    `depth` says frames are live on the shim stack, so the call runs on
 *    the stack it came from, as the shim did before it had a stack.
 * depth counts the frames live on the shim stack; each frame restores the
 * value it found. A handler that longjmps out of a hook leaves depth
 * raised; the next call from outside that finds depth raised, neither on
 * an alternate signal stack nor in a vfork child (which shares the TLS of
 * a parent suspended inside the shim), knows those frames are gone and
 * puts depth back to 0 (kp_stack_check_stale).
 *
 * A thread has no shim stack before its first counted call gives it a
 * block, nor after its block ended (kp_thread_end): then lo = hi = 0 and
 * everything runs on the caller's stack.
 */
#ifndef KPROF_CORE_STACK_H
#define KPROF_CORE_STACK_H

/* 256 KiB of address space per thread; only the pages a flush or a
 * program's signal handler touched are ever resident. */
#define KP_STACK_SIZE (256 * 1024)
#define KP_STACK_GUARD 4096

/* Offsets in struct kp_stack, for the assembly. */
#define KP_STACK_LO 0
#define KP_STACK_HI 8
#define KP_STACK_DEPTH 16

/* A thread block's state word and its EXITED value (account.h), for
 * rewrite/entry.S, which ends a block once it has left the stack. */
#define KP_THREAD_STATE_OFFSET 8
#define KP_THREAD_EXITED 3

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

struct kp_stack {
	uint64_t lo;	/* lowest usable byte, 0: no stack */
	uint64_t hi;	/* the top, where the first frame starts */
	uint32_t depth; /* frames live on it */
	uint32_t spare;
};
extern __thread struct kp_stack kp_stack;

/* Runs fn(arg) on this thread's shim stack when it has one and is not on
 * it already, else where it is called (stack_switch.S). */
void kp_stack_call(void (*fn)(void *), void *arg);

/* kp_stack_call, after putting depth back to 0 if the frames it counts
 * were left by a longjmp (above). Not for the hot path. */
void kp_stack_run(void (*fn)(void *), void *arg);

/* A call came from outside the shim stack while depth says frames are
 * live on it: are they (a signal handler on an alternate stack, a vfork
 * child)? If not, depth goes back to 0. sp: the caller's stack pointer. */
void kp_stack_check_stale(uint64_t sp);

/* The stack that comes with a block at base (account.c). */
void kp_stack_attach(uint64_t lo, uint64_t hi);
void kp_stack_detach(void);

static inline bool kp_stack_holds(uint64_t sp)
{
	return sp >= kp_stack.lo && sp < kp_stack.hi;
}
#endif

#endif
