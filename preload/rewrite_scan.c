/*
 * Finding the `syscall` instructions of a mapping (rewrite mode). An ELF
 * file's executable sections come from libelf; capstone decodes them. A
 * full linear sweep is the reference, but capstone takes ~250 ns an
 * instruction (libc: 80 ms, cc1: 1.4 s), so the sweep starts at the
 * beginning of the function around each `0f 05` byte pair, from the
 * .eh_frame_hdr search table (function starts are instruction
 * boundaries), and decodes up to the pair: a pair inside another
 * instruction is not a site. What a file's sweep found is kept in a
 * per-user cache keyed by build-id, so that the next process using the
 * file (the next cc1) pays a lookup instead.
 *
 * A site whose function keeps data in the 8 bytes below the stack pointer
 * (the red zone, where `call *%rax` pushes its return address) is left
 * alone: rewriting it would overwrite live data.
 *
 * Code without an ELF file behind it (a JIT's buffer) has no sections and
 * no function table to sync from; there only `mov $nr, %eax; syscall` (or
 * the %rax form) counts, confirmed by capstone, with nr a syscall number.
 */
#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "kprof.h"
#include "rewrite.h"

struct kp_rw_scan_stats kp_rw_stats;

static bool cs_ready;
static csh dis_plain, dis_detail;
static cs_insn *insn_plain, *insn_detail;
static char cache_dir[KP_PATH_MAX];

/* ---- growable list of uint64_t ---- */

int kp_rw_list_add(struct kp_rw_list *l, uint64_t x)
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

/* ---- capstone ---- */

static int disasm_init(void)
{
	if (cs_ready)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dis_plain) != CS_ERR_OK)
		return -ENOSYS;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dis_detail) != CS_ERR_OK) {
		cs_close(&dis_plain);
		return -ENOSYS;
	}
	cs_option(dis_detail, CS_OPT_DETAIL, CS_OPT_ON);
	insn_plain = cs_malloc(dis_plain);
	insn_detail = cs_malloc(dis_detail);
	if (!insn_plain || !insn_detail)
		return -ENOMEM;
	cs_ready = true;
	return 0;
}

static bool is_syscall(const cs_insn *i)
{
	return i->id == X86_INS_SYSCALL && i->size == 2;
}

/* ---- the per-user cache of sites ---- */

static void cache_dir_init(void)
{
	extern char **environ;
	const char *xdg = NULL, *home = NULL;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "XDG_CACHE_HOME=", 15) == 0 && (*e)[15] == '/')
			xdg = *e + 15;
		else if (strncmp(*e, "HOME=", 5) == 0 && (*e)[5] == '/')
			home = *e + 5;
	}
	const char *base = xdg ? xdg : home;
	const char *tail = xdg ? "/kprof/sites" : "/.cache/kprof/sites";
	if (!base || strlen(base) + strlen(tail) + 64 >= sizeof(cache_dir))
		return;
	strcpy(cache_dir, base);
	strcat(cache_dir, tail);
	/* each level 0700 where we create it; the last one must be ours */
	char tmp[KP_PATH_MAX];
	strcpy(tmp, cache_dir);
	for (char *p = tmp + strlen(base) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		kp_raw(SYS_mkdir, tmp, 0700);
		*p = '/';
	}
	kp_raw(SYS_mkdir, tmp, 0700);
	struct stat st;
	if (kp_raw(SYS_newfstatat, AT_FDCWD, cache_dir, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISDIR(st.st_mode) || (long)st.st_uid != kp_raw0(SYS_geteuid) ||
	    (st.st_mode & 077))
		cache_dir[0] = 0;
}

#define CACHE_MAGIC "KPRFSIT2" /* bumped when the analysis changes */

struct cache_head {
	char magic[8];
	uint64_t file_size;
	uint64_t count;
	uint64_t skipped; /* sites left alone (red zone) */
	char build_id[48];
};

