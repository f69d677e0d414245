/* SPDX-License-Identifier: MIT */
/*
 * The length of one x86-64 instruction from its bytes alone, for
 * kprof-sites' sweep to the `0f 05` pairs: which of them start an
 * instruction. No operands, no names: ~20x faster than a full decoder,
 * and checked against capstone instruction by instruction (the test
 * t_sites_decoder: every boundary of libc, ld.so, node and chromium the
 * same, and the same sites).
 */
#ifndef KPROF_X86_LEN_H
#define KPROF_X86_LEN_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the instruction at p (n bytes readable), 1 to 15; 0 when they
 * do not decode (an opcode that is invalid in 64-bit mode, or cut off). */
unsigned x86_insn_len(const uint8_t *p, size_t n);

#endif
