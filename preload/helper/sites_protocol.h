/* SPDX-License-Identifier: MIT */
/*
 * What kprof-sites writes on its stdout and libkprof.so reads from the
 * pipe (preload/rewrite/scan.c, setup.c): one header, then uint64 file
 * offsets (sites) or plan records. Little-endian, the machine's own.
 *
 *   kprof-sites FILE             KP_SITES_MAGIC, count, sites left out
 *                                (red zone), count uint64 file offsets
 *   kprof-sites --plan-bin FILE  KP_PLAN_MAGIC, count, sites without a
 *                                window, count struct kp_plan_rec
 */
#ifndef KPROF_SITES_PROTOCOL_H
#define KPROF_SITES_PROTOCOL_H

#include <stdint.h>

#define KP_SITES_MAGIC "KPRFSITS"
#define KP_PLAN_MAGIC "KPRFPLN1"

struct kp_sites_head {
	char magic[8];
	uint64_t count;
	uint64_t without; /* sites left out, or (plan) without a window */
};

/*
 * A site patch mode can patch: the window of whole instructions a 5-byte
 * jmp replaces (file offsets), the syscall's offset in it, and the
 * offsets in it of RIP-relative disp32s to relocate.
 */
struct kp_plan_rec {
	uint64_t site;
	uint64_t start;
	uint8_t len, sys_off, n_rip, rip[4], pad;
};
_Static_assert(sizeof(struct kp_sites_head) == 24, "kprof-sites header");
_Static_assert(sizeof(struct kp_plan_rec) == 24, "kprof-sites plan record");

/* The plan record read as three uint64 (the shim's list): the third. */
static inline void kp_plan_rest(uint64_t rest, uint8_t *len, uint8_t *sys_off, uint8_t *n_rip,
				uint8_t rip[4])
{
	*len = rest & 0xff;
	*sys_off = (rest >> 8) & 0xff;
	*n_rip = (rest >> 16) & 0xff;
	for (int k = 0; k < 4; k++)
		rip[k] = (rest >> (24 + 8 * k)) & 0xff;
}

#endif
