/* SPDX-License-Identifier: MIT */
/*
 * The entry of rewrite mode (rewrite.h). A rewritten site is `call *%rax`
 * with rax the syscall number; the page at 0 leads it here with the
 * return address (site + 2) on the stack. Everything else is as the
 * program left it for the kernel: arguments in rdi rsi rdx r10 r8 r9,
 * rcx and r11 free (the kernel would clobber them; the page's stub used
 * r11).
 *
 * The red zone: the call wrote its return address into the 8 bytes under
 * the caller's rsp; the other 120 bytes of the zone are left alone (the
 * frame goes below them). On the way back the return address is taken
 * from the frame, not from that slot: a syscall that writes its result
 * into the red zone (sigaltstack's old stack in ____longjmp_chk) may have
 * overwritten it. The way back is `jmp *%rcx`, never `ret`: a `ret` to an
 * address pushed before a syscall is mispredicted on this kind of host
 * (the kernel entry leaves the return predictor empty; measured 30-50 ns
 * per call more than the jump), and rcx then holds what the kernel would
 * have left there, the address after the site. Sites whose function keeps
 * live data in the slot itself are not rewritten (scan.c).
 *
 * Registers: the C hook preserves rbx, rbp, r12-r15; rdi..r9 and
 * xmm0-15 are saved in the frame and put back (the kernel preserves them
 * across a syscall and compilers rely on it). rcx and r11 come back
 * clobbered, as from the kernel.
 *
 * Paths that cannot return through C:
 *  - rt_sigreturn: made on the exact stack the kernel's signal frame is on;
 *  - clone/clone3 with a child stack: the child starts on the new stack
 *    with the caller's registers, so the syscall is made here with the
 *    caller's registers restored; kp_rw_hook() put the return address and
 *    the replaced argument (rsi for clone, rdi for clone3, whose struct it
 *    copied) at the top of the child's stack, which the child pops;
 *  - vfork-like (no child stack, shared memory): the child runs on the
 *    caller's stack and overwrites everything below it, the frame
 *    included; the return address waits in TLS (kp_rw_vfork_ret), the
 *    syscall is made with the caller's own rsp, and the parent builds a
 *    fresh frame when it resumes.
 */
#include "rewrite.h"
#include "../core/stack.h"

#if defined(__x86_64__)

#define SYS_RT_SIGRETURN 15

.macro SAVE_ARGS
	movq	%rdi, KP_RW_F_ARGS+0(%rsp)
	movq	%rsi, KP_RW_F_ARGS+8(%rsp)
	movq	%rdx, KP_RW_F_ARGS+16(%rsp)
	movq	%r10, KP_RW_F_ARGS+24(%rsp)
	movq	%r8, KP_RW_F_ARGS+32(%rsp)
	movq	%r9, KP_RW_F_ARGS+40(%rsp)
.endm

.macro RESTORE_ARGS
	movq	KP_RW_F_ARGS+0(%rsp), %rdi
	movq	KP_RW_F_ARGS+8(%rsp), %rsi
	movq	KP_RW_F_ARGS+16(%rsp), %rdx
	movq	KP_RW_F_ARGS+24(%rsp), %r10
	movq	KP_RW_F_ARGS+32(%rsp), %r8
	movq	KP_RW_F_ARGS+40(%rsp), %r9
.endm

.macro SAVE_XMM
	movaps	%xmm0, KP_RW_F_XMM+0(%rsp)
	movaps	%xmm1, KP_RW_F_XMM+16(%rsp)
	movaps	%xmm2, KP_RW_F_XMM+32(%rsp)
	movaps	%xmm3, KP_RW_F_XMM+48(%rsp)
	movaps	%xmm4, KP_RW_F_XMM+64(%rsp)
	movaps	%xmm5, KP_RW_F_XMM+80(%rsp)
	movaps	%xmm6, KP_RW_F_XMM+96(%rsp)
	movaps	%xmm7, KP_RW_F_XMM+112(%rsp)
	movaps	%xmm8, KP_RW_F_XMM+128(%rsp)
	movaps	%xmm9, KP_RW_F_XMM+144(%rsp)
	movaps	%xmm10, KP_RW_F_XMM+160(%rsp)
	movaps	%xmm11, KP_RW_F_XMM+176(%rsp)
	movaps	%xmm12, KP_RW_F_XMM+192(%rsp)
	movaps	%xmm13, KP_RW_F_XMM+208(%rsp)
	movaps	%xmm14, KP_RW_F_XMM+224(%rsp)
	movaps	%xmm15, KP_RW_F_XMM+240(%rsp)
