/* SPDX-License-Identifier: MIT */
/*
 * `0f 05` byte pairs of known kind for kprof-sites' sweep
 * (t_sites_decoder.sh). Nothing here is run. One is a syscall; one lies in
 * data between functions, reached only through a byte that is no
 * instruction (push %es, invalid in 64-bit mode), as in libcrypto's and
 * node's P-521 tables; one is inside the rel32 of a call that follows an
 * ud1, which takes a ModRM byte (Intel, binutils) that capstone 4 leaves
 * out, so that its sweep lands on the pair (two such pairs in Chromium).
 */
__asm__(
	".text\n"
	".globl sites_real\n.type sites_real,@function\n"
	"sites_real:\n.cfi_startproc\n"
	"	movl $39, %eax\n"
	"	syscall\n"
	"	ret\n"
	".cfi_endproc\n.size sites_real, .-sites_real\n"
	/* data: no FDE, no symbol */
	".globl sites_data\n"
	"sites_data:\n"
	".byte 0x06, 0x0f, 0x05, 0xc3\n"
	".globl sites_ud1\n.type sites_ud1,@function\n"
	"sites_ud1:\n.cfi_startproc\n"
	"	ret\n"
	"	ud1 0x1(%eax), %eax\n"
	/* call rel32 = 0x050f9d67 (never run) */
	".globl sites_ud1_call\n"
	"sites_ud1_call:\n"
	".byte 0xe8, 0x67, 0x9d, 0x0f, 0x05\n"
	"	ret\n"
	".cfi_endproc\n.size sites_ud1, .-sites_ud1\n");

int main(void)
{
	return 0;
}
