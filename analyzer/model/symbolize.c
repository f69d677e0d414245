/* SPDX-License-Identifier: MIT */
/* Call-site symbolization with libelf; see symbolize.h. */
#include <errno.h>
#include <libiberty/demangle.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_map.h"
#include "symbolize.h"

struct symbol {
	uint64_t value, size;
	char *name;
	char *demangled; /* NULL: not tried yet, or not a mangled name */
	bool tried;
};

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct elf_file {
	char *path, *build_id; /* the key */
	bool usable;
	struct symbol *syms;
	size_t n_syms;
	struct segment segs[16];
	size_t n_segs;
};

struct ka_symbolizer {
	struct elf_file *files;
	size_t n_files;
	struct ka_perf_maps *jit;
};

static const char *debug_dirs[KA_DEBUG_DIRS_MAX] = { "/usr/lib/debug" };
static size_t n_debug_dirs = 1;

void ka_symbolize_debug_dirs(const char *const *dirs, size_t n)
{
	n_debug_dirs = n < KA_DEBUG_DIRS_MAX ? n : KA_DEBUG_DIRS_MAX;
	for (size_t i = 0; i < n_debug_dirs; i++)
		debug_dirs[i] = dirs[i];
}

int ka_symbolizer_new(struct ka_symbolizer **out)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	if (ka_perf_maps_new(&(*out)->jit)) {
		free(*out);
		return -ENOMEM;
	}
	return 0;
}

void ka_symbolizer_free(struct ka_symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->n_files; i++) {
		struct elf_file *f = &sym->files[i];
		for (size_t k = 0; k < f->n_syms; k++) {
			free(f->syms[k].name);
			free(f->syms[k].demangled);
		}
		free(f->syms);
		free(f->path);
		free(f->build_id);
	}
	free(sym->files);
	ka_perf_maps_free(sym->jit);
	free(sym);
}

/* The GNU build-id of an open ELF, as hex, or "" when it has none. */
static void elf_build_id(Elf *elf, char *out, size_t size)
{
	out[0] = 0;
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4) != 0)
				continue;
			const unsigned char *b = (const unsigned char *)d->d_buf + desc_off;
			for (size_t k = 0; k < nh.n_descsz && 2 * k + 2 < size; k++)
				snprintf(out + 2 * k, 3, "%02x", b[k]);
			return;
		}
	}
}

static int by_value(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* Function symbols of one table type (SHT_SYMTAB or SHT_DYNSYM). */
static int add_symbols(struct elf_file *f, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		void *p = reallocarray(f->syms, f->n_syms + n, sizeof(*f->syms));
		if (!p)
			return -ENOMEM;
		f->syms = p;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			struct symbol *y = &f->syms[f->n_syms];
			y->value = s.st_value;
			y->size = s.st_size;
			y->demangled = NULL;
			y->tried = false;
			if (!(y->name = strdup(name)))
				return -ENOMEM;
			f->n_syms++;
		}
	}
	return 0;
}

static bool has_section(Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_size)
			return true;
	}
	return false;
}

static Elf *open_elf(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return elf;
}

static void load(struct elf_file *f)
{
	int fd, dfd = -1;
	Elf *elf = open_elf(f->path, &fd), *debug = NULL;
	char id[128];
	if (elf) {
		elf_build_id(elf, id, sizeof(id));
		/* the file was replaced since the trace: its symbols would lie */
		if (f->build_id[0] && id[0] && strcmp(id, f->build_id) != 0) {
			elf_end(elf);
			close(fd);
			elf = NULL;
		}
	}
	for (size_t i = 0; !debug && i < n_debug_dirs && strlen(f->build_id) > 2; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dirs[i],
			 f->build_id, f->build_id + 2);
		debug = open_elf(path, &dfd);
	}
	Elf *phdr_src = elf ? elf : debug;
	size_t n = 0;
	if (phdr_src && !elf_getphdrnum(phdr_src, &n)) {
		for (size_t i = 0; i < n && f->n_segs < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(phdr_src, (int)i, &ph) && ph.p_type == PT_LOAD)
				f->segs[f->n_segs++] = (struct segment){ ph.p_offset, ph.p_vaddr,
									 ph.p_filesz };
		}
	}
	if (debug && has_section(debug, SHT_SYMTAB))
		add_symbols(f, debug, SHT_SYMTAB);
	else if (elf && has_section(elf, SHT_SYMTAB))
		add_symbols(f, elf, SHT_SYMTAB);
	if (elf && f->n_syms == 0)
		add_symbols(f, elf, SHT_DYNSYM);
	if (f->n_syms > 1)
		qsort(f->syms, f->n_syms, sizeof(*f->syms), by_value);
	f->usable = f->n_segs > 0;
	if (elf) {
		elf_end(elf);
		close(fd);
	}
	if (debug) {
		elf_end(debug);
		close(dfd);
	}
}

