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

#include "version.h"
#include "sites.h"
#include "sites_protocol.h"
#include "x86_len.h"

static csh dis_plain;
csh dis_detail;
static cs_insn *insn_plain;
cs_insn *insn_detail;

/* The next instruction that decodes, stepping a byte past what does not
 * (data in the code, padding); false at the end. */
bool next_insn(csh h, cs_insn *insn, const uint8_t **code, size_t *left, uint64_t *a)
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
bool verbose;
static uint64_t decoded, in_data;
static bool use_capstone; /* --capstone: the reference decoder sweeps */

/* The length of the instruction at a (left bytes there), 0: none. */
static unsigned insn_len(const uint8_t *code, size_t left, uint64_t a)
{
	if (!use_capstone)
		return x86_insn_len(code, left);
	return cs_disasm_iter(dis_plain, &code, &left, &a, insn_plain) ? insn_plain->size : 0;
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

bool is_syscall(const cs_insn *i)
{
	return i->id == X86_INS_SYSCALL && i->size == 2;
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

bool in_group(const cs_insn *i, unsigned g)
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

static void usage(FILE *out)
{
	fprintf(out, "Usage: kprof-sites [-v] [--plan|--plan-bin] [--capstone] [--check] FILE\n"
		"The syscall instructions of an ELF file's code, for libkprof.so's\n"
		"rewrite and patch modes (which run it, once per file and build-id).\n"
		"  -v          name the sites left alone, and why\n"
		"  --plan      one line per site (virtual addresses): \"ADDR patch START\n"
		"              LEN insns=SIZES [rip=OFFSETS]\" or \"ADDR nopatch WHY\": the\n"
		"              window a 5-byte jmp can replace\n"
		"  --plan-bin  the same for the shim: \"KPRFPLN1\", uint64 count, uint64\n"
		"              sites without a window, count records of 24 bytes (uint64\n"
		"              site and window file offsets; len, sys_off, n_rip, rip[4], 0)\n"
		"  --capstone  find the sites with capstone (the reference; ~20x slower)\n"
		"  --check     compare the instruction lengths of the sweep with capstone's\n"
		"              at every instruction of FILE's code: exit 1 if one differs\n"
		"  -h, --help  this help;  -V, --version  the version\n"
		"Exit status: 0, 1 when FILE cannot be read, 2 on a usage error.\n");
}

int main(int argc, char **argv)
{
	int a = 1;
	bool plan = false, plan_text = false, check = false;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[a], "-V") == 0 || strcmp(argv[a], "--version") == 0) {
			printf("kprof-sites %s\n", KPROF_VERSION);
			return 0;
		}
		if (strcmp(argv[a], "--") == 0) {
			a++;
			break;
		}
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
		else {
			fprintf(stderr, "kprof-sites: unknown option '%s'\n"
				"Try 'kprof-sites --help' for more information.\n", argv[a]);
			return 2;
		}
	}
	if (a + 1 != argc) {
		fprintf(stderr, "kprof-sites: %s\nTry 'kprof-sites --help' for more information.\n",
			a >= argc ? "no FILE" : "one FILE only");
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
		status = plan_output(&f, &sites, plan_text, path);
	} else if (write_all(1, &head, sizeof(head)) ||
	    write_all(1, sites.v, sites.n * sizeof(uint64_t))) {
		fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
		status = 1;
	}
	free(sites.v);
	func_bounds_free(&f.funcs);
	elf_end(f.elf);
	close(fd);
	cs_free(insn_plain, 1);
	cs_free(insn_detail, 1);
	cs_close(&dis_plain);
	cs_close(&dis_detail);
	return status;
}
