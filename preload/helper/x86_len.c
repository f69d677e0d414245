/* SPDX-License-Identifier: MIT */
/*
 * x86-64 instruction lengths: prefixes, REX, VEX, EVEX and XOP, the
 * one-byte map and the 0F, 0F 38 and 0F 3A maps, ModRM, SIB,
 * displacement and immediate. In 64-bit mode addressing is 64- or 32-bit
 * (67), never 16-bit, so the ModRM forms are the same with or without 67.
 */
#include "x86_len.h"

#include <stdbool.h>

/* What follows an opcode (flags). */
enum {
	M = 1,	  /* a ModRM byte (with SIB and displacement as it says) */
	B = 2,	  /* an 8-bit immediate */
	Z = 4,	  /* a 16-bit (66) or 32-bit immediate */
	W = 8,	  /* a 16-bit immediate */
	V = 16,	  /* 16, 32 or 64 bits (mov reg, imm: REX.W) */
	O = 32,	  /* a memory offset: 64 bits, or 32 with 67 */
	T = 64,	  /* F6/F7: an immediate when ModRM.reg is 0 or 1 */
	X = 128,  /* invalid in 64-bit mode */
	R = 256,  /* ModRM whose mod is ignored (mov to and from CR, DR) */
	P = 512,  /* a prefix, or the escape to another map */
	J = 1024, /* a relative branch of 32 bits (16 with 66) */
};

/* The one-byte map. */
static const unsigned short map1[256] = {
	/* 00 */ M, M, M, M, B, Z, X, X, M, M, M, M, B, Z, X, P,
	/* 10 */ M, M, M, M, B, Z, X, X, M, M, M, M, B, Z, X, X,
	/* 20 */ M, M, M, M, B, Z, P, X, M, M, M, M, B, Z, P, X,
	/* 30 */ M, M, M, M, B, Z, P, X, M, M, M, M, B, Z, P, X,
	/* 40 */ P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ X, X, P, M, P, P, P, P, Z, M | Z, B, M | B, 0, 0, 0, 0,
	/* 70 */ B, B, B, B, B, B, B, B, B, B, B, B, B, B, B, B,
	/* 80 */ M | B, M | Z, X, M | B, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, X, 0, 0, 0, 0, 0,
	/* A0 */ O, O, O, O, 0, 0, 0, 0, B, Z, 0, 0, 0, 0, 0, 0,
	/* B0 */ B, B, B, B, B, B, B, B, V, V, V, V, V, V, V, V,
	/* C0 */ M | B, M | B, W, 0, P, P, M | B, M | Z, W | B, 0, W, 0, 0, B, X, 0,
	/* D0 */ M, M, M, M, X, X, X, 0, M, M, M, M, M, M, M, M,
	/* E0 */ B, B, B, B, B, B, B, B, J, J, X, B, 0, 0, 0, 0,
	/* F0 */ P, 0, P, P, 0, 0, M | T, M | T, 0, 0, 0, 0, 0, 0, M, M,
};

