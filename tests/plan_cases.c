/* SPDX-License-Identifier: MIT */
/*
 * Syscall sites of known shape for `kprof-sites --plan` (t_sites_plan.sh):
 * each function is hand-written so that the window a 5-byte jmp can
 * replace is known byte for byte. Nothing here is run. The last three
 * have no FDE, only a sized symbol (as hand-written assembly and Go have):
 * their bounds come from the symbol table. The last two are jumped into
 * from outside their functions: by a rel32 jmp from far away, and by a
 * rel8 jmp just before the function, after 70,000 bytes no unwind table
 * or symbol describes (so no instruction boundary is known near it).
 */
int plan_data = 39;

__asm__(
	".text\n"
	/* a libc wrapper: mov $nr, %eax (5) ; syscall (2): window of 7 */
	".globl plan_wrapper\n.type plan_wrapper,@function\n"
	"plan_wrapper:\n.cfi_startproc\n"
	"	movl $39, %eax\n"
	"	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	jae 1f\n"
	"	ret\n"
	"1:	negl %eax\n"
	"	ret\n"
	".cfi_endproc\n.size plan_wrapper, .-plan_wrapper\n"
	/* a retry loop jumps back to the syscall: the window starts there */
	".globl plan_target\n.type plan_target,@function\n"
	"plan_target:\n.cfi_startproc\n"
	"	movl $39, %eax\n"
	"2:	syscall\n"
	"	cmpq $-4, %rax\n"
	"	je 2b\n"
	"	ret\n"
	".cfi_endproc\n.size plan_target, .-plan_target\n"
	/* boxed in by relative jumps and a jump target: no window */
	".globl plan_none\n.type plan_none,@function\n"
	"plan_none:\n.cfi_startproc\n"
	"	jmp 3f\n"
	"4:	syscall\n"
	"	ret\n"
	"3:	movl $39, %eax\n"
	"	jmp 4b\n"
	".cfi_endproc\n.size plan_none, .-plan_none\n"
	/* a RIP-relative load in the window: its disp32 at offset 2 */
	".globl plan_rip\n.type plan_rip,@function\n"
	"plan_rip:\n.cfi_startproc\n"
	"	movl plan_data(%rip), %eax\n"
	"	syscall\n"
	"	ret\n"
	".cfi_endproc\n.size plan_rip, .-plan_rip\n"
	/* not an instruction (push %es): the gap between FDEs does not decode */
	".byte 0x06\n"
	/* no FDE, a sized symbol: the wrapper's window of 7 */
	".globl plan_sym\n.type plan_sym,@function\n"
	"plan_sym:\n"
	"	movl $39, %eax\n"
	"	syscall\n"
	"	ret\n"
	".size plan_sym, .-plan_sym\n"
	/* a function that falls through into the next one's entry: the
	 * window may not take in the mov before it (8: syscall + cmp) */
	".globl plan_sym_fall\n.type plan_sym_fall,@function\n"
	"plan_sym_fall:\n"
	"	movl $39, %eax\n"
	".size plan_sym_fall, .-plan_sym_fall\n"
	".globl plan_sym_entry\n.type plan_sym_entry,@function\n"
	"plan_sym_entry:\n"
	"	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	ret\n"
	".size plan_sym_entry, .-plan_sym_entry\n"
	/* a jmp from another function far away lands on the syscall: the
	 * window starts there (syscall + cmp, 8) */
	".globl plan_far\n.type plan_far,@function\n"
	"plan_far:\n.cfi_startproc\n"
	"	movl $39, %eax\n"
	"6:	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	ret\n"
	".cfi_endproc\n.size plan_far, .-plan_far\n"
	".skip 1000, 0xcc\n"
	".globl plan_far_jumper\n.type plan_far_jumper,@function\n"
	"plan_far_jumper:\n.cfi_startproc\n"
	"	jmp 6b\n"
	".cfi_endproc\n.size plan_far_jumper, .-plan_far_jumper\n"
	".skip 70000, 0xcc\n"
	"	jmp 8f\n"
	".globl plan_rel8\n.type plan_rel8,@function\n"
	"plan_rel8:\n.cfi_startproc\n"
	"	movl $39, %eax\n"
	"8:	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	ret\n"
	".cfi_endproc\n.size plan_rel8, .-plan_rel8\n");

int main(void)
{
	return 0;
}
