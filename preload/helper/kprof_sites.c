/* SPDX-License-Identifier: MIT */
/*
 * kprof-sites FILE: the `syscall` instructions of an ELF file's executable
 * sections that libkprof.so's rewrite mode may rewrite, as file offsets.
 * The shim runs it (a process of its own) when its per-user cache does
 * not know the file yet, and caches what it prints: loading capstone and
 * libelf into every traced process would cost each one ~400 page faults
 * (~10 ms here), and cc1 starts thousands of times.
 *
 * libelf gives the sections. The sweep starts at the beginning of the
 * function around each `0f 05` byte pair, from the .eh_frame_hdr search
 * table (function starts are instruction boundaries), and steps through
 * instruction lengths (x86_len.c) up to the pair: a pair inside another
 * instruction is not a site, nor one reached through bytes that do not
 * decode (data in the code). Where the unwind tables say little (Chromium
 * describes 9,000 functions of 236 MB of code) the sweep covers most of
 * the code: capstone took 15 s for Chromium, the length decoder 0.9 s.
 * Capstone (with its details) stays for what needs operands: the red zone
 * check and the --plan windows, each over a site's function.
 *
 * A site whose function may have live data in the 8 bytes below the stack
 * pointer (the red zone's top, where `call *%rax` pushes its return
 * address) is left out.
 *
 * Output on stdout: "KPRFSITS", then little-endian uint64 count, uint64
 * sites left out, and count uint64 file offsets. Exit 0, or 1 with a
 * message on stderr (-v: each site left out, too).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "func_bounds.h"
#include "sites_protocol.h"
#include "x86_len.h"

static csh dis_plain, dis_detail;
static cs_insn *insn_plain, *insn_detail;

/* The next instruction that decodes, stepping a byte past what does not
 * (data in the code, padding); false at the end. */
static bool next_insn(csh h, cs_insn *insn, const uint8_t **code, size_t *left, uint64_t *a)
{
	while (*left) {
		if (cs_disasm_iter(h, code, left, a, insn))
			return true;
		(*code)++;
		(*left)--;
		(*a)++;
	}
	return false;
}
static bool verbose;
static uint64_t decoded, in_data;
static bool use_capstone; /* --capstone: the reference decoder sweeps */

/* The length of the instruction at a (left bytes there), 0: none. */
static unsigned insn_len(const uint8_t *code, size_t left, uint64_t a)
{
	if (!use_capstone)
		return x86_insn_len(code, left);
	return cs_disasm_iter(dis_plain, &code, &left, &a, insn_plain) ? insn_plain->size : 0;
}

/* The next executable section after *scn (its header in *sh, its bytes
 * returned), or NULL after the last. */
static const uint8_t *next_code_section(Elf *elf, Elf_Scn **scn, GElf_Shdr *sh)
{
	while ((*scn = elf_nextscn(elf, *scn))) {
		if (!gelf_getshdr(*scn, sh) || sh->sh_type != SHT_PROGBITS ||
		    !(sh->sh_flags & SHF_EXECINSTR) || !(sh->sh_flags & SHF_ALLOC))
			continue;
		Elf_Data *d = elf_getdata(*scn, NULL);
		if (d && d->d_buf && d->d_size == sh->sh_size)
			return d->d_buf;
	}
	return NULL;
}

/* Whether an ud0 or ud1 (0f ff, 0f b9) after prefixes is at p, in how
 * many bytes capstone 4 takes it. */
static bool ud_short(const uint8_t *p, size_t n, unsigned capstone_len)
{
	size_t k = 0;
	while (k < n && k < 14 && (p[k] == 0x66 || p[k] == 0x67 || p[k] == 0xf2 ||
				  p[k] == 0xf3 || (p[k] & 0xf0) == 0x40))
		k++;
	return k + 1 < n && p[k] == 0x0f && (p[k + 1] == 0xff || p[k + 1] == 0xb9) &&
	       capstone_len == k + 2;
}

/*
 * --check: x86_insn_len against capstone at every instruction of the
 * file's executable sections (capstone's sweep: a byte further where it
 * decodes nothing). 0 when they agree wherever capstone decodes, but for
 * ud0 and ud1, which capstone 4 takes without the ModRM the Intel manual
 * and binutils give them. Where capstone decodes nothing, x86_insn_len
 * may (AVX-512 mask instructions, PKU: counted, -v lists them).
 */
static int check_decoder(Elf *elf, const char *path)
{
	uint64_t insns = 0, differ = 0, unknown = 0, ud = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const uint8_t *data;
	while ((data = next_code_section(elf, &scn, &sh))) {
		for (size_t at = 0; at < sh.sh_size;) {
			const uint8_t *code = data + at;
			size_t left = sh.sh_size - at;
			uint64_t a = sh.sh_addr + at;
			unsigned want = cs_disasm_iter(dis_plain, &code, &left, &a, insn_plain)
						? insn_plain->size : 0;
			unsigned got = x86_insn_len(data + at, sh.sh_size - at);
			insns++;
			if (got != want && ud_short(data + at, sh.sh_size - at, want))
				ud++; /* capstone 4: ud0, ud1 without their ModRM */
			else if (got != want && !want) {
				unknown++; /* what capstone does not know (AVX-512 masks, PKU) */
				if (verbose) {
					fprintf(stderr, "unknown %u:", got);
					for (size_t k = 0; k < 12 && at + k < sh.sh_size; k++)
						fprintf(stderr, " %02x", data[at + k]);
					fprintf(stderr, "\n");
				}
			}
			else if (got != want && differ++ < 40) {
				fprintf(stderr, "kprof-sites: 0x%llx: capstone %u, x86_insn_len %u:",
					(unsigned long long)(sh.sh_addr + at), want, got);
				for (size_t k = 0; k < 16 && at + k < sh.sh_size; k++)
					fprintf(stderr, " %02x", data[at + k]);
				fprintf(stderr, "\n");
			}
			at += want ? want : 1;
		}
	}
	printf("%s: %llu instructions, %llu lengths differ, %llu not decoded by capstone, "
	       "%llu ud0/ud1\n", path, (unsigned long long)insns, (unsigned long long)differ,
	       (unsigned long long)unknown, (unsigned long long)ud);
	return differ ? 1 : 0;
}