static void cache_path(char *out, const char *build_id, uint64_t size)
{
	char num[24];
	int i = 23;
	num[i] = 0;
	do {
		num[--i] = (char)('0' + size % 10);
		size /= 10;
	} while (size);
	strcpy(out, cache_dir);
	strcat(out, "/");
	strcat(out, build_id);
	strcat(out, "-");
	strcat(out, num + i);
}

static bool cache_read(const char *build_id, uint64_t size, struct kp_rw_list *out,
		       uint64_t *skipped)
{
	if (!cache_dir[0] || !build_id[0])
		return false;
	char path[KP_PATH_MAX];
	cache_path(path, build_id, size);
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	struct cache_head h;
	bool ok = false;
	struct stat st;
	if (kp_raw(SYS_fstat, fd, &st) == 0 &&
	    (long)st.st_uid == kp_raw0(SYS_geteuid) &&
	    kp_raw(SYS_pread64, fd, &h, sizeof(h), 0) == (long)sizeof(h) &&
	    memcmp(h.magic, CACHE_MAGIC, 8) == 0 && h.file_size == size &&
	    strncmp(h.build_id, build_id, sizeof(h.build_id)) == 0 &&
	    h.count < (1u << 20) &&
	    (uint64_t)st.st_size == sizeof(h) + h.count * sizeof(uint64_t)) {
		ok = true;
		for (uint64_t i = 0; ok && i < h.count; i += 512) {
			uint64_t buf[512];
			uint64_t n = h.count - i < 512 ? h.count - i : 512;
			long r = kp_raw(SYS_pread64, fd, buf, n * sizeof(uint64_t),
					sizeof(h) + i * sizeof(uint64_t));
			if (r != (long)(n * sizeof(uint64_t)))
				ok = false;
			for (uint64_t k = 0; ok && k < n; k++)
				ok = kp_rw_list_add(out, buf[k]) == 0;
		}
		*skipped = h.skipped;
	}
	kp_raw(SYS_close, fd);
	if (!ok)
		out->n = 0;
	return ok;
}

static void cache_write(const char *build_id, uint64_t size, const struct kp_rw_list *l,
			uint64_t skipped)
{
	if (!cache_dir[0] || !build_id[0])
		return;
	char path[KP_PATH_MAX], tmp[KP_PATH_MAX];
	cache_path(path, build_id, size);
	strcpy(tmp, path);
	strcat(tmp, ".tmp");
	size_t len = strlen(tmp);
	uint64_t r = kp_new_stream_id((uintptr_t)l);
	for (int i = 0; i < 8; i++)
		tmp[len++] = "0123456789abcdef"[(r >> (4 * i)) & 15];
	tmp[len] = 0;
	long fd = kp_raw(SYS_openat, AT_FDCWD, tmp,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	struct cache_head h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.file_size = size;
	h.count = l->n;
	h.skipped = skipped;
	strncpy(h.build_id, build_id, sizeof(h.build_id) - 1);
	bool ok = kp_raw(SYS_write, fd, &h, sizeof(h)) == (long)sizeof(h);
	size_t bytes = l->n * sizeof(uint64_t);
	for (size_t done = 0; ok && done < bytes;) {
		long n = kp_raw(SYS_write, fd, (const char *)l->v + done, bytes - done);
		if (n <= 0)
			ok = false;
		else
			done += (size_t)n;
	}
	kp_raw(SYS_close, fd);
	if (!ok || kp_raw(SYS_rename, tmp, path))
		kp_raw(SYS_unlink, tmp);
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
};

static int32_t rd_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void read_build_id(struct file *f)
{
	f->build_id[0] = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) != 0 ||
			    nh.n_descsz > 20 || nh.n_descsz < 8)
				continue;
			const uint8_t *b = (const uint8_t *)d->d_buf + desc_off;
			for (unsigned k = 0; k < nh.n_descsz; k++) {
				f->build_id[2 * k] = "0123456789abcdef"[b[k] >> 4];
				f->build_id[2 * k + 1] = "0123456789abcdef"[b[k] & 15];
			}
			f->build_id[2 * nh.n_descsz] = 0;
			return;
		}
	}
}

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
	case 0x0b: return (uint64_t)(int64_t)rd_s32(p);
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

