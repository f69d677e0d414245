/* SPDX-License-Identifier: MIT */
#if defined(__x86_64__)
#define SYS_RT_SIGRETURN 15

/*
 * Syscall User Dispatch (dispatch.c), patch mode's net. Both make
 * rt_sigreturn from the shim's code, which dispatch lets through: the
 * restorer of the SIGSYS handler, and an rt_sigreturn that trapped, made
 * on the program's stack where its signal frame is (rdi: that rsp).
 */
	.text
	.globl	kp_sud_restorer
	.hidden	kp_sud_restorer
	.type	kp_sud_restorer, @function
	.p2align 4
kp_sud_restorer:
	/* glibc's bytes: unwinders know a signal frame by them */
	movq	$SYS_RT_SIGRETURN, %rax
	syscall
	ud2
	.size	kp_sud_restorer, .-kp_sud_restorer

	.globl	kp_sud_sigreturn
	.hidden	kp_sud_sigreturn
	.type	kp_sud_sigreturn, @function
	.p2align 4
kp_sud_sigreturn:
	movq	%rdi, %rsp
	movl	$SYS_RT_SIGRETURN, %eax
	syscall
	ud2
	.size	kp_sud_sigreturn, .-kp_sud_sigreturn

	.section .note.GNU-stack, "", @progbits
#endif
