/* SPDX-License-Identifier: MIT */
/*
 * A syscall instruction no jump can replace, on purpose (patch mode's
 * dispatch test): unpatchable_getppid's `syscall` is also the target of
 * unpatchable_getppid_again's jmp, so a window holding the mov before it
 * has a jump target inside; and after it there is only the ret (3 bytes
 * with the syscall) before the function ends. Only Syscall User Dispatch
 * reaches it.
 */
	.text
	.globl	unpatchable_getppid
	.type	unpatchable_getppid, @function
	.p2align 4
unpatchable_getppid:
	.cfi_startproc
	movl	$110, %eax
.Lsys:
	syscall
	ret
	.cfi_endproc
	.size	unpatchable_getppid, .-unpatchable_getppid

	.globl	unpatchable_getppid_again
	.type	unpatchable_getppid_again, @function
	.p2align 4
unpatchable_getppid_again:
	.cfi_startproc
	movl	$110, %eax
	jmp	.Lsys
	.cfi_endproc
	.size	unpatchable_getppid_again, .-unpatchable_getppid_again

	.section .note.GNU-stack, "", @progbits