.endm

.macro RESTORE_XMM
	movaps	KP_RW_F_XMM+0(%rsp), %xmm0
	movaps	KP_RW_F_XMM+16(%rsp), %xmm1
	movaps	KP_RW_F_XMM+32(%rsp), %xmm2
	movaps	KP_RW_F_XMM+48(%rsp), %xmm3
	movaps	KP_RW_F_XMM+64(%rsp), %xmm4
	movaps	KP_RW_F_XMM+80(%rsp), %xmm5
	movaps	KP_RW_F_XMM+96(%rsp), %xmm6
	movaps	KP_RW_F_XMM+112(%rsp), %xmm7
	movaps	KP_RW_F_XMM+128(%rsp), %xmm8
	movaps	KP_RW_F_XMM+144(%rsp), %xmm9
	movaps	KP_RW_F_XMM+160(%rsp), %xmm10
	movaps	KP_RW_F_XMM+176(%rsp), %xmm11
	movaps	KP_RW_F_XMM+192(%rsp), %xmm12
	movaps	KP_RW_F_XMM+208(%rsp), %xmm13
	movaps	KP_RW_F_XMM+224(%rsp), %xmm14
	movaps	KP_RW_F_XMM+240(%rsp), %xmm15
.endm

/*
 * r11 = the caller's rsp - 8. Moves rsp to a 16-aligned frame and writes
 * its F_SP and F_DEPTH; clobbers rcx only. Where the frame goes
 * (core/stack.h):
 *  - the caller is on the shim stack (a signal handler that interrupted
 *    the shim): below the caller's red zone, one level deeper;
 *  - nothing is live on the shim stack: at its top, depth 1, set before
 *    rsp moves (a handler on an alternate stack arriving in between then
 *    keeps off it);
 *  - else (no shim stack yet, or frames live on it and the caller on
 *    another stack): below the caller's red zone, where it is, and
 *    F_DEPTH -1 (kp_rw_hook checks for frames a longjmp left).
 */
.macro BUILD_FRAME
	movq	kp_stack@gottpoff(%rip), %rcx
	cmpq	%fs:KP_STACK_LO(%rcx), %r11
	jb	.Loutside\@
	cmpq	%fs:KP_STACK_HI(%rcx), %r11
	jae	.Loutside\@
	incl	%fs:KP_STACK_DEPTH(%rcx)
	leaq	-(120 + KP_RW_F_SIZE)(%r11), %rsp
	andq	$-16, %rsp
	movl	%fs:KP_STACK_DEPTH(%rcx), %ecx
	decl	%ecx
	movq	%rcx, KP_RW_F_DEPTH(%rsp)
	jmp	.Lplaced\@
.Loutside\@:
	cmpq	$0, %fs:KP_STACK_HI(%rcx)
	je	.Lhere\@
	cmpl	$0, %fs:KP_STACK_DEPTH(%rcx)
	jne	.Lhere\@
	movl	$1, %fs:KP_STACK_DEPTH(%rcx)
	movq	%fs:KP_STACK_HI(%rcx), %rsp
	subq	$KP_RW_F_SIZE, %rsp
	andq	$-16, %rsp
	movq	$0, KP_RW_F_DEPTH(%rsp)
	jmp	.Lplaced\@
.Lhere\@:
	leaq	-(120 + KP_RW_F_SIZE)(%r11), %rsp
	andq	$-16, %rsp
	movq	$-1, KP_RW_F_DEPTH(%rsp)
