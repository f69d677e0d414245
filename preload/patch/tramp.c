/* SPDX-License-Identifier: MIT */
/*
 * Trampolines for patching a syscall site with a 5-byte jmp (tramp.h),
 * the technique of syscall_intercept, written here from its description.
 * A trampoline for the window [start, start + len) with the syscall at
 * sys_off:
 *
 *   the window's bytes before the syscall        (RIP-relative relocated)
 *   jmp over 8 bytes ; .quad the original site    (for the hook's sites)
 *   movabs $entry, %r11 ; call *%r11              (the syscall's place)
 *   the window's bytes after the syscall          (RIP-relative relocated)
 *   jmp start + len
 *
 * r11 and rcx may be clobbered: the syscall instruction clobbers them.
 * The entry receives what kp_rw_entry receives from `call *%rax`: the
 * number in rax, the arguments in their registers, its return address
 * on the stack. The writers make no syscall, and the area's mmap goes
 * through the caller's function: the file runs in the shim and in a test.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "tramp.h"

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

/* Copies n bytes of the window from offset off to buf + pos, moving the
 * RIP-relative displacements in them by delta (new address - old). */
static int copy_relocated(uint8_t *buf, size_t pos, const uint8_t *code, unsigned off,
			  unsigned n, const struct kp_patch_plan *p, int64_t delta)
{
	memcpy(buf + pos, code + off, n);
	for (unsigned k = 0; k < p->n_rip; k++) {
		unsigned r = p->rip[k];
		if (r < off || r >= off + n)
			continue;
		if (r + 4 > off + n)
			return -EINVAL;
		int32_t disp;
		memcpy(&disp, code + r, 4);
		int64_t moved = (int64_t)disp - delta;
		if (!fits32(moved))
			return -ERANGE;
		put32(buf + pos + (r - off), (int32_t)moved);
	}
	return 0;
}

int kp_patch_tramp_write(uint8_t *buf, uint64_t at, const uint8_t *code,
		      const struct kp_patch_plan *p, uint64_t entry, uint64_t *key)
{
	if (p->len < 5 || p->len > 64 || p->sys_off + 2u > p->len || p->n_rip > 4 ||
	    code[p->sys_off] != 0x0f || code[p->sys_off + 1] != 0x05)
		return -EINVAL;
	size_t n = 0;
	/* the instructions before the syscall */
	int err = copy_relocated(buf, n, code, 0, p->sys_off, p, (int64_t)(at - p->start));
	if (err)
		return err;
	n += p->sys_off;
	/* jmp over the site's address: jmp rel8 +8 ; .quad site */
	uint64_t site = p->start + p->sys_off;
	buf[n++] = 0xeb;
	buf[n++] = 8;
	memcpy(buf + n, &site, 8);
	n += 8;
	/* movabs $entry, %r11 ; call *%r11 */
	buf[n++] = 0x49;
	buf[n++] = 0xbb;
	memcpy(buf + n, &entry, 8);
	n += 8;
	buf[n++] = 0x41;
	buf[n++] = 0xff;
	buf[n++] = 0xd3;
	*key = at + n - 2;
	/* the instructions after it, then back */
	unsigned after = p->sys_off + 2u;
	err = copy_relocated(buf, n, code, after, p->len - after, p,
			     (int64_t)(at + n) - (int64_t)(p->start + after));
	if (err)
		return err;
	n += p->len - after;
	int64_t back = (int64_t)(p->start + p->len) - (int64_t)(at + n + 5);
	if (!fits32(back))
		return -ERANGE;
	buf[n++] = 0xe9;
	put32(buf + n, (int32_t)back);
	n += 4;
	return (int)n;
}

int kp_patch_tramp_jump(uint8_t *out, const struct kp_patch_plan *p, uint64_t at)
{
	int64_t rel = (int64_t)at - (int64_t)(p->start + 5);
	if (!fits32(rel))
		return -ERANGE;
	out[0] = 0xe9;
	put32(out + 1, (int32_t)rel);
	memset(out + 5, 0xcc, p->len - 5u);
	return 0;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Whether every byte of [a, a + size) is within rel32 of all of [lo, hi). */
static bool reaches(uint64_t lo, uint64_t hi, uint64_t a, uint64_t size)
{
	const uint64_t span = (1ull << 31) - 4096;
	uint64_t far_lo = a < lo ? a : lo, far_hi = a + size > hi ? a + size : hi;
	return far_hi - far_lo < span;
}

long kp_patch_tramp_area(long (*sys)(long nr, long a1, long a2, long a3, long a4,
				  long a5, long a6),
		      uint64_t lo, uint64_t hi, uint64_t size)
{
	/* below the code first (mmap's free space grows down), then above;
	 * 1 MiB steps near it, then 64 MiB steps */
	for (unsigned k = 1; k <= 128; k++) {
		uint64_t step = k <= 64 ? (uint64_t)k << 20 : (uint64_t)(k - 63) << 26;
		uint64_t cand[2] = { (lo & ~4095ull) - size - step, ((hi + 4095) & ~4095ull) + step };
		for (int side = 0; side < 2; side++) {
			uint64_t a = cand[side];
			if (a < 65536 || a > (1ull << 47) - size || !reaches(lo, hi, a, size))
				continue;
			long r = sys(SYS_mmap, (long)a, (long)size, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (r < 0)
				continue;
			/* a kernel without MAP_FIXED_NOREPLACE takes it as a hint */
			if (reaches(lo, hi, (uint64_t)r, size))
				return r;
			sys(SYS_munmap, r, (long)size, 0, 0, 0, 0);
		}
	}
	return -ENOMEM;
}
