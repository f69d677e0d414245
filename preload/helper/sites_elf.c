/* SPDX-License-Identifier: MIT */
/*
 * kprof-sites' view of an ELF file's code: its executable sections, the
 * functions .eh_frame_hdr's search table and .eh_frame describe (where
 * instructions start), and a growing list of offsets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sites.h"

int list_add(struct list *l, uint64_t x)
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

void read_unwind_tables(struct file *f)
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
uint64_t fde_length(const struct file *f, uint64_t fde_addr)
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
bool fde_signal_frame(const struct file *f, uint64_t fde_addr)
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
uint64_t table_addr(const struct file *f, uint64_t k, bool fde)
{
	return f->hdr_addr + (uint64_t)(int64_t)(int32_t)load_u32(f->table + 8 * k + (fde ? 4 : 0));
}

/* How many functions of the table start at or before addr. */
uint64_t functions_upto(const struct file *f, uint64_t addr)
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
bool function_at(const struct file *f, uint64_t addr, uint64_t *start,
			uint64_t *len)
{
	uint64_t k = functions_upto(f, addr);
	if (!k)
		return false;
	*start = table_addr(f, k - 1, false);
	*len = fde_length(f, table_addr(f, k - 1, true));
	return true;
}

/* The index of the first of the n sorted values above x (n: none). */
size_t first_above(const uint64_t *v, size_t n, uint64_t x)
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

int write_all(int fd, const void *buf, size_t n)
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

/* The next executable section after *scn (its header in *sh, its bytes
 * returned), or NULL after the last. */
const uint8_t *next_code_section(Elf *elf, Elf_Scn **scn, GElf_Shdr *sh)
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