/* The function around addr: [start, start + len), from the table. */
static bool function_at(const struct file *f, uint64_t addr, uint64_t *start,
			uint64_t *len)
{
	uint64_t lo = 0, hi = f->n_fde;
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (f->hdr_addr + (uint64_t)(int64_t)rd_s32(f->table + 8 * mid) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	*start = f->hdr_addr + (uint64_t)(int64_t)rd_s32(f->table + 8 * (lo - 1));
	*len = fde_length(f, f->hdr_addr + (uint64_t)(int64_t)rd_s32(f->table + 8 * (lo - 1) + 4));
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
	while (left) {
		uint64_t at = a;
		if (!cs_disasm_iter(dis_detail, &code, &left, &a, insn_detail)) {
			code++;
			left--;
			a++;
			continue;
		}
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
 */
static int sweep_section(const struct file *f, const uint8_t *data, uint64_t sec_addr,
			 uint64_t sec_off, size_t size, struct kp_rw_list *out,
			 uint64_t *skipped)
{
	uint64_t pos = 0;
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
		if (sync < sec_addr || sync > x)
			sync = sec_addr;
		if (!have_pos || pos < sync || pos > x)
			pos = sync;
		const uint8_t *code = data + (pos - sec_addr);
		size_t left = size - (pos - sec_addr);
		uint64_t a = pos;
		bool site = false;
		while (left && a <= x) {
			uint64_t at = a;
			if (!cs_disasm_iter(dis_plain, &code, &left, &a, insn_plain)) {
				code++;
				left--;
				a++;
				continue;
			}
			kp_rw_stats.bytes += insn_plain->size;
			if (at == x)
				site = is_syscall(insn_plain);
		}
		pos = a;
		have_pos = true;
		if (!site)
			continue;
		if (red_zone_slot_used(f, data, sec_addr, size, x)) {
			(*skipped)++;
			if (kp_config.debug) {
				char msg[96];
				snprintf(msg, sizeof(msg), "rewrite: site at 0x%llx left alone (red zone)",
					 (unsigned long long)x);
				kp_debug(msg);
			}
			continue;
		}
		int err = kp_rw_list_add(out, sec_off + (x - sec_addr));
		if (err)
			return err;
	}
	return 0;
}

static int sweep_file(const struct file *f, struct kp_rw_list *out, uint64_t *skipped)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			continue;
		int err = sweep_section(f, d->d_buf, sh.sh_addr, sh.sh_offset, sh.sh_size,
					out, skipped);
		if (err)
			return err;
	}
	return 0;
}

/* ---- reading memory that may not be mapped ---- */

static bool read_safe(uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	long pid = kp_raw0(SYS_getpid);
	return kp_raw(SYS_process_vm_readv, pid, &local, 1, &remote, 1, 0) == (long)n;
}

/* ---- anonymous code ---- */

/* `mov $nr, %eax` / `mov $nr, %rax` right before a `syscall` at x. */
static bool confirmed_pair(const uint8_t *bytes, size_t n_before, uint64_t x)
{
	static const size_t lens[2] = { 5, 7 };
	for (int k = 0; k < 2; k++) {
		size_t len = lens[k];
		if (n_before < len)
			continue;
		const uint8_t *code = bytes + n_before - len;
		size_t left = len + 2;
		uint64_t a = x - len;
		if (!cs_disasm_iter(dis_detail, &code, &left, &a, insn_detail) ||
		    insn_detail->id != X86_INS_MOV || insn_detail->size != len)
			continue;
		const cs_x86 *m = &insn_detail->detail->x86;
		if (m->op_count != 2 || m->operands[0].type != X86_OP_REG ||
		    (m->operands[0].reg != X86_REG_EAX && m->operands[0].reg != X86_REG_RAX) ||
		    m->operands[1].type != X86_OP_IMM || m->operands[1].imm < 0 ||
		    m->operands[1].imm >= KP_SYSCALL_MAX)
			continue;
		if (cs_disasm_iter(dis_detail, &code, &left, &a, insn_detail) &&
		    is_syscall(insn_detail))
			return true;
	}
	return false;
}

