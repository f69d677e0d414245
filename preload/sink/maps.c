/* SPDX-License-Identifier: MIT */
/*
 * The `maps` record: which files are mapped executable where, with their
 * GNU build-ids, so that kanalyze can turn the call-site addresses of the
 * aggregates into function names after the process is gone. Read from
 * /proc/self/maps and the ELF files themselves with raw syscalls (no libc:
 * this runs inside a flush, which may be inside any hook). Written with the
 * first batch of a stream, with every final batch (dlopen'ed libraries
 * appear by then) and before each dlclose (symbols/dlclose.c); kanalyze
 * lets a later record win where records overlap.
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <string.h>

#include "elf_build_id.h"
#include "sink.h"
#include "record_writer.h"

#define MAPS_MAX 512
#define PATHS_BYTES (96u << 10)

struct map_line {
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	const char *path;
	char build_id[KP_BUILD_ID_HEX];
};

/*
 * Build-ids known without opening the file: those the site cache read at
 * start-up (rewrite/scan.c: its key) and the shim's own, from its memory.
 * Written under the rewrite lock, read under the flush lock: an entry is
 * filled before the count that publishes it.
 */
#define KNOWN_MAX 64
static struct {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char id[KP_BUILD_ID_HEX];
} known[KNOWN_MAX];
static unsigned n_known;

void kp_maps_know_build_id(uint32_t dev_major, uint32_t dev_minor, uint64_t inode,
			   const char *id)
{
	unsigned n = __atomic_load_n(&n_known, __ATOMIC_ACQUIRE);
	if (n == KNOWN_MAX || strlen(id) >= KP_BUILD_ID_HEX)
		return;
	for (unsigned i = 0; i < n; i++)
		if (known[i].inode == inode && known[i].dev_major == dev_major &&
		    known[i].dev_minor == dev_minor)
			return;
	known[n].dev_major = dev_major;
	known[n].dev_minor = dev_minor;
	known[n].inode = inode;
	strcpy(known[n].id, id);
	__atomic_store_n(&n_known, n + 1, __ATOMIC_RELEASE);
}

static bool known_build_id(const struct map_line *m, char out[KP_BUILD_ID_HEX])
{
	unsigned n = __atomic_load_n(&n_known, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (known[i].inode == m->inode && known[i].dev_major == m->dev_major &&
		    known[i].dev_minor == m->dev_minor) {
			memcpy(out, known[i].id, KP_BUILD_ID_HEX);
			return true;
		}
	return false;
}

/* The shim's own ELF header, wherever it was loaded (the linker's symbol). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/* Reads the shim's own first segment (file offset = address - __ehdr_start). */
static long own_image_read(void *ctx, void *buf, size_t n, uint64_t off)
{
	uint64_t size = *(const uint64_t *)ctx;
	if (off > size || n > size - off)
		return -EIO;
	memcpy(buf, __ehdr_start + off, n);
	return (long)n;
}

/* The shim's build-id from its own mapped headers and notes: no call. */
static bool own_build_id(const struct map_line *m, char out[KP_BUILD_ID_HEX])
{
	uint64_t self = (uint64_t)(uintptr_t)own_build_id;
	if (self < m->start || self >= m->end)
		return false;
	/* the headers and notes are in the first segment, mapped at offset 0 */
	const Elf64_Ehdr *eh = (const void *)__ehdr_start;
	uint64_t size = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(__ehdr_start + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type == PT_LOAD && ph->p_offset == 0) {
			size = ph->p_filesz;
			break;
		}
	}
	char scratch[1024];
	kp_elf_build_id(own_image_read, &size, scratch, sizeof(scratch), out);
	return out[0] != 0;
}

/* Static: flushes are serialized by the flush lock, and thread stacks may be small. */
static struct map_line maps[MAPS_MAX];
static unsigned n_maps;
static char paths[PATHS_BYTES];
static char readbuf[8192];

/*
 * Rewrite and patch mode see every mmap, mprotect, munmap and mremap the
 * process makes (kp_maps_changed): while none came since the list above
 * was read, it is still the process's, and the record is written from it
 * without reading /proc/self/maps again (at exit, and in a fork child:
 * its memory is a copy of its parent's). Symbol mode does not see the
 * loader's calls: it always reads.
 */
uint64_t kp_maps_gen;
bool kp_maps_tracked;
static uint64_t list_gen;
static bool list_valid, ids_done;

void kp_maps_changed(void)
{
	__atomic_fetch_add(&kp_maps_gen, 1, __ATOMIC_RELEASE);
}