struct list {
	uint64_t *v;
	size_t n, cap;
};

static int list_add(struct list *l, uint64_t x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		uint64_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return 0;
}

static bool is_syscall(const cs_insn *i)
{
	return i->id == X86_INS_SYSCALL && i->size == 2;
}

/* ---- ELF: sections, build-id, the function table ---- */

struct file {
	Elf *elf;
	uint64_t size;
	char build_id[41];
	const uint8_t *hdr; /* .eh_frame_hdr */
	uint64_t hdr_addr;
	size_t hdr_size;
	const uint8_t *table; /* its (start, fde) pairs, sdata4 from hdr_addr */
	uint64_t n_fde;
	const uint8_t *eh; /* .eh_frame */
	uint64_t eh_addr;
	size_t eh_size;
	struct func_bounds funcs; /* for code without an FDE */
};

static void read_unwind_tables(struct file *f)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(f->elf, &shstrndx))
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		const char *name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		Elf_Data *d;
		if (strcmp(name, ".eh_frame_hdr") == 0 && (d = elf_getdata(scn, NULL))) {
			f->hdr = d->d_buf;
			f->hdr_addr = sh.sh_addr;
			f->hdr_size = d->d_size;
		} else if (strcmp(name, ".eh_frame") == 0 && (d = elf_getdata(scn, NULL))) {
			f->eh = d->d_buf;
			f->eh_addr = sh.sh_addr;
			f->eh_size = d->d_size;
		}
	}
	/* version 1, a 4-byte eh_frame_ptr, udata4 count, datarel sdata4 table */
	const uint8_t *h = f->hdr;
	if (!h || f->hdr_size < 12 || h[0] != 1 || (h[1] & 0x0f) != 0x0b ||
	    h[2] != 0x03 || h[3] != 0x3b)
		return;
	uint32_t n;
	memcpy(&n, h + 8, 4);
	if (12 + (uint64_t)n * 8 > f->hdr_size)
		return;
	f->table = h + 12;
	f->n_fde = n;
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (int s = 0; *p < end && s < 64; s += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	int s = 0;
	uint8_t b = 0;
	while (*p < end && s < 64) {
		b = *(*p)++;
		v |= (int64_t)(b & 0x7f) << s;
		s += 7;
		if (!(b & 0x80))
			break;
	}
	if (s < 64 && (b & 0x40))
		v |= -((int64_t)1 << s);
	return v;
}

/* A DW_EH_PE value's size; 0 for encodings we do not read. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x03: case 0x0b: return 4;
	case 0x02: case 0x0a: return 2;
	default: return 0;
	}
}

static uint64_t enc_read(const uint8_t *p, uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x0b: return (uint64_t)(int64_t)(int32_t)load_u32(p);
	case 0x03: { uint32_t v; memcpy(&v, p, 4); return v; }
	case 0x0a: { int16_t v; memcpy(&v, p, 2); return (uint64_t)(int64_t)v; }
	case 0x02: { uint16_t v; memcpy(&v, p, 2); return v; }
	default: { uint64_t v; memcpy(&v, p, 8); return v; }
	}
}

/* Length of the function whose FDE is at fde_addr (0: cannot tell). */
static uint64_t fde_length(const struct file *f, uint64_t fde_addr)
{
	if (!f->eh || fde_addr < f->eh_addr || fde_addr + 8 > f->eh_addr + f->eh_size)
		return 0;
	const uint8_t *fde = f->eh + (fde_addr - f->eh_addr);
	const uint8_t *end = f->eh + f->eh_size;
	uint32_t len, cie_off;
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0xffffffff || fde + 4 + len > end || cie_off > (uint64_t)(fde + 4 - f->eh))
		return 0;
	const uint8_t *cie = fde + 4 - cie_off;
	uint32_t cie_len;
	memcpy(&cie_len, cie, 4);
	if (cie_len == 0xffffffff || cie + 4 + cie_len > end)
		return 0;
	const uint8_t *cend = cie + 4 + cie_len;
	const uint8_t *p = cie + 8; /* version */
	uint8_t version = *p++;
	const char *aug = (const char *)p;
	size_t aug_len = strnlen(aug, (size_t)(cend - p));
	p += aug_len + 1;
	if (strstr(aug, "eh"))
		p += 8;
	uleb(&p, cend);
	sleb(&p, cend);
	if (version == 1)
		p++;
	else
		uleb(&p, cend);
	uint8_t fenc = 0;
	if (aug[0] == 'z') {
		uleb(&p, cend);
		for (const char *a = aug + 1; *a && p < cend; a++) {
			if (*a == 'R') {
				fenc = *p++;
			} else if (*a == 'L') {
				p++;
			} else if (*a == 'P') {
				uint8_t penc = *p++;
				size_t n = enc_size(penc);
				if (!n)
					return 0;
				p += n;
			}
		}
	}
	size_t n = enc_size(fenc);
	if (!n || fde + 8 + 2 * n > end)
		return 0;
	return enc_read(fde + 8 + n, fenc & 0x0f);
}

