/* SPDX-License-Identifier: MIT */
/*
 * kp_stack_call(fn, arg): fn(arg) on this thread's shim stack (stack.h).
 * Called from C (a flush, from a symbol hook or an exit path), so the
 * ordinary ABI holds: rbx and rbp are ours to save, the red zone is ours.
 *
 * Directly, where called: when the thread has no shim stack, when it is
 * on it already, or when frames are live on it (depth > 0: this call
 * comes from a signal handler on another stack). Otherwise depth goes to
 * 1 before rsp moves (a handler on an alternate stack arriving in between
 * then stays off the shim stack) and back to 0 after rsp is back.
 */
#include "stack.h"

#if defined(__x86_64__)
	.text
	.globl	kp_stack_call
	.hidden	kp_stack_call
	.type	kp_stack_call, @function
	.p2align 4
kp_stack_call:
	.cfi_startproc
	movq	kp_stack@gottpoff(%rip), %rax
	cmpq	$0, %fs:KP_STACK_HI(%rax)
	je	.Ldirect
	cmpq	%fs:KP_STACK_LO(%rax), %rsp
	jb	.Loutside
	cmpq	%fs:KP_STACK_HI(%rax), %rsp
	jb	.Ldirect
.Loutside:
	cmpl	$0, %fs:KP_STACK_DEPTH(%rax)
	jne	.Ldirect
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	movq	%rax, %rbx
	movl	$1, %fs:KP_STACK_DEPTH(%rbx)
	movq	%fs:KP_STACK_HI(%rbx), %rsp
	andq	$-16, %rsp
	movq	%rdi, %rax
	movq	%rsi, %rdi
	call	*%rax
	leaq	-8(%rbp), %rsp
	movl	$0, %fs:KP_STACK_DEPTH(%rbx)
	popq	%rbx
	.cfi_restore %rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
.Ldirect:
	movq	%rdi, %rax
	movq	%rsi, %rdi
	jmp	*%rax
	.cfi_endproc
	.size	kp_stack_call, .-kp_stack_call

	.section .note.GNU-stack, "", @progbits
#endif
