/* SPDX-License-Identifier: MIT */
/*
 * The vfork hook. It cannot be C: the child runs on the parent's stack until
 * it execs or exits, so a C frame that the child returns through is gone
 * when the parent resumes. Like glibc's own vfork, the return address is
 * kept in a register across the syscall (%rdi: the kernel restores all but
 * rcx/r11/rax, separately for child and parent) and pushed back after it.
 * kp_vfork_enter marks the TLS "vfork child" so that the child's hooked
 * calls pass through uncounted; kp_vfork_leave (parent only) clears it,
 * accounts the call and sets errno.
 */
#if defined(__x86_64__)
#include <sys/syscall.h>

	.text
	.globl	vfork
	.type	vfork, @function
	.p2align 4
vfork:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	kp_vfork_enter
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rdi
	movl	$SYS_vfork, %eax
	syscall
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rip, 0
	testq	%rax, %rax
	jz	1f
	/* parent (or failure) */
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movq	%rax, %rdi
	call	kp_vfork_leave
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
1:	/* child: straight back to the caller, touching nothing */
	ret
	.cfi_endproc
	.size	vfork, .-vfork

	.section .note.GNU-stack, "", @progbits
#endif
