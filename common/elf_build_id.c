/* SPDX-License-Identifier: MIT */
/* Mappings lines and ELF build-ids; see elf_build_id.h. */
#include <elf.h>
#include <string.h>
#include <sys/mman.h>

#include "elf_build_id.h"

static uint64_t hex(const char **p)
{
	uint64_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

bool kp_maps_parse(const char *line, struct kp_maps_line *m)
{
	const char *p = line;
	m->start = hex(&p);
	if (*p++ != '-')
		return false;
	m->end = hex(&p);
	if (*p++ != ' ' || strlen(p) < 5)
		return false;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	p += 5;
	m->offset = hex(&p);
	/* " maj:min inode " */
	while (*p == ' ')
		p++;
	m->dev_major = (uint32_t)hex(&p);
	m->dev_minor = *p == ':' ? (p++, (uint32_t)hex(&p)) : 0;
	while (*p == ' ')
		p++;
	m->inode = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		m->inode = m->inode * 10 + (uint64_t)(*p - '0');
	const char *path = strchr(p, '/');
	m->special = !path && strchr(p, '[') != NULL;
	m->path = path && !strstr(path, " (deleted)") ? path : NULL;
	return true;
}

bool kp_maps_parse_line(const char *line, struct kp_maps_line *m)
{
	return kp_maps_parse(line, m) && (m->prot & PROT_EXEC) && m->path;
}

/*
 * The file's first bytes, read once: the ELF header, the program headers
 * and the build-id note are there in most files, so one pread serves what
 * took one per header (53 of the shim's start-up calls for /bin/true's
 * five files). What lies beyond is read from the file.
 */
struct head {
	kp_pread_fn read_at;
	void *ctx;
	long n;
	char buf[1024];
};

static long head_read(struct head *h, void *buf, size_t size, uint64_t off)
{
	if (off <= (uint64_t)h->n && size <= (uint64_t)h->n - off) {
		memcpy(buf, h->buf + off, size);
		return (long)size;
	}
	return h->read_at(h->ctx, buf, size, off);
}

void kp_elf_build_id(kp_pread_fn read_at, void *ctx, char *scratch,
		     size_t scratch_size, char out[KP_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	Elf64_Ehdr eh;
	struct head h = { .read_at = read_at, .ctx = ctx };

	out[0] = 0;
	h.n = read_at(ctx, h.buf, sizeof(h.buf), 0);
	if (h.n < 0)
		h.n = 0;
	if (head_read(&h, &eh, sizeof(eh), 0) != (long)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return;
	for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
		Elf64_Phdr ph;
		if (head_read(&h, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    (long)sizeof(ph))
			return;
		if (ph.p_type != PT_NOTE || ph.p_filesz > scratch_size)
			continue;
		long n = head_read(&h, scratch, ph.p_filesz, ph.p_offset);
		for (long off = 0; n > 0 && off + (long)sizeof(Elf64_Nhdr) <= n;) {
			Elf64_Nhdr nh;
			memcpy(&nh, scratch + off, sizeof(nh));
			long name_at = off + (long)sizeof(nh);
			long desc_at = name_at + (long)((nh.n_namesz + 3) & ~3u);
			long next = desc_at + (long)((nh.n_descsz + 3) & ~3u);
			if (next > n)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(scratch + name_at, "GNU", 4) == 0 &&
			    nh.n_descsz <= (KP_BUILD_ID_HEX - 1) / 2) {
				for (unsigned k = 0; k < nh.n_descsz; k++) {
					unsigned char b = (unsigned char)scratch[desc_at + k];
					out[2 * k] = digits[b >> 4];
					out[2 * k + 1] = digits[b & 15];
				}
				out[2 * nh.n_descsz] = 0;
				return;
			}
			off = next;
		}
	}
}
