/* SPDX-License-Identifier: MIT */
/*
 * Starting the output process (output_proc.c). A clone with a stack of its
 * own cannot be made from C: the child returns from the syscall on the new
 * stack, where no C frame of the caller exists. Like glibc's clone(), the
 * function and its argument travel on the child's stack and the child calls
 * the function and exits with its result; unlike glibc's, nothing here is a
 * libc function that the shim hooks or rewrite mode rewrites.
 *
 *   long kp_outproc_clone(unsigned long flags, void *stack_top,
 *                         int (*fn)(void *), void *arg);
 *   parent: the child's pid or -errno; the child never returns.
 *
 * kp_outproc_restorer is the sa_restorer of the output process's one
 * signal handler (x86_64 requires one; arm64 uses the vDSO's).
 */
#include <sys/syscall.h>

#if defined(__x86_64__)
	.text
	.globl	kp_outproc_clone
	.hidden	kp_outproc_clone
	.type	kp_outproc_clone, @function
	.p2align 4
kp_outproc_clone:
	.cfi_startproc
	andq	$-16, %rsi
	subq	$16, %rsi
	movq	%rdx, 0(%rsi)
	movq	%rcx, 8(%rsi)
	/* clone(flags, newsp, parent_tid, child_tid, tls) */
	xorl	%edx, %edx
	xorl	%r10d, %r10d
	xorl	%r8d, %r8d
	movl	$SYS_clone, %eax
	syscall
	testq	%rax, %rax
	jz	1f
	ret
1:	/* the child, on its own stack: no frame to return to */
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	popq	%rax
	popq	%rdi
	call	*%rax
	movl	%eax, %edi
	movl	$SYS_exit, %eax
	syscall
	hlt
	.cfi_endproc
	.size	kp_outproc_clone, .-kp_outproc_clone

	.globl	kp_outproc_restorer
	.hidden	kp_outproc_restorer
	.type	kp_outproc_restorer, @function
	.p2align 4
kp_outproc_restorer:
	movl	$SYS_rt_sigreturn, %eax
	syscall
	hlt
	.size	kp_outproc_restorer, .-kp_outproc_restorer

#elif defined(__aarch64__)
	.text
	.globl	kp_outproc_clone
	.hidden	kp_outproc_clone
	.type	kp_outproc_clone, %function
	.p2align 4
kp_outproc_clone:
	and	x1, x1, #-16
	stp	x2, x3, [x1, #-16]!
	/* clone(flags, newsp, parent_tid, tls, child_tid) */
	mov	x2, xzr
	mov	x3, xzr
	mov	x4, xzr
	mov	x8, #SYS_clone
	svc	#0
	cbz	x0, 1f
	ret
1:	mov	x29, xzr
	mov	x30, xzr
	ldp	x2, x0, [sp], #16
	blr	x2
	mov	x8, #SYS_exit
	svc	#0
	brk	#0
	.size	kp_outproc_clone, .-kp_outproc_clone

	.globl	kp_outproc_restorer
	.hidden	kp_outproc_restorer
	.type	kp_outproc_restorer, %function
kp_outproc_restorer:
	mov	x8, #SYS_rt_sigreturn
	svc	#0
	brk	#0
	.size	kp_outproc_restorer, .-kp_outproc_restorer
#endif

	.section .note.GNU-stack, "", @progbits