static int scan_anonymous(uint64_t start, uint64_t end, struct kp_rw_list *out)
{
	/* a pair may begin in the byte before start or end in the byte after */
	uint64_t x = start - 1;
	while (x < end) {
		uint8_t win[9]; /* the 7 bytes before x, then x and x + 1 */
		if (x >= start && x + 1 < end) {
			const uint8_t *p = memchr((const void *)(uintptr_t)x, 0x0f,
						  (size_t)(end - 1 - x));
			if (!p) {
				x = end - 1; /* the pair across the end is left */
				continue;
			}
			x = (uint64_t)(uintptr_t)p;
			win[7] = p[0];
			win[8] = p[1];
		} else if (!read_safe(x, win + 7, 2)) {
			x++;
			continue;
		}
		if (win[7] == 0x0f && win[8] == 0x05) {
			bool have = x >= start + 7;
			if (have)
				memcpy(win, (const void *)(uintptr_t)(x - 7), 7);
			else
				have = read_safe(x - 7, win, 7);
			if (have && confirmed_pair(win, 7, x)) {
				kp_rw_stats.heuristic_sites++;
				int err = kp_rw_list_add(out, x);
				if (err)
					return err;
			}
		}
		x++;
	}
	return 0;
}

/* ---- the entry point ---- */

int kp_rw_scan_init(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	cache_dir_init();
	return 0;
}

int kp_rw_scan_region(uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, int prot, struct kp_rw_list *out)
{
	if (!(prot & PROT_READ))
		return 0; /* execute-only: cannot read it to check */
	int err = disasm_init();
	if (err)
		return err;
	kp_rw_stats.regions++;
	long fd = path ? kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC) : -ENOENT;
	struct file f;
	memset(&f, 0, sizeof(f));
	struct stat st;
	if (fd >= 0 && kp_raw(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode))
		f.elf = elf_begin((int)fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		if (f.elf)
			elf_end(f.elf);
		if (fd >= 0)
			kp_raw(SYS_close, fd);
		return scan_anonymous(start, end, out);
	}
	f.size = (uint64_t)st.st_size;
	read_build_id(&f);
	struct kp_rw_list offsets = { 0 };
	uint64_t skipped = 0;
	if (!cache_read(f.build_id, f.size, &offsets, &skipped)) {
		read_unwind_tables(&f);
		err = sweep_file(&f, &offsets, &skipped);
		if (!err)
			cache_write(f.build_id, f.size, &offsets, skipped);
	}
	elf_end(f.elf);
	kp_raw(SYS_close, fd);
	kp_rw_stats.skipped_red_zone += skipped;
	/* file offsets to addresses, checked against what is in memory */
	for (size_t i = 0; !err && i < offsets.n; i++) {
		uint64_t off = offsets.v[i];
		if (off + 1 < offset || off >= offset + (end - start))
			continue;
		uint64_t x = start + off - offset;
		uint8_t b[2];
		if (x >= start && x + 1 < end)
			memcpy(b, (const void *)(uintptr_t)x, 2);
		else if (!read_safe(x, b, 2))
			continue;
		if (b[0] != 0x0f || b[1] != 0x05)
			continue;
		err = kp_rw_list_add(out, x);
		kp_rw_stats.sites++;
	}
	free(offsets.v);
	return err;
}
