/* SPDX-License-Identifier: MIT */
/*
 * kprof-sites' parts (docs/SHIM.md, "Rewrite mode"): sites_elf.c reads
 * an ELF file's code and the functions its unwind tables and symbols
 * describe; kprof_sites.c finds the syscall sites (x86_len.c's lengths,
 * capstone for the red zone) and prints them; plan.c gives patch mode's
 * windows (--plan). What they print: sites_protocol.h.
 */
#ifndef KPROF_SITES_H
#define KPROF_SITES_H

#include <capstone/capstone.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "func_bounds.h"

/* ---- sites_elf.c ---- */
struct list {
	uint64_t *v;
	size_t n, cap;
};
int list_add(struct list *l, uint64_t x);

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
/* .eh_frame_hdr's search table and .eh_frame, when the file has them */
void read_unwind_tables(struct file *f);
/* The length of the function an FDE describes, 0 when unreadable. */
uint64_t fde_length(const struct file *f, uint64_t fde_addr);
/* Whether the FDE's CIE says "S" (a signal frame: it starts a byte early). */
bool fde_signal_frame(const struct file *f, uint64_t fde_addr);
/* Entry k of the search table: its function's start, or (fde) its FDE. */
uint64_t table_addr(const struct file *f, uint64_t k, bool fde);
/* How many of the table's functions start at or before addr. */
uint64_t functions_upto(const struct file *f, uint64_t addr);
/* The function of the unwind tables at or before addr: its start, length. */
bool function_at(const struct file *f, uint64_t addr, uint64_t *start, uint64_t *len);
/* The index of the first of the n sorted values above x (n: none). */
size_t first_above(const uint64_t *v, size_t n, uint64_t x);
/* The next executable section after *scn (its header in *sh, its bytes
 * returned), or NULL after the last. */
const uint8_t *next_code_section(Elf *elf, Elf_Scn **scn, GElf_Shdr *sh);
int write_all(int fd, const void *buf, size_t n);

/* ---- kprof_sites.c ---- */
extern bool verbose;
extern csh dis_detail;		/* capstone with operands */
extern cs_insn *insn_detail;
/* The next instruction that decodes, stepping a byte past what does not
 * (data in the code, padding); false at the end. */
bool next_insn(csh h, cs_insn *insn, const uint8_t **code, size_t *left, uint64_t *a);
bool in_group(const cs_insn *i, unsigned g);
bool is_syscall(const cs_insn *i);

/* ---- plan.c ---- */
/* --plan (text) or --plan-bin: the windows of the sites, on stdout; 0,
 * or 1 when writing failed. */
int plan_output(const struct file *f, const struct list *sites, bool text, const char *path);

#endif
