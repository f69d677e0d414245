/* SPDX-License-Identifier: MIT */
/*
 * Function bounds from the symbol table or Go's pc-line table
 * (func_bounds.h). Go writes no .eh_frame, so without these the planner
 * knows no function around any of the Go runtime's syscall sites. A
 * separate file: it is ELF and Go table reading, the planner is x86.
 *
 * .gopclntab's header (Go's runtime/symtab.go, debug/gosym): a uint32
 * magic, two zero bytes, the instruction size quantum, the pointer size,
 * then pointer-sized fields. Its function table holds nfunc + 1 entries,
 * the last one the end of the text:
 *  - 0xfffffff1 (Go 1.20+), 0xfffffff0 (1.18, 1.19): nfunc at 8,
 *    textStart at 24, the table's offset at 64; entries of two uint32,
 *    the first the function's entry relative to textStart;
 *  - 0xfffffffa (1.16, 1.17): nfunc at 8, the table's offset at 56;
 *  - 0xfffffffb (1.2 to 1.15): nfunc at 8, the table at 16;
 *    these two with entries of two uint64, the first the entry address.
 * In a PIE no section is named .gopclntab: the table lies in .data.rel.ro.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "func_bounds.h"

struct range {
	uint64_t start, end;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int ranges_add(struct ranges *r, uint64_t start, uint64_t end)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct range *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct range){ start, end };
	return 0;
}

/* By start; of equal starts, the longest first (the one kept). */
static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

static bool exec_section(Elf *elf, size_t ndx)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	GElf_Shdr sh;
	return scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
	       (sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC);
}

/* Whether [start, end) lies in one executable section. */
static bool in_exec_section(Elf *elf, uint64_t start, uint64_t end)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) &&
		    start >= sh.sh_addr && end <= sh.sh_addr + sh.sh_size)
			return true;
	}
	return false;
}

/* Sized functions of .symtab in executable sections. */
static int read_symtab(Elf *elf, struct ranges *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_size || !s.st_value || s.st_shndx == SHN_UNDEF ||
			    s.st_shndx >= SHN_LORESERVE || !exec_section(elf, s.st_shndx))
				continue;
			int err = ranges_add(out, s.st_value, s.st_value + s.st_size);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The function table of the pc-line table at p (size bytes to the end of
 * its section) into out: 1; 0 when the header is not one we know, the
 * binary is not 64-bit or the table does not hold together; -ENOMEM. */
static int parse_pclntab(Elf *elf, const uint8_t *p, size_t size, struct ranges *out)
{
	if (size < 72 || p[4] || p[5] || (p[6] != 1 && p[6] != 2 && p[6] != 4) || p[7] != 8)
		return 0;
	uint32_t magic = load_u32(p);
	uint64_t nfunc = load_u64(p + 8), table, text = 0;
	size_t entry_size;
	if (magic == 0xfffffff1 || magic == 0xfffffff0) {
		text = load_u64(p + 24);
		table = load_u64(p + 64);
		entry_size = 8;
		if (!text)
			return 0;
	} else if (magic == 0xfffffffa) {
		table = load_u64(p + 56);
		entry_size = 16;
	} else if (magic == 0xfffffffb) {
		table = 16;
		entry_size = 16;
	} else {
		return 0;
	}
	if (nfunc == 0 || nfunc > (1u << 24) || table > size ||
	    (nfunc + 1) * entry_size > size - table)
		return 0;
	const uint8_t *t = p + table;
	size_t first = out->n;
	uint64_t prev = 0;
	for (uint64_t i = 0; i <= nfunc; i++) {
		uint64_t a = entry_size == 8 ? text + load_u32(t + i * 8) : load_u64(t + i * 16);
		if (i && a <= prev) {
			out->n = first; /* not increasing: not a table we can use */
			return 0;
		}
		if (i) {
			int err = ranges_add(out, prev, a);
			if (err)
				return err;
		}
		prev = a;
	}
	if (!in_exec_section(elf, out->v[first].start, prev)) {
		out->n = first;
		return 0;
	}
	return 1;
}

/*
 * Go's function table: .gopclntab, or, in a PIE, where no section has
 * that name, a header found in a data section (.data.rel.ro; the linker
 * writes textStart in place as well as in its relocation).
 */
static int read_gopclntab(Elf *elf, struct ranges *out)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".gopclntab") == 0 && (d = elf_getdata(scn, NULL)) && d->d_buf) {
			int r = parse_pclntab(elf, d->d_buf, d->d_size, out);
			return r < 0 ? r : 0;
		}
	}
	static const uint8_t magics[2][6] = {
		{ 0xf1, 0xff, 0xff, 0xff, 0, 0 }, { 0xf0, 0xff, 0xff, 0xff, 0, 0 },
	};
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		const uint8_t *base = d->d_buf;
		for (int m = 0; m < 2; m++) {
			const uint8_t *at = base;
			size_t left = d->d_size;
			while ((at = memmem(at, left, magics[m], 6))) {
				/* the header is pointer-aligned */
				int r = (at - base) & 7 ? 0 :
					parse_pclntab(elf, at, d->d_size - (size_t)(at - base), out);
				if (r)
					return r < 0 ? r : 0;
				at++;
				left = d->d_size - (size_t)(at - base);
			}
		}
	}
	return 0;
}

int func_bounds_read(Elf *elf, struct func_bounds *fb)
{
	memset(fb, 0, sizeof(*fb));
	struct ranges r = { 0 };
	int err = read_symtab(elf, &r);
	fb->source = ".symtab";
	if (!err && !r.n) {
		err = read_gopclntab(elf, &r);
		fb->source = ".gopclntab";
	}
	if (err || !r.n) {
		free(r.v);
		fb->source = NULL;
		return err;
	}
	qsort(r.v, r.n, sizeof(*r.v), cmp_range);
	fb->start = malloc(r.n * sizeof(uint64_t));
	fb->end = malloc(r.n * sizeof(uint64_t));
	if (!fb->start || !fb->end) {
		free(r.v);
		func_bounds_free(fb);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r.n; i++) {
		if (fb->n && fb->start[fb->n - 1] == r.v[i].start)
			continue; /* an alias: the longest is kept */
		fb->start[fb->n] = r.v[i].start;
		fb->end[fb->n] = r.v[i].end;
		fb->n++;
	}
	free(r.v);
	return 0;
}

bool func_bounds_at(const struct func_bounds *fb, uint64_t addr, uint64_t *start,
		    uint64_t *len)
{
	size_t lo = 0, hi = fb->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fb->start[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= fb->end[lo - 1])
		return false;
	*start = fb->start[lo - 1];
	*len = fb->end[lo - 1] - fb->start[lo - 1];
	return true;
}

void func_bounds_free(struct func_bounds *fb)
{
	free(fb->start);
	free(fb->end);
	memset(fb, 0, sizeof(*fb));
}
