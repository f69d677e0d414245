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
#include <fcntl.h>
#include <string.h>

#include "elf_build_id.h"
#include "sink.h"
#include "record_writer.h"

#define MAPS_MAX 512
#define PATHS_BYTES (96u << 10)

struct map_line {
	uint64_t start, end, offset;
	const char *path;
	char build_id[KP_BUILD_ID_HEX];
};

/* Static: flushes are serialized by the flush lock, and thread stacks may be small. */
static struct map_line maps[MAPS_MAX];
static char paths[PATHS_BYTES];
static char readbuf[8192];

/* An executable file mapping: its path copied into paths[]. */
static bool parse_line(char *line, struct map_line *m, size_t *paths_used)
{
	struct kp_maps_line l;
	if (!kp_maps_parse_line(line, &l))
		return false;
	size_t n = strlen(l.path);
	if (*paths_used + n + 1 > PATHS_BYTES)
		return false;
	memcpy(paths + *paths_used, l.path, n + 1);
	m->start = l.start;
	m->end = l.end;
	m->offset = l.offset;
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
