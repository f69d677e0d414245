/* SPDX-License-Identifier: MIT */
/*
 * The exported syscall(). syscall(SYS_vfork) must not run with a frame of
 * ours on the stack: the vfork child runs on it until it execs, and the
 * parent would return through what the child left there (the C hook,
 * variadic.c's kp_syscall_hook, has a frame). It goes to the vfork
 * hook (vfork.S), which is built for that, with the caller's stack as it
 * was; everything else tail-jumps to the C hook.
 */
#if defined(__x86_64__)
#include <sys/syscall.h>

	.text
	.globl	syscall
	.type	syscall, @function
	.p2align 4
syscall:
	.cfi_startproc
	cmpq	$SYS_vfork, %rdi
	je	vfork
	jmp	kp_syscall_hook
	.cfi_endproc
	.size	syscall, .-syscall

	.section .note.GNU-stack, "", @progbits
#endif