/*
 * Whether the FDE at fde_addr describes a signal frame (augmentation 'S'):
 * such an FDE starts one byte before the code by convention (glibc's
 * __restore_rt), so that an unwinder's pc - 1 still falls inside it.
 */
static bool fde_signal_frame(const struct file *f, uint64_t fde_addr)
{
	if (!f->eh || fde_addr < f->eh_addr || fde_addr + 8 > f->eh_addr + f->eh_size)
		return false;
	const uint8_t *fde = f->eh + (fde_addr - f->eh_addr);
	const uint8_t *end = f->eh + f->eh_size;
	uint32_t cie_off;
	memcpy(&cie_off, fde + 4, 4);
	if (cie_off > (uint64_t)(fde + 4 - f->eh))
		return false;
	const uint8_t *cie = fde + 4 - cie_off;
	if (cie + 9 >= end)
		return false;
	const char *aug = (const char *)cie + 9;
	return memchr(aug, 'S', strnlen(aug, (size_t)(end - (const uint8_t *)aug))) != NULL;
}

/* Entry k of the table: its function's start, or (fde) its FDE. */
static uint64_t table_addr(const struct file *f, uint64_t k, bool fde)
{
	return f->hdr_addr + (uint64_t)(int64_t)(int32_t)load_u32(f->table + 8 * k + (fde ? 4 : 0));
}

