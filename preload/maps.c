/*
 * The `maps` record: which files are mapped executable where, with their
 * GNU build-ids, so that kanalyze can turn the call-site addresses of the
 * aggregates into function names after the process is gone. Read from
 * /proc/self/maps and the ELF files themselves with raw syscalls (no libc:
 * this runs inside a flush, which may be inside any hook). Written with the
 * first batch of a stream and with every final batch (dlopen'ed libraries
 * appear by then); kanalyze uses the last one.
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>

#include "kprof.h"
#include "record_writer.h"

#define MAPS_MAX 512
#define PATHS_BYTES (96u << 10)

struct map_line {
	uint64_t start, end, offset;
	const char *path;
	char build_id[41];
};

/* Static: flushes are serialized by the flush lock, and thread stacks may be small. */
static struct map_line maps[MAPS_MAX];
static char paths[PATHS_BYTES];
static char readbuf[8192];

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

/* "start-end perms offset dev inode   path" */
static bool parse_line(char *line, struct map_line *m, size_t *paths_used)
{
	const char *p = line;
	m->start = hex(&p);
	if (*p++ != '-')
		return false;
	m->end = hex(&p);
	if (*p++ != ' ' || strlen(p) < 5 || p[2] != 'x')
		return false;
	p += 5;
	m->offset = hex(&p);
	const char *path = strchr(p, '/');
	if (!path || strstr(path, " (deleted)"))
		return false;
	size_t n = strlen(path);
	if (*paths_used + n + 1 > PATHS_BYTES)
		return false;
	memcpy(paths + *paths_used, path, n + 1);
	m->path = paths + *paths_used;
	*paths_used += n + 1;
	m->build_id[0] = 0;
	return true;
}

static long pread_all(long fd, void *buf, size_t n, uint64_t off)
{
	return kp_raw(SYS_pread64, fd, buf, n, off);
}

/* The NT_GNU_BUILD_ID note of an ELF64 file, as hex; "" when none. */
static void read_build_id(const char *path, char out[41])
{
	out[0] = 0;
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Ehdr eh;
	if (pread_all(fd, &eh, sizeof(eh), 0) != (long)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && i < 64; i++) {
		Elf64_Phdr ph;
		if (pread_all(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    (long)sizeof(ph))
			break;
		if (ph.p_type != PT_NOTE || ph.p_filesz > sizeof(readbuf))
			continue;
		long n = pread_all(fd, readbuf, ph.p_filesz, ph.p_offset);
		for (long off = 0; n > 0 && off + (long)sizeof(Elf64_Nhdr) <= n;) {
			Elf64_Nhdr nh;
			memcpy(&nh, readbuf + off, sizeof(nh));
			long name_at = off + (long)sizeof(nh);
			long desc_at = name_at + (long)((nh.n_namesz + 3) & ~3u);
			long next = desc_at + (long)((nh.n_descsz + 3) & ~3u);
			if (next > n)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(readbuf + name_at, "GNU", 4) == 0 && nh.n_descsz <= 20) {
				static const char digits[] = "0123456789abcdef";
				for (unsigned k = 0; k < nh.n_descsz; k++) {
					unsigned char b = (unsigned char)readbuf[desc_at + k];
					out[2 * k] = digits[b >> 4];
					out[2 * k + 1] = digits[b & 15];
				}
				out[2 * nh.n_descsz] = 0;
				goto out;
			}
			off = next;
		}
	}
out:
	kp_raw(SYS_close, fd);
}

int kp_maps_write(struct kp_writer *w, uint64_t pid, uint64_t stream,
		  uint64_t *seq)
{
	long fd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (int)fd;
	unsigned n_maps = 0;
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
	for (unsigned i = 0; i < n_maps; i++) {
		unsigned j;
		for (j = 0; j < i; j++)
			if (strcmp(maps[j].path, maps[i].path) == 0)
				break;
		if (j < i)
			memcpy(maps[i].build_id, maps[j].build_id, sizeof(maps[i].build_id));
		else
			read_build_id(maps[i].path, maps[i].build_id);
	}
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