static struct elf_file *file_get(struct ka_symbolizer *sym, const struct ka_map *mp)
{
	const char *bid = mp->build_id ? mp->build_id : "";
	for (size_t i = 0; i < sym->n_files; i++)
		if (strcmp(sym->files[i].path, mp->path) == 0 &&
		    strcmp(sym->files[i].build_id, bid) == 0)
			return &sym->files[i];
	void *p = reallocarray(sym->files, sym->n_files + 1, sizeof(*sym->files));
	if (!p)
		return NULL;
	sym->files = p;
	struct elf_file *f = &sym->files[sym->n_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(mp->path);
	f->build_id = strdup(bid);
	if (!f->path || !f->build_id) {
		free(f->path);
		free(f->build_id);
		return NULL;
	}
	sym->n_files++;
	load(f);
	return f;
}

/*
 * The symbol's name as people read it: C++ (Itanium ABI) and Rust (legacy
 * and v0) names demangled by libiberty's cplus_demangle, as c++filt does
 * without its hash and disambiguators (DMGL_VERBOSE); other names as they
 * are. Done once per symbol, at its first use.
 */
static const char *display_name(struct symbol *y)
{
	if (!y->tried) {
		y->tried = true;
		if (y->name[0] == '_' && (y->name[1] == 'Z' || y->name[1] == 'R'))
			y->demangled = cplus_demangle(y->name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	}
	return y->demangled ? y->demangled : y->name;
}

/*
 * "name (library)" into buf; a name too long for buf is cut, with "...",
 * so that the library always ends it (the views split it off at the last
 * " (").
 */
static void name_and_library(char *buf, size_t size, const char *name, const char *lib)
{
	size_t need = strlen(name) + strlen(lib) + 4;
	if (need <= size || strlen(lib) + 8 > size) {
		snprintf(buf, size, "%s (%s)", name, lib);
		return;
	}
	int keep = (int)(size - strlen(lib) - 7);
	snprintf(buf, size, "%.*s... (%s)", keep, name, lib);
}

/* Code of no file: perf's "//anon", a "[...]" region, a memfd. */
static bool anonymous_code(const char *path)
{
	return path[0] != '/' || !strncmp(path, "//anon", 6) || !strncmp(path, "/memfd:", 7);
}

const char *ka_symbol_library(const char *where)
{
	const char *paren = NULL;
	for (const char *p = strstr(where, " ("); p; p = strstr(p + 1, " ("))
		paren = p;
	size_t len = strlen(where);
	return paren && where[0] != '[' && len && where[len - 1] == ')' ? paren : NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

bool ka_symbol_known(struct ka_symbolizer *sym, const struct ka_stream *s, uint64_t addr)
{
	const char *file;
	return ka_map_of(s, addr - 1) ||
	       (sym && ka_perf_map_lookup(sym->jit, s->pid, s->start_real_ns, addr - 1, &file));
}

const struct ka_map *ka_map_of(const struct ka_stream *s, uint64_t pc)
{
	for (size_t i = 0; i < s->n_maps; i++)
		if (pc >= s->maps[i].start && pc < s->maps[i].end)
			return &s->maps[i];
	return NULL;
}

void ka_symbolize(struct ka_symbolizer *sym, const struct ka_stream *s,
		  uint64_t addr, char *buf, size_t size)
{
	if (addr == 0) {
		snprintf(buf, size, "[other or unknown sites]");
		return;
	}
	uint64_t pc = addr - 1; /* inside the call instruction */
	const struct ka_map *mp = ka_map_of(s, pc);
	if (!mp || anonymous_code(mp->path)) {
		/* anonymous code: a JIT's, named in its perf map */
		const char *file, *name = sym ? ka_perf_map_lookup(sym->jit, s->pid,
								   s->start_real_ns, pc, &file) : NULL;
		if (name) {
			name_and_library(buf, size, name, file);
			return;
		}
	}
	if (!mp) {
		snprintf(buf, size, "0x%" PRIx64, addr);
		return;
	}
	uint64_t off = pc - mp->start + mp->offset;
	struct elf_file *f = sym ? file_get(sym, mp) : NULL;
	if (f && f->usable) {
		for (size_t i = 0; i < f->n_segs; i++) {
			const struct segment *g = &f->segs[i];
			if (off < g->offset || off >= g->offset + g->filesz)
				continue;
			uint64_t vaddr = off - g->offset + g->vaddr;
			/* last symbol starting at or before vaddr */
			size_t lo = 0, hi = f->n_syms;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (f->syms[mid].value <= vaddr)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo > 0) {
				struct symbol *y = &f->syms[lo - 1];
				if (vaddr < y->value + (y->size ? y->size : 1) ||
				    (y->size == 0 && lo == f->n_syms)) {
					name_and_library(buf, size, display_name(y),
							 base_name(mp->path));
					return;
				}
			}
			break;
		}
	}
	snprintf(buf, size, "%s+0x%" PRIx64, base_name(mp->path), off + 1);
}