.Lplaced\@:
	movq	%r11, KP_RW_F_SP(%rsp)
.endm

/*
 * rsp = the caller's rsp - 8 (the slot the call wrote), r11 = F_DEPTH of
 * the frame just left: the shim stack's depth back to what the frame
 * found. rcx is kept through the slot; the slot itself already held the
 * return address (scan.c leaves out the sites whose function keeps data
 * there).
 */
.macro POP_DEPTH
	testq	%r11, %r11
	js	.Lno_pop\@
	movq	%rcx, (%rsp)
	movq	kp_stack@gottpoff(%rip), %rcx
	movl	%r11d, %fs:KP_STACK_DEPTH(%rcx)
	movq	(%rsp), %rcx
.Lno_pop\@:
.endm

/* CFA = frame.sp + 8: DW_CFA_def_cfa_expression (breg7 72; deref; plus 8) */
.macro CFA_FROM_FRAME
	.cfi_escape 0x0f, 0x06, 0x77, 0xc8, 0x00, 0x06, 0x23, 0x08
.endm

	/* next to kp_rw_hook, in the page of the hot path (rewrite.h) */
	.section .text.hot.kp_rw, "ax", @progbits
	.globl	kp_rw_entry
	.hidden	kp_rw_entry
	.type	kp_rw_entry, @function
	.p2align 4
kp_rw_entry:
	.cfi_startproc
	cmpq	$SYS_RT_SIGRETURN, %rax
	je	.Lsigreturn
	movq	%rsp, %r11
	.cfi_def_cfa %r11, 8
	BUILD_FRAME
	CFA_FROM_FRAME
	movq	%rax, KP_RW_F_NR(%rsp)
	SAVE_ARGS
	movq	(%r11), %rcx
	movq	%rcx, KP_RW_F_RET(%rsp)
	SAVE_XMM
	movq	%rsp, %rdi
	call	kp_rw_hook
	cmpl	$KP_RW_SYSCALL, %eax
	jne	.Lnot_plain
	/* the call, then the accounting (a call that returns predictably) */
	RESTORE_ARGS
	movq	KP_RW_F_NR(%rsp), %rax
	syscall
	movq	%rax, KP_RW_F_RESULT(%rsp)
	movq	%rsp, %rdi
	call	kp_rw_post
.Lreturn:
	RESTORE_XMM
	RESTORE_ARGS
	movq	KP_RW_F_DEPTH(%rsp), %r11
	movq	KP_RW_F_RET(%rsp), %rcx
	movq	KP_RW_F_RESULT(%rsp), %rax
	movq	KP_RW_F_SP(%rsp), %rsp
	.cfi_remember_state
	.cfi_def_cfa %rsp, 8
	POP_DEPTH
	leaq	8(%rsp), %rsp
	.cfi_def_cfa_offset 0
	.cfi_register %rip, %rcx
	jmp	*%rcx
	.cfi_restore_state

.Lnot_plain:
	testl	%eax, %eax
	jz	.Lreturn
	cmpl	$KP_RW_CLONE_STACK, %eax
	je	.Lclone
	cmpl	$KP_RW_CLONE3_STACK, %eax
	je	.Lclone3
	cmpl	$KP_RW_VFORK, %eax
	je	.Lvfork
	cmpl	$KP_RW_EXIT, %eax
	je	.Lexit
	/* KP_RW_NOT_SITE: a call of a small address, not a rewritten site */
	RESTORE_XMM
	RESTORE_ARGS
	movq	KP_RW_F_DEPTH(%rsp), %r11
	movq	KP_RW_F_NR(%rsp), %rax
	movq	KP_RW_F_SP(%rsp), %rsp
	.cfi_remember_state
	.cfi_def_cfa %rsp, 8
	POP_DEPTH
.Lfault:
	/* fault as the call would have: a jump to a non-canonical address */
	movabsq	$0x8000000000000000, %rcx
	jmp	*%rcx
	.cfi_restore_state

