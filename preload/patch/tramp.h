/* SPDX-License-Identifier: MIT */
/*
 * Patch mode's jumps (tramp.c): the 5-byte jmp that replaces a window of
 * whole instructions around a syscall, and the trampoline it leads to,
 * which calls rewrite mode's entry with the syscall's registers. Pure
 * code generation: nothing here knows the layers above (the entry's
 * address is an argument), so the tests build tramp.c alone.
 */
#ifndef KPROF_PATCH_TRAMP_H
#define KPROF_PATCH_TRAMP_H

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

/*
 * A site's plan, as `kprof-sites --plan` gives it: the window of whole instructions [start, start + len) that a
 * 5-byte jmp replaces, the syscall at start + sys_off, and the offsets
 * in the window of RIP-relative disp32 fields.
 */
struct kp_patch_plan {
	uint64_t start;
	uint8_t len;
	uint8_t sys_off;
	uint8_t n_rip;
	uint8_t rip[4];
};
/* Bytes a trampoline takes at most (a window is at most 64 bytes). */
#define KP_PATCH_TRAMP_MAX 128
/*
 * Writes into buf (KP_PATCH_TRAMP_MAX bytes) the trampoline that will run
 * at address at: the window's instructions before the syscall, copied
 * from code (the window's bytes), a call of entry with the syscall's
 * registers (as rewrite mode's `call *%rax` reaches kp_rw_entry), the
 * instructions after it, and a jmp back to the window's end; RIP-relative
 * operands relocated. Its length, or -ERANGE when a displacement does not
 * reach from at (more than 2 GiB away) and -EINVAL for a bad plan. *key:
 * the return address - 2 that the hook sees for it (kp_rw_site_check).
 */
int kp_patch_tramp_write(uint8_t *buf, uint64_t at, const uint8_t *code,
		      const struct kp_patch_plan *p, uint64_t entry, uint64_t *key);
/* The window's new bytes (len of them): jmp rel32 to the trampoline at
 * `at`, int3 after it. -ERANGE when at is out of reach, else 0. */
int kp_patch_tramp_jump(uint8_t *out, const struct kp_patch_plan *p, uint64_t at);
/*
 * Maps size bytes (a multiple of the page size, read-write) where a jmp
 * rel32 from anywhere in the code [lo, hi) reaches all of them, and back:
 * the address, or -ENOMEM when no such place is free. sys makes the
 * syscall (-errno on failure): the shim's raw syscalls, or a test's.
 */
long kp_patch_tramp_area(long (*sys)(long nr, long a1, long a2, long a3, long a4,
				  long a5, long a6),
		      uint64_t lo, uint64_t hi, uint64_t size);
#endif /* __ASSEMBLER__ */

/* In a trampoline, the original site's address sits this many bytes
 * before the return address of its call of the entry. */
#define KP_PATCH_TRAMP_SITE_BACK 21

#endif
