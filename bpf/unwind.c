/* SPDX-License-Identifier: MIT */
/*
 * The one unwinding step kbpf-trace does itself: where the return address
 * of the innermost user frame is, from the .eh_frame call frame
 * information of the file it runs in. The kernel's user stack is a frame
 * pointer chain, and libc's syscall wrappers (read, write, ...) set up no
 * frame, so the chain skips the function that called them; .eh_frame says
 * at which offset from the stack pointer the wrapper's return address is
 * (CFA = rsp + N, return address at CFA - 8 on x86-64), and the stack
 * words BPF saved at the first such call hold it. Only rules of the form
 * "CFA = rsp + N" are used; anything else (rbp-based: the chain already
 * has the caller; expressions) gives no answer.
 *
 * Files are parsed once with libelf and cached by path: .eh_frame_hdr's
 * sorted table finds the FDE, the CIE and FDE instructions are run up to
 * the address.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer.h"

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define REG_RSP 7
#define STATE_STACK 8

struct load_segment {
	uint64_t offset, vaddr, filesz;
};

struct cfi_file {
	char *path;
	bool usable;
	unsigned char *hdr, *frame; /* .eh_frame_hdr and .eh_frame contents */
	size_t hdr_size, frame_size;
	uint64_t hdr_vaddr, frame_vaddr;
	struct load_segment segs[8];
	unsigned n_segs;
	struct cfi_file *next;
};

static struct cfi_file *files;

/* A cursor over one section's bytes; ok turns false past the end. */
struct cursor {
	const unsigned char *p, *end;
	uint64_t vaddr; /* of p */
	bool ok;
};

static uint64_t take(struct cursor *c, unsigned n)
{
	uint64_t v = 0;
	if (!c->ok || (size_t)(c->end - c->p) < n) {
		c->ok = false;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	c->vaddr += n;
	return v;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->ok; shift += 7) {
		uint64_t b = take(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(struct cursor *c)
{
	uint64_t v = 0, b = 0;
	unsigned shift = 0;
	do {
		b = take(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
	} while (c->ok && (b & 0x80));
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer; base for datarel. */
static uint64_t encoded(struct cursor *c, unsigned enc, uint64_t datarel_base)
{
	uint64_t at = c->vaddr, v;
	switch (enc & 0x0f) {
	case 0x00: v = take(c, 8); break;
	case 0x01: v = uleb(c); break;
	case 0x02: v = take(c, 2); break;
	case 0x03: v = take(c, 4); break;
	case 0x04: v = take(c, 8); break;
	case 0x09: v = (uint64_t)sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)take(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)take(c, 4); break;
	case 0x0c: v = take(c, 8); break;
	default: c->ok = false; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case DW_EH_PE_pcrel: v += at; break;
	case DW_EH_PE_datarel: v += datarel_base; break;
	default: c->ok = false;
	}
	if (enc & 0x80) /* indirect: not for the fields used here */
		c->ok = false;
	return v;
}

static void *section_copy(Elf_Scn *scn, size_t *size)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	void *copy = malloc(d->d_size);
	if (copy) {
		memcpy(copy, d->d_buf, d->d_size);
		*size = d->d_size;
	}
	return copy;
}

static void cfi_load(struct cfi_file *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx, n_ph;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx) ||
	    elf_getphdrnum(elf, &n_ph))
		goto out;
	for (size_t i = 0; i < n_ph && f->n_segs < 8; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->segs[f->n_segs++] = (struct load_segment){ ph.p_offset, ph.p_vaddr,
								      ph.p_filesz };
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame_hdr") && !f->hdr) {
			f->hdr = section_copy(scn, &f->hdr_size);
			f->hdr_vaddr = sh.sh_addr;
		} else if (!strcmp(name, ".eh_frame") && !f->frame) {
			f->frame = section_copy(scn, &f->frame_size);
			f->frame_vaddr = sh.sh_addr;
		}
	}
	f->usable = f->hdr && f->frame && f->n_segs && f->hdr_size >= 12;
out:
	if (elf)
		elf_end(elf);
	close(fd);
}