/* An executable file mapping: its path copied into paths[]. */
static bool add_line(const struct kp_maps_line *lp, struct map_line *m, size_t *paths_used)
{
	const struct kp_maps_line l = *lp;
	size_t n = strlen(l.path);
	if (*paths_used + n + 1 > PATHS_BYTES)
		return false;
	memcpy(paths + *paths_used, l.path, n + 1);
	m->start = l.start;
	m->end = l.end;
	m->offset = l.offset;
	m->dev_major = l.dev_major;
	m->dev_minor = l.dev_minor;
	m->inode = l.inode;
	m->path = paths + *paths_used;
	*paths_used += n + 1;
	m->build_id[0] = 0;
	return true;
}

static long pread_raw(void *ctx, void *buf, size_t n, uint64_t off)
{
	return kp_raw(SYS_pread64, *(long *)ctx, buf, n, off);
}

/* The NT_GNU_BUILD_ID note of an ELF64 file, as hex; "" when none. */
static void read_build_id(const char *path, char out[KP_BUILD_ID_HEX])
{
	out[0] = 0;
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	kp_elf_build_id(pread_raw, &fd, readbuf, sizeof(readbuf), out);
	kp_raw(SYS_close, fd);
}

static bool parse_line(char *line, struct map_line *m, size_t *paths_used)
{
	struct kp_maps_line l;
	return kp_maps_parse_line(line, &l) && add_line(&l, m, paths_used);
}

void kp_maps_seen(const struct kp_maps_line *lines, size_t n, uint64_t gen)
{
	size_t paths_used = 0;
	n_maps = 0;
	for (size_t i = 0; i < n && n_maps < MAPS_MAX; i++)
		if ((lines[i].prot & PROT_EXEC) && lines[i].path && !lines[i].special &&
		    add_line(&lines[i], &maps[n_maps], &paths_used))
			n_maps++;
	list_gen = gen;
	list_valid = kp_maps_tracked;
	ids_done = false;
}

/* The list from /proc/self/maps: 0 or -errno. */
static int read_list(void)
{
	uint64_t gen = __atomic_load_n(&kp_maps_gen, __ATOMIC_ACQUIRE);
	long fd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (int)fd;
	n_maps = 0;
	size_t paths_used = 0, have = 0;
	static char line[4352];
	for (;;) {
		long n = kp_raw(SYS_read, fd, readbuf + have, sizeof(readbuf) - have);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (readbuf[i] != '\n')
				continue;
			size_t len = i - start;
			if (len < sizeof(line) && n_maps < MAPS_MAX) {
				memcpy(line, readbuf + start, len);
				line[len] = 0;
				if (parse_line(line, &maps[n_maps], &paths_used))
					n_maps++;
			}
			start = i + 1;
		}
		memmove(readbuf, readbuf + start, have - start);
		have -= start;
		if (have == sizeof(readbuf))
			have = 0; /* a line longer than the buffer: skip it */
	}
	kp_raw(SYS_close, fd);
	list_gen = gen;
	list_valid = kp_maps_tracked;
	ids_done = false;
	return 0;
}

int kp_maps_write(struct kp_writer *w, uint64_t pid, uint64_t stream,
		  uint64_t *seq)
{
	if (!list_valid || !kp_maps_tracked ||
	    list_gen != __atomic_load_n(&kp_maps_gen, __ATOMIC_ACQUIRE)) {
		int err = read_list();
		if (err)
			return err;
	}
	for (unsigned i = 0; !ids_done && i < n_maps; i++) {
		unsigned j;
		for (j = 0; j < i; j++)
			if (strcmp(maps[j].path, maps[i].path) == 0)
				break;
		if (j < i)
			memcpy(maps[i].build_id, maps[j].build_id, sizeof(maps[i].build_id));
		else if (!known_build_id(&maps[i], maps[i].build_id) &&
			 !own_build_id(&maps[i], maps[i].build_id))
			read_build_id(maps[i].path, maps[i].build_id);
	}
	ids_done = true;
	struct kp_rec_common c = { .pid = pid, .stream = stream,
				   .time_ns = kp_mono_ns(), .seq = ++*seq };
	kp_rec_maps_begin(w, &c, n_maps);
	for (unsigned i = 0; i < n_maps; i++) {
		struct kp_rec_map m = { .start = maps[i].start, .end = maps[i].end,
					.offset = maps[i].offset, .path = maps[i].path,
					.build_id = maps[i].build_id };
		kp_rec_map(w, &m);
	}
	return 0;
}