/* How many functions of the table start at or before addr. */
static uint64_t functions_upto(const struct file *f, uint64_t addr)
{
	uint64_t lo = 0, hi = f->n_fde;
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (table_addr(f, mid, false) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The function around addr: [start, start + len), from the table. */
static bool function_at(const struct file *f, uint64_t addr, uint64_t *start,
			uint64_t *len)
{
	uint64_t k = functions_upto(f, addr);
	if (!k)
		return false;
	*start = table_addr(f, k - 1, false);
	*len = fde_length(f, table_addr(f, k - 1, true));
	return true;
}

/* ---- the red zone ---- */

static bool overlaps_slot(int64_t disp, unsigned size)
{
	/* [disp, disp + size) against [-8, 0) */
	return disp < 0 && disp + (int64_t)(size ? size : 8) > -8;
}

static bool is_arg_reg(unsigned r)
{
	return r == X86_REG_RDI || r == X86_REG_RSI || r == X86_REG_RDX ||
	       r == X86_REG_R10 || r == X86_REG_R8 || r == X86_REG_R9 ||
	       r == X86_REG_EDI || r == X86_REG_ESI || r == X86_REG_EDX;
}

static bool in_group(const cs_insn *i, unsigned g)
{
	for (unsigned k = 0; k < i->detail->groups_count; k++)
		if (i->detail->groups[k] == g)
			return true;
	return false;
}

/*
 * Whether the function of the site at addr may have live data in the 8
 * bytes under the stack pointer when the site runs: `call *%rax` writes
 * its return address there. The slot is the red zone's top in a leaf
 * function (reached through %rsp, or through %rbp in a function that set
 * %rbp = %rsp and never moved %rsp). Data written there before the site
 * and never read after it is dead (va_list save areas of variadic
 * wrappers); what is flagged:
 *  - a pointer into the red zone passed to the syscall (an argument
 *    register loaded with lea): the kernel may read it;
 *  - a read of the slot after the site, or, with a pointer into the red
 *    zone kept elsewhere, any read through a register after the site;
 *  - around a loop that contains the site (or a jump back to it), any
 *    read of the slot at all, or a kept pointer and any read through a
 *    register.
 */
static bool red_zone_slot_used(const struct file *f, const uint8_t *data,
			       uint64_t sec_addr, size_t sec_size, uint64_t addr)
{
	uint64_t start, len;
	if (!f->table || !function_at(f, addr, &start, &len) || !len ||
	    addr >= start + len || start < sec_addr || start + len > sec_addr + sec_size)
		return false;
	const uint8_t *code = data + (start - sec_addr);
	size_t left = len;
	uint64_t a = start;
	bool frame = false, moved = false, loop = false;
	bool rsp_read_any = false, rsp_read_after = false, rsp_escape = false;
	bool rbp_read_any = false, rbp_read_after = false, rbp_escape = false;
	bool deref_after = false, deref_any = false;
	while (next_insn(dis_detail, insn_detail, &code, &left, &a)) {
		uint64_t at = insn_detail->address;
		const cs_x86 *x = &insn_detail->detail->x86;
		unsigned id = insn_detail->id;
		bool after = at > addr;
		if (id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].reg == X86_REG_RBP && x->operands[1].type == X86_OP_REG &&
		    x->operands[1].reg == X86_REG_RSP)
			frame = true;
		if ((id == X86_INS_SUB || id == X86_INS_AND) && x->op_count == 2 &&
		    x->operands[0].type == X86_OP_REG && x->operands[0].reg == X86_REG_RSP)
			moved = true;
		if (in_group(insn_detail, CS_GRP_JUMP) && x->op_count == 1 &&
		    x->operands[0].type == X86_OP_IMM && (uint64_t)x->operands[0].imm <= addr &&
		    at > addr)
			loop = true;
		if (id == X86_INS_LEA && x->op_count == 2 && x->operands[1].type == X86_OP_MEM) {
			const x86_op_mem *m = &x->operands[1].mem;
			bool rz = m->disp < 0 && m->disp >= -128 && m->index == X86_REG_INVALID;
			bool arg = x->operands[0].type == X86_OP_REG && is_arg_reg(x->operands[0].reg);
			if (rz && m->base == X86_REG_RSP) {
				rsp_escape = true;
				if (arg && at < addr)
					return true;
			}
			if (rz && m->base == X86_REG_RBP) {
				rbp_escape = true;
				if (arg && at < addr)
					rbp_read_after = true;
			}
			continue;
		}
		if (id == X86_INS_NOP)
			continue; /* padding: its memory operand is never read */
		for (unsigned k = 0; k < x->op_count; k++) {
			const cs_x86_op *op = &x->operands[k];
			if (op->type != X86_OP_MEM || op->mem.segment != X86_REG_INVALID)
				continue;
			bool read = (op->access & CS_AC_READ) != 0;
			if (!read)
				continue;
			if (op->mem.base == X86_REG_RSP && overlaps_slot(op->mem.disp, op->size)) {
				rsp_read_any = true;
				rsp_read_after |= after;
			} else if (op->mem.base == X86_REG_RBP && overlaps_slot(op->mem.disp, op->size)) {
				rbp_read_any = true;
				rbp_read_after |= after;
			} else if (op->mem.base != X86_REG_RIP && op->mem.base != X86_REG_RSP &&
				   op->mem.base != X86_REG_INVALID) {
				deref_any = true;
				deref_after |= after;
			}
		}
	}
	bool rsp_used = loop ? rsp_read_any || (rsp_escape && deref_any)
			     : rsp_read_after || (rsp_escape && deref_after);
	bool rbp_used = loop ? rbp_read_any || (rbp_escape && deref_any)
			     : rbp_read_after || (rbp_escape && deref_after);
	return rsp_used || (frame && !moved && rbp_used);
}

/* ---- sweeping an ELF file ---- */

/* The index of the first of the n sorted values above x (n: none). */
static size_t first_above(const uint64_t *v, size_t n, uint64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (v[mid] <= x)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/*
 * The sites of one executable section, as file offsets. Candidates are
 * the `0f 05` pairs; each is decided by decoding from the start of its
 * function (or the end of the previous one, or the section start) on.
 * A pair reached through bytes that do not decode since that point is
 * in data (tables in the code: libcrypto's, node's), where any decoder
 * syncs by chance: not a site.
 */
static int sweep_section(const struct file *f, const uint8_t *data, uint64_t sec_addr,
			 uint64_t sec_off, size_t size, struct list *out,
			 uint64_t *skipped)
{
	uint64_t pos = 0, bad = 0; /* bad: after the last byte that did not decode */
	bool have_pos = false;
	for (const uint8_t *p = data; size >= 2 && p < data + size - 1; p++) {
		p = memchr(p, 0x0f, (size_t)(data + size - 1 - p));
		if (!p)
			break;
		if (p[1] != 0x05)
			continue;
		uint64_t x = sec_addr + (uint64_t)(p - data);
		uint64_t sync = sec_addr, fstart, flen;
		if (f->table && function_at(f, x, &fstart, &flen)) {
			if (x < fstart + flen || !flen)
				sync = fstart;
			else
				sync = fstart + flen;
		}
		/* a sized symbol's start (hand-written code without CFI, Go) */
		size_t k = first_above(f->funcs.start, f->funcs.n, x);
		if (k && f->funcs.start[k - 1] > sync && f->funcs.start[k - 1] <= x)
			sync = f->funcs.start[k - 1];
		if (sync < sec_addr || sync > x)
			sync = sec_addr;
		if (!have_pos || pos < sync || pos > x)
			pos = sync;
		uint64_t a = pos;
		bool site = false;
		while (a <= x) {
			size_t at = (size_t)(a - sec_addr);
			unsigned len = insn_len(data + at, size - at, a);
			if (!len) {
				bad = ++a; /* data in the code: a byte further */
				continue;
			}
			decoded += len;
			if (a == x)
				site = len == 2; /* the bytes are 0f 05: syscall */
			a += len;
		}
		pos = a;
		have_pos = true;
		if (!site)
			continue;
		if (bad > sync) {
			in_data++;
			if (verbose)
				fprintf(stderr, "kprof-sites: 0x%llx: reached through bytes that do not "
					"decode: data\n", (unsigned long long)x);
			continue;
		}
		if (red_zone_slot_used(f, data, sec_addr, size, x)) {
			(*skipped)++;
			if (verbose)
				fprintf(stderr, "kprof-sites: site at 0x%llx left alone (red zone)\n",
					(unsigned long long)x);
			continue;
		}
		int err = list_add(out, sec_off + (x - sec_addr));
		if (err)
			return err;
	}
	return 0;
}

static int sweep_file(const struct file *f, struct list *out, uint64_t *skipped)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const uint8_t *data;
	while ((data = next_code_section(f->elf, &scn, &sh))) {
		int err = sweep_section(f, data, sh.sh_addr, sh.sh_offset, sh.sh_size,
					out, skipped);
		if (err)
			return err;
	}
	return 0;
}

/* ---- --plan: where a 5-byte jmp to a trampoline can go ---- */

/*
 * For the unprivileged hook mode (docs/SHIM.md): a site is patched by
 * replacing a window of whole instructions around its `syscall` with a
 * 5-byte `jmp rel32` to a trampoline that runs them relocated. The window
 * must hold at least 5 bytes, lie inside the site's function, hold no
 * relative branch or call (their targets would move) and no second
 * syscall, and no direct branch of the section (its function's, or one
 * from elsewhere) may land inside it but at its first byte. RIP-relative operands are relocatable (their disp32 is
 * rewritten for the trampoline's address); their offsets are given.
 * Windows that end with the syscall come first (a thread blocked in the
 * call while the window is written resumes after it), then the shortest.
 */
#define PLAN_SCAN 4	/* instructions tried on each side of the site */
#define PLAN_MAX 8192	/* instructions of one function we look at */

struct plan_insn {
	uint64_t addr;
	uint8_t size;
	bool relative;	 /* a relative jump, call or loop */
	bool syscall;
	uint8_t rip_off; /* offset of a RIP-relative disp32, 0: none */
	uint64_t target; /* of a direct branch, 0: none */
};

static struct plan_insn plan_buf[PLAN_MAX];

/* --plan prints text; --plan-bin writes plan_recs after the sweep. */
static bool plan_text;
static struct kp_plan_rec *plan_recs;
static size_t n_plan_recs, cap_plan_recs;

static int plan_keep(const struct kp_plan_rec *r)
{
	if (n_plan_recs == cap_plan_recs) {
		size_t cap = cap_plan_recs ? cap_plan_recs * 2 : 256;
		struct kp_plan_rec *v = realloc(plan_recs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		plan_recs = v;
		cap_plan_recs = cap;
	}
	plan_recs[n_plan_recs++] = *r;
	return 0;
}

static void plan_decode_one(const cs_insn *i, struct plan_insn *p)
{
	const cs_x86 *x = &i->detail->x86;
	memset(p, 0, sizeof(*p));
	p->addr = i->address;
	p->size = (uint8_t)i->size;
	p->syscall = is_syscall(i);
	p->relative = in_group(i, X86_GRP_BRANCH_RELATIVE);
	if (p->relative && x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		p->target = (uint64_t)x->operands[0].imm;
	for (unsigned k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM && x->operands[k].mem.base == X86_REG_RIP &&
		    x->encoding.disp_size == 4)
			p->rip_off = x->encoding.disp_offset;
}

/*
 * The targets of every direct branch and call of the section being
 * planned, sorted: a jump from another function (hand-written assembly
 * shares tails that way) may land inside a window too. From a linear
 * sweep that steps one byte past what does not decode; a target read from
 * data that looked like code only makes a window more careful.
 */
static uint64_t *targets;
static size_t n_targets, cap_targets;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int plan_target_add(uint64_t t)
{
	if (n_targets == cap_targets) {
		size_t cap = cap_targets ? cap_targets * 2 : 4096;
		uint64_t *v = realloc(targets, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		targets = v;
		cap_targets = cap;
	}
	targets[n_targets++] = t;
	return 0;
}

static bool plan_bounds(const struct file *f, uint64_t sec_addr, size_t sec_size, uint64_t x,
			uint64_t *start, uint64_t *len);

/*
 * Which targets can matter: a window lies within PLAN_SCAN instructions
 * (at most 15 bytes each) of its site, so only targets within PLAN_NEAR of
 * a site are kept. A rel8 branch reaches 128 bytes at most: it can land in
 * a window only from within PLAN_REL8 of the site.
 */
#define PLAN_NEAR 128
#define PLAN_REL8 256
#define PLAN_BACK_MAX (64u << 10) /* a known start further back: bytes taken raw */

/* Whether t is within PLAN_NEAR of one of the n sorted site addresses. */
static bool near_site(const uint64_t *sites, size_t n, uint64_t t)
{
	uint64_t lo = t > PLAN_NEAR ? t - PLAN_NEAR : 0;
	size_t a = lo ? first_above(sites, n, lo - 1) : 0;
	return a < n && sites[a] <= t + PLAN_NEAR;
}

static int plan_target_near(const uint64_t *sites, size_t n_sites, uint64_t sec_addr,
			    size_t size, uint64_t t)
{
	if (t < sec_addr || t >= sec_addr + size || !near_site(sites, n_sites, t))
		return 0;
	return plan_target_add(t);
}

/* The direct branch targets of [*a, hi) decoded from *a, an instruction
 * boundary; *a ends where decoding stopped (a boundary again). */
static int plan_targets_decode(const uint8_t *data, uint64_t sec_addr, size_t size,
			       uint64_t *a, uint64_t hi, const uint64_t *sites, size_t n_sites)
{
	if (*a >= hi || *a >= sec_addr + size)
		return 0;
	const uint8_t *code = data + (*a - sec_addr);
	size_t left = (size_t)(sec_addr + size - *a);
	/* whole instructions: the last one may run past hi */
	while (*a < hi && next_insn(dis_detail, insn_detail, &code, &left, a)) {
		const cs_x86 *x = &insn_detail->detail->x86;
		if (!in_group(insn_detail, X86_GRP_BRANCH_RELATIVE) || x->op_count != 1 ||
		    x->operands[0].type != X86_OP_IMM)
			continue;
		if (plan_target_near(sites, n_sites, sec_addr, size, (uint64_t)x->operands[0].imm))
			return -ENOMEM;
	}
	return 0;
}

/* Every rel8 jump, conditional jump and loop of [lo, hi) from its bytes
 * alone (no boundary known there): more careful, never less. */
static int plan_targets_rel8_raw(const uint8_t *data, uint64_t sec_addr, size_t size, uint64_t lo,
				 uint64_t hi, const uint64_t *sites, size_t n_sites)
{
	for (uint64_t b = lo; b < hi && b + 2 <= sec_addr + size; b++) {
		uint8_t op = data[b - sec_addr];
		if (!((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3)))
			continue;
		uint64_t t = b + 2 + (uint64_t)(int64_t)(int8_t)data[b - sec_addr + 1];
		if (plan_target_near(sites, n_sites, sec_addr, size, t))
			return -ENOMEM;
	}
	return 0;
}

/* The start of a known function at or before addr (the unwind table's or
 * the symbol or Go table's), at least floor; floor when none. */
static uint64_t known_start_upto(const struct file *f, uint64_t addr, uint64_t floor)
{
	uint64_t best = floor;
	uint64_t k = f->table ? functions_upto(f, addr) : 0;
	if (k && table_addr(f, k - 1, false) > best)
		best = table_addr(f, k - 1, false);
	size_t a = first_above(f->funcs.start, f->funcs.n, addr);
	if (a && f->funcs.start[a - 1] > best && f->funcs.start[a - 1] <= addr)
		best = f->funcs.start[a - 1];
	return best;
}

/*
 * The targets near the section's sites (sorted addresses), without
 * decoding the whole section (capstone's detail mode takes ~250 ns an
 * instruction: 2.7 s for node's 60 MB of text, most of a cold start in
 * patch mode):
 * - the function starts of the symbol table or Go's table: a call through
 *   a pointer lands there, and a symbol whose size is too large must not
 *   let a window run over the next one's entry;
 * - every rel32 jump, call and conditional jump of the section, from its
 *   bytes alone: each E8, E9 and 0F 80-8F is taken as the start of one.
 *   A byte that is no instruction's start gives a target that is not one,
 *   which only makes a window more careful (few: a random target lands
 *   near a site once in millions);
 * - rel8 branches, which only reach 128 bytes: decoded around each site
 *   that has bounds (plan_bounds: a site without gets no window), from the
 *   known function start before them (the site's function or gap, and the
 *   one before it); when none is known within 64 KiB, the 256 bytes before
 *   the site's function are taken byte by byte as the rel32 ones are.
 */
static int plan_targets(const struct file *f, const uint8_t *data, uint64_t sec_addr,
			size_t size, const uint64_t *sites, size_t n_sites)
{
	n_targets = 0;
	if (!n_sites)
		return 0;
	for (size_t k = 0; k < f->funcs.n; k++)
		if (plan_target_near(sites, n_sites, sec_addr, size, f->funcs.start[k]))
			return -ENOMEM;
	for (size_t i = 0; i + 5 <= size; i++) {
		uint8_t op = data[i];
		size_t at;
		if (op == 0xe8 || op == 0xe9)
			at = i + 1;
		else if (op == 0x0f && i + 6 <= size && (data[i + 1] & 0xf0) == 0x80)
			at = i + 2;
		else
			continue;
		int32_t rel = (int32_t)load_u32(data + at);
		uint64_t t = sec_addr + at + 4 + (uint64_t)(int64_t)rel;
		if (plan_target_near(sites, n_sites, sec_addr, size, t))
			return -ENOMEM;
	}
	uint64_t done = sec_addr; /* decoded up to here, a boundary */
	for (size_t k = 0; k < n_sites; k++) {
		uint64_t fs, fl;
		/* a site without bounds gets no window: nothing to check */
		if (!plan_bounds(f, sec_addr, size, sites[k], &fs, &fl))
			continue;
		uint64_t lo = fs > sec_addr + PLAN_REL8 ? fs - PLAN_REL8 : sec_addr;
		uint64_t a = known_start_upto(f, lo, sec_addr);
		if (a < done)
			a = done; /* decoded already: go on from where it stopped */
		if (lo > a + PLAN_BACK_MAX) {
			/* no boundary known near: the bytes before the function raw */
			if (plan_targets_rel8_raw(data, sec_addr, size, lo, fs, sites, n_sites))
				return -ENOMEM;
			a = fs;
		}
		if (plan_targets_decode(data, sec_addr, size, &a, sites[k] + PLAN_REL8, sites,
					n_sites))
			return -ENOMEM;
		done = a;
	}
	qsort(targets, n_targets, sizeof(*targets), cmp_u64);
	return 0;
}

/* Whether a branch of the function, or any of the section, lands inside
 * (lo, hi). */
static bool plan_target_inside(const struct plan_insn *v, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].target > lo && v[k].target < hi)
			return true;
	size_t a = first_above(targets, n_targets, lo);
	return a < n_targets && targets[a] < hi;
}

/* The window [i, j] of v for the site at index s, or false with why. */
static bool plan_window(const struct plan_insn *v, size_t n, size_t s, size_t *wi, size_t *wj,
			const char **why)
{
	size_t best_i = 0, best_j = 0;
	unsigned best = 0;
	bool best_last = false;
	*why = "no 5-byte window of movable whole instructions";
	for (size_t i = s >= PLAN_SCAN ? s - PLAN_SCAN : 0; i <= s; i++) {
		for (size_t j = s; j < n && j <= s + PLAN_SCAN; j++) {
			unsigned len = 0;
			bool ok = true;
			for (size_t k = i; k <= j && ok; k++) {
				len += v[k].size;
				ok = !v[k].relative && (k == s || !v[k].syscall);
			}
			if (!ok || len < 5)
				continue;
			if (plan_target_inside(v, n, v[i].addr, v[j].addr + v[j].size))
				continue;
			/* the syscall last: a thread blocked in it when the
			 * window is written returns past the window */
			bool last = j == s;
			if (!best || (last && !best_last) || (last == best_last && len < best)) {
				best = len;
				best_i = i;
				best_j = j;
				best_last = last;
			}
		}
	}
	if (!best)
		return false;
	*wi = best_i;
	*wj = best_j;
	return true;
}

__attribute__((format(printf, 1, 2)))
static void plan_say(const char *fmt, ...)
{
	if (!plan_text)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * The code around site x whose branches are checked: its function from
 * the unwind tables; for code they do not describe (hand-written
 * assembly, Go), its sized symbol or Go's function table entry; else the
 * gap between the functions of the unwind tables before and after it
 * (or the section's ends).
 */
static bool plan_bounds(const struct file *f, uint64_t sec_addr, size_t sec_size, uint64_t x,
			uint64_t *start, uint64_t *len)
{
	uint64_t lo = sec_addr, hi = sec_addr + sec_size, fs, fl;
	uint64_t k = f->table ? functions_upto(f, x) : 0;
	bool inside = false;
	if (k) {
		uint64_t fde = table_addr(f, k - 1, true);
		fs = table_addr(f, k - 1, false);
		fl = fde_length(f, fde);
		inside = x < fs + fl;
		/* a signal frame's FDE starts a byte early: decode from the code */
		lo = inside ? fs + (fde_signal_frame(f, fde) ? 1 : 0) : fs + fl;
		if (inside)
			hi = fs + fl;
	}
	if (!inside && func_bounds_at(&f->funcs, x, &fs, &fl)) {
		/* within the gap the unwind tables leave */
		if (fs > lo)
			lo = fs;
		if (fs + fl < hi)
			hi = fs + fl;
	}
	/* outside the table's functions: up to the next one's start */
	if (f->table && !inside && k < f->n_fde && table_addr(f, k, false) < hi)
		hi = table_addr(f, k, false);
	if (lo < sec_addr || hi > sec_addr + sec_size || x < lo || x + 2 > hi || hi - lo > (1u << 20))
		return false;
	*start = lo;
	*len = hi - lo;
	return true;
}

/* One line per site of the section: its window, or why it has none. */
static void plan_sites(const struct file *f, const uint8_t *data, uint64_t sec_addr,
		       size_t sec_size, const struct list *sites, uint64_t sec_off,
		       uint64_t *patchable)
{
	for (size_t k = 0; k < sites->n; k++) {
		uint64_t off = sites->v[k];
		if (off < sec_off || off >= sec_off + sec_size)
			continue;
		uint64_t x = sec_addr + (off - sec_off), start, len;
		if (!plan_bounds(f, sec_addr, sec_size, x, &start, &len)) {
			plan_say("0x%llx nopatch no function bounds\n", (unsigned long long)x);
			continue;
		}
		const uint8_t *code = data + (start - sec_addr);
		size_t left = len, n = 0, s = SIZE_MAX;
		uint64_t a = start;
		bool whole = true;
		while (left && n < PLAN_MAX) {
			if (!cs_disasm_iter(dis_detail, &code, &left, &a, insn_detail)) {
				whole = false;
				break;
			}
			plan_decode_one(insn_detail, &plan_buf[n]);
			if (plan_buf[n].addr == x)
				s = n;
			n++;
		}
		const char *why = NULL;
		size_t wi, wj;
		if (!whole || left)
			why = "its function does not decode whole";
		else if (s == SIZE_MAX)
			why = "not on an instruction boundary of its function";
		if (why || !plan_window(plan_buf, n, s, &wi, &wj, &why)) {
			plan_say("0x%llx nopatch %s\n", (unsigned long long)x, why);
			continue;
		}
		uint64_t w0 = plan_buf[wi].addr;
		struct kp_plan_rec rec = {
			.site = off,
			.start = sec_off + (w0 - sec_addr),
			.len = (uint8_t)(plan_buf[wj].addr + plan_buf[wj].size - w0),
			.sys_off = (uint8_t)(x - w0),
		};
		for (size_t i = wi; i <= wj; i++)
			if (plan_buf[i].rip_off && rec.n_rip < 4)
				rec.rip[rec.n_rip++] = (uint8_t)(plan_buf[i].addr - w0 + plan_buf[i].rip_off);
		if (rec.len > 64 || plan_keep(&rec)) {
			plan_say("0x%llx nopatch window too long or out of memory\n",
			       (unsigned long long)x);
			continue;
		}
		plan_say("0x%llx patch 0x%llx %llu insns=", (unsigned long long)x,
		       (unsigned long long)w0,
		       (unsigned long long)(plan_buf[wj].addr + plan_buf[wj].size - w0));
		for (size_t i = wi; i <= wj; i++)
			plan_say("%s%u", i > wi ? "," : "", plan_buf[i].size);
		for (size_t i = wi, first = 1; i <= wj; i++) {
			if (!plan_buf[i].rip_off)
				continue;
			plan_say("%s%llu", first ? " rip=" : ",",
			       (unsigned long long)(plan_buf[i].addr - w0 + plan_buf[i].rip_off));
			first = 0;
		}
		plan_say("\n");
		(*patchable)++;
	}
}

/* The addresses of the sites in the section at sec_off, sorted. */
static size_t section_sites(const struct list *sites, uint64_t sec_off, size_t sec_size,
			    uint64_t sec_addr, uint64_t *out)
{
	size_t n = 0;
	for (size_t k = 0; k < sites->n; k++)
		if (sites->v[k] >= sec_off && sites->v[k] < sec_off + sec_size)
			out[n++] = sec_addr + (sites->v[k] - sec_off);
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

static void plan_file(const struct file *f, const struct list *sites, uint64_t *patchable)
{
	Elf_Scn *scn = NULL;
	uint64_t *addrs = malloc((sites->n ? sites->n : 1) * sizeof(*addrs));
	if (!addrs) {
		plan_say("no memory for the sites\n");
		return;
	}
	GElf_Shdr sh;
	const uint8_t *data;
	while ((data = next_code_section(f->elf, &scn, &sh))) {
		size_t n = section_sites(sites, sh.sh_offset, sh.sh_size, sh.sh_addr, addrs);
		if (!n)
			continue;
		if (plan_targets(f, data, sh.sh_addr, sh.sh_size, addrs, n)) {
			plan_say("no memory for the section's branch targets\n");
			continue;
		}
		plan_sites(f, data, sh.sh_addr, sh.sh_size, sites, sh.sh_offset, patchable);
	}
	free(addrs);
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int a = 1;
	bool plan = false, check = false;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-v") == 0)
			verbose = true;
		else if (strcmp(argv[a], "--capstone") == 0)
			use_capstone = true;
		else if (strcmp(argv[a], "--check") == 0)
			check = true;
		else if (strcmp(argv[a], "--plan") == 0)
			plan = plan_text = true;
		else if (strcmp(argv[a], "--plan-bin") == 0)
			plan = true;
		else
			break;
	}
	if (a + 1 != argc) {
		fprintf(stderr, "usage: kprof-sites [-v] [--plan] [--capstone] FILE (run by "
				"libkprof.so's rewrite mode)\n"
				"  --plan  one line per site (virtual addresses): \"ADDR patch START "
				"LEN insns=SIZES [rip=OFFSETS]\"\n"
				"          or \"ADDR nopatch WHY\": the window a 5-byte jmp can replace\n"
				"  --plan-bin  the same for the shim: \"KPRFPLN1\", uint64 count, uint64\n"
				"          sites without a window, count records of 24 bytes (uint64\n"
				"          site and window file offsets; len, sys_off, n_rip, rip[4], 0)\n"
				"  --capstone  find the sites with capstone (the reference; ~20x slower)\n"
				"  --check  compare the instruction lengths of the sweep with capstone's\n"
				"          at every instruction of FILE's code: exit 1 if one differs\n");
		return 2;
	}
	const char *path = argv[a];
	if (elf_version(EV_CURRENT) == EV_NONE ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &dis_plain) != CS_ERR_OK ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &dis_detail) != CS_ERR_OK) {
		fprintf(stderr, "kprof-sites: cannot start libelf or capstone\n");
		return 1;
	}
	cs_option(dis_detail, CS_OPT_DETAIL, CS_OPT_ON);
	insn_plain = cs_malloc(dis_plain);
	insn_detail = cs_malloc(dis_detail);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kprof-sites: %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct file f;
	memset(&f, 0, sizeof(f));
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF || gelf_getclass(f.elf) != ELFCLASS64) {
		fprintf(stderr, "kprof-sites: %s: not an ELF64 file\n", path);
		if (f.elf)
			elf_end(f.elf);
		close(fd);
		return 1;
	}
	if (check) {
		int status = check_decoder(f.elf, path);
		elf_end(f.elf);
		close(fd);
		return status;
	}
	read_unwind_tables(&f);
	if (func_bounds_read(f.elf, &f.funcs)) {
		fprintf(stderr, "kprof-sites: %s: out of memory\n", path);
		return 1;
	}
	if (verbose && f.funcs.source)
		fprintf(stderr, "kprof-sites: %s: %zu function bounds from %s\n", path, f.funcs.n,
			f.funcs.source);
	struct list sites = { 0 };
	uint64_t skipped = 0;
	if (sweep_file(&f, &sites, &skipped)) {
		fprintf(stderr, "kprof-sites: %s: out of memory\n", path);
		return 1;
	}
	if (verbose)
		fprintf(stderr, "kprof-sites: %s: %zu sites, %llu left out, %llu pairs in data, "
			"%llu bytes decoded\n", path, sites.n, (unsigned long long)skipped,
			(unsigned long long)in_data, (unsigned long long)decoded);
	struct kp_sites_head head = { KP_SITES_MAGIC, sites.n, skipped };
	int status = 0;
	if (plan) {
		uint64_t patchable = 0;
		plan_file(&f, &sites, &patchable);
		struct kp_sites_head plan_head = { KP_PLAN_MAGIC, n_plan_recs,
						   sites.n - n_plan_recs };
		if (!plan_text && (write_all(1, &plan_head, sizeof(plan_head)) ||
				   write_all(1, plan_recs, n_plan_recs * sizeof(*plan_recs)))) {
			fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
			status = 1;
		}
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
			status = 1;
		}
		if (verbose)
			fprintf(stderr, "kprof-sites: %s: %llu of %zu sites patchable with a 5-byte jmp\n",
				path, (unsigned long long)patchable, sites.n);
	} else if (write_all(1, &head, sizeof(head)) ||
	    write_all(1, sites.v, sites.n * sizeof(uint64_t))) {
		fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
		status = 1;
	}
	free(sites.v);
	free(plan_recs);
	free(targets);
	func_bounds_free(&f.funcs);
	elf_end(f.elf);
	close(fd);
	cs_free(insn_plain, 1);
	cs_free(insn_detail, 1);
	cs_close(&dis_plain);
	cs_close(&dis_detail);
	return status;
}