/* The 0F map. */
static const unsigned short map0f[256] = {
	/* 00 */ M, M, M, M, X, 0, 0, 0, 0, 0, X, 0, X, M, 0, M | B,
	/* 10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 20 */ R, R, R, R, X, X, X, X, M, M, M, M, M, M, M, M,
	/* 30 */ 0, 0, 0, 0, 0, 0, X, 0, P, X, P, X, X, X, X, X,
	/* 40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 70 */ M | B, M | B, M | B, M | B, M, M, M, 0, M, M, X, X, M, M, M, M,
	/* 80 */ J, J, J, J, J, J, J, J, J, J, J, J, J, J, J, J,
	/* 90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* A0 */ 0, 0, 0, M, M | B, M, M, M, 0, 0, 0, M, M | B, M, M, M,
	/* B0 */ M, M, M, M, M, M, M, M, M, M, M | B, M, M, M, M, M,
	/* C0 */ M, M, M | B, M, M | B, M | B, M | B, M, 0, 0, 0, 0, 0, 0, 0, 0,
	/* D0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* E0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* F0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
};

/* The VEX/EVEX 0F map's opcodes with an 8-bit immediate. */
static bool vex_map1_imm(uint8_t op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xc2 || op == 0xc4 || op == 0xc5 ||
	       op == 0xc6;
}

/*
 * Whether the ModRM byte m is one the one-byte map's opcode op allows in
 * 64-bit mode: a group's undefined /reg, a register where only memory
 * goes.
 */
static bool modrm_valid(uint8_t op, uint8_t m)
{
	unsigned reg = (m >> 3) & 7;
	bool r = (m >> 6) == 3;
	switch (op) {
	case 0x8d: /* lea */
		return !r;
	case 0x8c: /* mov r/m, sreg */
		return reg < 6;
	case 0x8e: /* mov sreg, r/m */
		return reg < 6;
	case 0x8f: /* pop r/m */
		return reg == 0;
	case 0xc6: case 0xc7: /* mov r/m, imm; xabort, xbegin */
		return reg == 0 || m == 0xf8;
	case 0xfe: /* inc, dec r/m8 */
		return reg < 2;
	case 0xff: /* far call and jmp take memory */
		return reg != 7 && !(r && (reg == 3 || reg == 5));
	/* x87: memory forms no instruction has (every register form decodes,
	 * the reserved ones as aliases) */
	case 0xd9:
		return r || reg != 1;
	case 0xdb:
		return r || (reg != 4 && reg != 6);
	case 0xdd:
		return r || reg != 5;
	}
	return true;
}

/* Bytes of a ModRM (at p, with what follows it), 0 when cut off. */
static unsigned modrm_len(const uint8_t *p, size_t n)
{
	if (n < 1)
		return 0;
	unsigned mod = p[0] >> 6, rm = p[0] & 7, len = 1;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			len += 4;
	} else if (mod == 0 && rm == 5) {
		len += 4; /* RIP-relative */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len <= n ? len : 0;
}

/* The length once past VEX/EVEX/XOP (q: the opcode byte, map 1-10). */
static unsigned vex_rest(const uint8_t *q, size_t n, unsigned map, unsigned before)
{
	if (n < 1)
		return 0;
	uint8_t op = q[0];
	if (map == 1 && op == 0x77)
		return before + 1; /* vzeroupper, vzeroall */
	unsigned m = modrm_len(q + 1, n - 1);
	if (!m)
		return 0;
	unsigned imm = 0;
	if (map == 3 || map == 8 || (map == 1 && vex_map1_imm(op)))
		imm = 1;
	else if (map == 10)
		imm = 4;
	unsigned len = before + 1 + m + imm;
	return 1 + m + imm <= n && len <= 15 ? len : 0;
}

unsigned x86_insn_len(const uint8_t *p, size_t n)
{
	size_t i = 0;
	bool opsize = false, addrsize = false, rex_w = false;
	uint8_t last_rep = 0;
	/* legacy prefixes, then at most one REX right before the opcode */
	for (;; i++) {
		if (i >= n || i >= 15)
			return 0;
		uint8_t b = p[i];
		if (b == 0x66)
			opsize = true;
		else if (b == 0x67)
			addrsize = true;
		else if (b == 0xf2 || b == 0xf3)
			last_rep = b;
		else if (b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
			 b == 0x64 || b == 0x65)
			;
		else if ((b & 0xf0) == 0x40)
			rex_w = (b & 8) != 0; /* a later legacy prefix cancels it */
		else
			break;
		if ((b & 0xf0) != 0x40)
			rex_w = false;
	}
	uint8_t op = p[i];
	size_t left = n - i;
	unsigned before = (unsigned)i;

	if (op == 0xc5 || op == 0xc4) { /* VEX */
		unsigned vlen = op == 0xc5 ? 2 : 3;
		if (left < vlen + 1)
			return 0;
		unsigned map = op == 0xc5 ? 1 : (p[i + 1] & 0x1f);
		if (map < 1 || map > 3)
			return 0;
		return vex_rest(p + i + vlen, left - vlen, map, before + vlen);
	}
	if (op == 0x62) { /* EVEX: P0 bit 3 is 0, P1 bit 2 is 1 */
		if (left < 5)
			return 0;
		unsigned map = p[i + 1] & 7;
		if ((p[i + 1] & 8) || !(p[i + 2] & 4) ||
		    (map != 1 && map != 2 && map != 3 && map != 5 && map != 6))
			return 0;
		return vex_rest(p + i + 4, left - 4, map, before + 4);
	}
	if (op == 0x8f && left >= 2 && (p[i + 1] & 0x1f) >= 8) { /* XOP */
		unsigned map = p[i + 1] & 0x1f;
		if (left < 4 || map > 10)
			return 0;
		return vex_rest(p + i + 3, left - 3, map, before + 3);
	}

	unsigned flags;
	unsigned len = before + 1;
	const uint8_t *q = p + i + 1; /* after the opcode */
	left--;
	if (op == 0x0f) {
		if (left < 1)
			return 0;
		uint8_t op2 = q[0];
		q++;
		left--;
		len++;
		if (op2 == 0x38 || op2 == 0x3a) {
			if (left < 1)
				return 0;
			q++;
			left--;
			len++;
			flags = op2 == 0x38 ? M : M | B;
		} else {
			flags = map0f[op2];
			/* SSE4a extrq/insertq with immediates: 66/F2 0F 78 */
			if (op2 == 0x78 && (opsize || last_rep == 0xf2))
				flags = M | W;
		}
	} else {
		flags = map1[op];
	}
	if (flags & (X | P))
		return 0;
	if (flags & R) {
		if (left < 1)
			return 0;
		len++;
		q++;
		left--;
	} else if (flags & M) {
		unsigned m = modrm_len(q, left);
		if (!m || (op != 0x0f && !modrm_valid(op, q[0])))
			return 0;
		if ((flags & T) && ((q[0] >> 3) & 7) < 2)
			flags |= op == 0xf6 ? B : Z;
		len += m;
		q += m;
		left -= m;
	}
	unsigned imm = 0;
	if (flags & B)
		imm += 1;
	if (flags & W)
		imm += 2;
	if (flags & (Z | J))
		imm += opsize && !rex_w ? 2 : 4;
	if (flags & V)
		imm += rex_w ? 8 : opsize ? 2 : 4;
	if (flags & O)
		imm += addrsize ? 4 : 8;
	if (imm > left)
		return 0;
	len += imm;
	return len <= 15 ? len : 0;
}
