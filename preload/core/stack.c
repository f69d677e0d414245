/* SPDX-License-Identifier: MIT */
/*
 * The shim's per-thread stack (stack.h): its TLS record, and what the
 * rare paths around it need in C. The switch itself is stack_switch.S
 * (for C callers) and rewrite/entry.S (for rewritten sites).
 */
#include <signal.h>

#include "base.h"
#include "stack.h"

__thread struct kp_stack kp_stack;

_Static_assert(__builtin_offsetof(struct kp_stack, lo) == KP_STACK_LO, "kp_stack");
_Static_assert(__builtin_offsetof(struct kp_stack, hi) == KP_STACK_HI, "kp_stack");
_Static_assert(__builtin_offsetof(struct kp_stack, depth) == KP_STACK_DEPTH, "kp_stack");

void kp_stack_attach(uint64_t lo, uint64_t hi)
{
	/* a thread attaching again keeps what it runs on */
	if (kp_stack.hi)
		return;
	kp_stack.depth = 0;
	kp_stack.lo = lo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	kp_stack.hi = hi;
}

void kp_stack_detach(void)
{
	/* hi first: with hi 0 nothing moves to the stack any more */
	kp_stack.hi = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	kp_stack.lo = 0;
	kp_stack.depth = 0;
}

void kp_stack_check_stale(uint64_t sp)
{
	if (!kp_stack.depth || kp_stack_holds(sp))
		return;
	/* a vfork child runs on the TLS of a parent suspended in the shim */
	if (kp_tls_flags & KP_TLS_VFORK_CHILD)
		return;
	/* SS_ONSTACK: the kernel says this thread runs on its sigaltstack,
	 * a handler that may have interrupted a live frame */
	stack_t ss;
	if (kp_raw(SYS_sigaltstack, NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
		return;
	kp_stack.depth = 0;
}

void kp_stack_run(void (*fn)(void *), void *arg)
{
	if (kp_stack.depth)
		kp_stack_check_stale((uint64_t)(uintptr_t)__builtin_frame_address(0));
	kp_stack_call(fn, arg);
}

#if !defined(__x86_64__)
/* Elsewhere the hooks run on the caller's stack. */
void kp_stack_call(void (*fn)(void *), void *arg)
{
	fn(arg);
}
#endif