static struct cfi_file *cfi_get(const char *path)
{
	for (struct cfi_file *f = files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	struct cfi_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	static bool elf_ready;
	if (!elf_ready)
		elf_ready = elf_version(EV_CURRENT) != EV_NONE;
	if (elf_ready)
		cfi_load(f);
	f->next = files;
	files = f;
	return f;
}

/* The FDE covering vaddr, from .eh_frame_hdr's binary search table. */
static bool find_fde(const struct cfi_file *f, uint64_t vaddr, uint64_t *fde_vaddr)
{
	const unsigned char *h = f->hdr;
	if (h[0] != 1 || h[2] == DW_EH_PE_omit || h[3] != (DW_EH_PE_datarel | 0x0b))
		return false;
	struct cursor c = { h + 4, h + f->hdr_size, f->hdr_vaddr + 4, true };
	encoded(&c, h[1], f->hdr_vaddr); /* eh_frame_ptr */
	uint64_t count = encoded(&c, h[2], f->hdr_vaddr);
	if (!c.ok || count > (size_t)(c.end - c.p) / 8)
		return false;
	const unsigned char *table = c.p;
	uint64_t lo = 0, hi = count;
	while (lo < hi) { /* the last entry whose start is <= vaddr */
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t start;
		memcpy(&start, table + mid * 8, 4);
		if (f->hdr_vaddr + (uint64_t)(int64_t)start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	int32_t at;
	memcpy(&at, table + (lo - 1) * 8 + 4, 4);
	*fde_vaddr = f->hdr_vaddr + (uint64_t)(int64_t)at;
	return true;
}

struct cfa_state {
	uint64_t reg;
	int64_t offset;
	bool expression;
};

/*
 * Runs CFA instructions until the row that covers target (or the end).
 * Returns false on an instruction it cannot skip.
 */
static bool run_cfa(struct cursor *c, uint64_t *loc, uint64_t target,
		    uint64_t code_align, int64_t data_align, unsigned fde_enc,
		    struct cfa_state *st, struct cfa_state *stack, unsigned *depth)
{
	while (c->ok && c->p < c->end) {
		unsigned op = (unsigned)take(c, 1), low = op & 0x3f;
		uint64_t advance = 0;
		switch (op & 0xc0) {
		case 0x40:
			advance = low * code_align;
			break;
		case 0x80:
			uleb(c);
			continue;
		case 0xc0:
			continue;
		}
		if (!advance) {
			switch (op) {
			case 0x00: break;
			case 0x01: {
				uint64_t to = encoded(c, fde_enc, 0);
				if (to > target)
					return true;
				*loc = to;
				break;
			}
			case 0x02: advance = take(c, 1) * code_align; break;
			case 0x03: advance = take(c, 2) * code_align; break;
			case 0x04: advance = take(c, 4) * code_align; break;
			case 0x05: case 0x09: case 0x14: case 0x2f: uleb(c); uleb(c); break;
			case 0x06: case 0x07: case 0x08: case 0x2e: uleb(c); break;
			case 0x0a:
				if (*depth < STATE_STACK)
					stack[(*depth)++] = *st;
				break;
			case 0x0b:
				if (*depth)
					*st = stack[--(*depth)];
				break;
			case 0x0c:
				st->reg = uleb(c);
				st->offset = (int64_t)uleb(c);
				st->expression = false;
				break;
			case 0x0d: st->reg = uleb(c); st->expression = false; break;
			case 0x0e: st->offset = (int64_t)uleb(c); break;
			case 0x0f: {
				uint64_t len = uleb(c);
				if (len > (uint64_t)(c->end - c->p))
					return false;
				c->p += len;
				c->vaddr += len;
				st->expression = true;
				break;
			}
			case 0x10: case 0x16: {
				uleb(c);
				uint64_t len = uleb(c);
				if (len > (uint64_t)(c->end - c->p))
					return false;
				c->p += len;
				c->vaddr += len;
				break;
			}
			case 0x11: case 0x15: uleb(c); sleb(c); break;
			case 0x12:
				st->reg = uleb(c);
				st->offset = sleb(c) * data_align;
				st->expression = false;
				break;
			case 0x13: st->offset = sleb(c) * data_align; break;
			default:
				return false;
			}
		}
		if (advance) {
			if (*loc + advance > target)
				return true;
			*loc += advance;
		}
	}
	return c->ok;
}

/* The CFA rule at vaddr from the FDE at fde_vaddr. */
static bool cfa_at(const struct cfi_file *f, uint64_t fde_vaddr, uint64_t vaddr,
		   struct cfa_state *st)
{
	if (fde_vaddr < f->frame_vaddr || fde_vaddr - f->frame_vaddr + 8 > f->frame_size)
		return false;
	const unsigned char *base = f->frame, *end = f->frame + f->frame_size;
	struct cursor c = { base + (fde_vaddr - f->frame_vaddr), end, fde_vaddr, true };
	uint64_t len = take(&c, 4);
	if (len == 0 || len == 0xffffffff || len > (uint64_t)(end - c.p))
		return false;
	const unsigned char *fde_end = c.p + len;
	const unsigned char *id_at = c.p;
	uint64_t cie_ptr = take(&c, 4);
	if (!cie_ptr || cie_ptr > (uint64_t)(id_at - base))
		return false;
	/* the CIE */
	const unsigned char *cie = id_at - cie_ptr;
	struct cursor k = { cie, end, f->frame_vaddr + (uint64_t)(cie - base), true };
	uint64_t cie_len = take(&k, 4);
	if (cie_len == 0 || cie_len == 0xffffffff || cie_len > (uint64_t)(end - k.p))
		return false;
	const unsigned char *cie_end = k.p + cie_len;
	k.end = cie_end;
	if (take(&k, 4) != 0)
		return false;
	unsigned version = (unsigned)take(&k, 1);
	const char *aug = (const char *)k.p;
	size_t aug_len = strnlen(aug, (size_t)(cie_end - k.p));
	k.p += aug_len + 1;
	k.vaddr += aug_len + 1;
	if (strstr(aug, "eh"))
		return false;
	uint64_t code_align = uleb(&k);
	int64_t data_align = sleb(&k);
	if (version == 1)
		take(&k, 1);
	else
		uleb(&k);
	unsigned fde_enc = 0;
	bool z = aug[0] == 'z';
	if (z) {
		uint64_t aug_data = uleb(&k);
		const unsigned char *after = k.p + aug_data;
		for (const char *a = aug + 1; *a && k.ok; a++) {
			if (*a == 'R')
				fde_enc = (unsigned)take(&k, 1);
			else if (*a == 'P') {
				unsigned enc = (unsigned)take(&k, 1);
				encoded(&k, enc & 0x7f, 0);
			} else if (*a == 'L')
				take(&k, 1);
			else if (*a != 'S' && *a != 'B')
				break;
		}
		if (after > cie_end)
			return false;
		k.vaddr += (uint64_t)(after - k.p);
		k.p = after;
	}
	/* the FDE's range */
	c.end = fde_end;
	uint64_t pc_begin = encoded(&c, fde_enc, 0);
	uint64_t pc_range = encoded(&c, fde_enc & 0x0f, 0);
	if (!c.ok || vaddr < pc_begin || vaddr >= pc_begin + pc_range)
		return false;
	if (z) {
		uint64_t skip = uleb(&c);
		if (skip > (uint64_t)(c.end - c.p))
			return false;
		c.p += skip;
		c.vaddr += skip;
	}
	struct cfa_state stack[STATE_STACK];
	unsigned depth = 0;
	uint64_t loc = pc_begin;
	memset(st, 0, sizeof(*st));
	if (!run_cfa(&k, &loc, UINT64_MAX, code_align, data_align, fde_enc, st,
		     stack, &depth))
		return false;
	loc = pc_begin;
	depth = 0;
	return run_cfa(&c, &loc, vaddr, code_align, data_align, fde_enc, st,
		       stack, &depth);
}

int unwind_return_slot(const char *path, uint64_t file_offset, uint64_t *sp_offset)
{
	struct cfi_file *f = cfi_get(path);
	if (!f || !f->usable)
		return -ENOENT;
	uint64_t vaddr = 0;
	bool found = false;
	for (unsigned i = 0; i < f->n_segs && !found; i++) {
		const struct load_segment *s = &f->segs[i];
		if (file_offset >= s->offset && file_offset < s->offset + s->filesz) {
			vaddr = file_offset - s->offset + s->vaddr;
			found = true;
		}
	}
	uint64_t fde;
	struct cfa_state st;
	if (!found || !find_fde(f, vaddr, &fde) || !cfa_at(f, fde, vaddr, &st))
		return -ENOENT;
	if (st.expression || st.reg != REG_RSP || st.offset < 8)
		return -ENOENT;
	*sp_offset = (uint64_t)st.offset - 8;
	return 0;
}

/*
 * Every `syscall` (0f 05) in path's executable segments, each with the
 * stack slot of its function's return address (or KBPF_NO_SLOT), into
 * fill(ctx, file offset after the instruction, slot). Bytes that only
 * look like the instruction get an entry no call will ever look up.
 */
int unwind_syscall_slots(const char *path, void (*fill)(void *ctx, uint64_t off, int32_t slot),
			 void *ctx)
{
	struct cfi_file *f = cfi_get(path);
	if (!f || !f->usable)
		return -ENOENT;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n_ph;
	int err = -ENOENT;
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_ph))
		goto out;
	size_t size;
	const unsigned char *image = (const unsigned char *)elf_rawfile(elf, &size);
	if (!image)
		goto out;
	err = 0;
	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_offset > size || ph.p_filesz > size - ph.p_offset || ph.p_filesz < 2)
			continue;
		for (uint64_t o = ph.p_offset; o + 1 < ph.p_offset + ph.p_filesz; o++) {
			if (image[o] != 0x0f || image[o + 1] != 0x05)
				continue;
			uint64_t slot;
			bool known = unwind_return_slot(path, o + 2, &slot) == 0 && slot <= 4096;
			fill(ctx, o + 2, known ? (int32_t)slot : KBPF_NO_SLOT);
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

void unwind_free(void)
{
	while (files) {
		struct cfi_file *f = files;
		files = f->next;
		free(f->path);
		free(f->hdr);
		free(f->frame);
		free(f);
	}
}