.Lclone:
	RESTORE_XMM
	RESTORE_ARGS
	movq	KP_RW_F_NR(%rsp), %rax
	syscall
	testq	%rax, %rax
	jz	.Lclone_child
	movq	%rax, KP_RW_F_RESULT(%rsp)
	movq	%rsp, %rdi
	call	kp_rw_clone_parent
	jmp	.Lreturn
.Lclone_child:
	.cfi_remember_state
	.cfi_def_cfa %rsp, 16
	.cfi_offset %rip, -8
	popq	%rsi
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state

.Lclone3:
	RESTORE_XMM
	RESTORE_ARGS
	movq	KP_RW_F_NR(%rsp), %rax
	syscall
	testq	%rax, %rax
	jz	.Lclone3_child
	movq	%rax, KP_RW_F_RESULT(%rsp)
	movq	%rsp, %rdi
	call	kp_rw_clone_parent
	jmp	.Lreturn
.Lclone3_child:
	.cfi_remember_state
	.cfi_def_cfa %rsp, 16
	.cfi_offset %rip, -8
	popq	%rdi
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state

.Lvfork:
	RESTORE_XMM
	RESTORE_ARGS
	movq	KP_RW_F_DEPTH(%rsp), %r11
	movq	KP_RW_F_NR(%rsp), %rax
	movq	KP_RW_F_SP(%rsp), %rsp
	/* the frame is left: the child may run on the shim stack */
	POP_DEPTH
	leaq	8(%rsp), %rsp
	/* the return address is in TLS from here on */
	.cfi_remember_state
	.cfi_def_cfa %rsp, 0
	.cfi_undefined %rip
	syscall
	testq	%rax, %rax
	jz	.Lvfork_child
	/* the parent, resumed after the child's exec or exit */
	leaq	-8(%rsp), %r11
	BUILD_FRAME
	movq	%rax, KP_RW_F_RESULT(%rsp)
	SAVE_ARGS
	SAVE_XMM
	movq	%rsp, %rdi
	call	kp_rw_vfork_parent
	jmp	.Lreturn
.Lvfork_child:
	movq	kp_rw_vfork_ret@gottpoff(%rip), %rcx
	movq	%fs:(%rcx), %rcx
	jmp	*%rcx
	.cfi_restore_state

.Lexit:
	/* the thread's exit, made off the shim stack: once the block is
	 * EXITED, the flusher may give it and its stack to a new thread */
	RESTORE_ARGS
	movq	KP_RW_F_SAVED_SELF(%rsp), %rcx
	movq	KP_RW_F_NR(%rsp), %rax
	movq	KP_RW_F_SP(%rsp), %rsp
	.cfi_def_cfa %rsp, 8
	testq	%rcx, %rcx
	jz	.Lexit_call
	movl	$KP_THREAD_EXITED, KP_THREAD_STATE_OFFSET(%rcx)
.Lexit_call:
	leaq	8(%rsp), %rsp
	.cfi_def_cfa_offset 0
	syscall
	ud2

.Lsigreturn:
	/* rsp = the signal frame - 8; nothing of the caller's is live */
	.cfi_def_cfa %rsp, 8
	movq	%rsp, %rbx
	.cfi_def_cfa %rbx, 8
	movq	(%rsp), %rdi
	leaq	-128(%rsp), %rsp
	andq	$-16, %rsp
	call	kp_rw_sigreturn
	testl	%eax, %eax
	movq	%rbx, %rsp
	.cfi_def_cfa %rsp, 8
	jz	.Lsigreturn_not_site
	leaq	8(%rsp), %rsp
	movl	$SYS_RT_SIGRETURN, %eax
	syscall
	ud2
.Lsigreturn_not_site:
	movl	$SYS_RT_SIGRETURN, %eax
	jmp	.Lfault
	.cfi_endproc
	.size	kp_rw_entry, .-kp_rw_entry

	.section .note.GNU-stack, "", @progbits
#endif
