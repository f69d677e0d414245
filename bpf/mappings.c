/* SPDX-License-Identifier: MIT */
/*
 * --stacks: which file is mapped executable where in each traced process,
 * for the `maps` record that resolves stack addresses. /proc/PID/maps
 * alone comes too late for a short-lived process (it is gone by the time
 * its stacks are written), so the kernel reports every executable mapping
 * as it is made: a system-wide perf "dummy" event per CPU with mmap2
 * records (path, address, file offset and build-id, timestamped on
 * CLOCK_MONOTONIC like the BPF notes), the way perf record follows
 * processes. A fork child inherits its parent's mappings as they were at
 * the fork; an exec'd image has only its own. /proc/PID/maps is read for
 * processes already running when tracing starts (-p) and again when a
 * stack holds an address no known mapping covers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "elf_build_id.h"
#include "tracer.h"

#define PERF_PAGES 64		/* data pages per CPU (256 KiB) */
#define TGID_BUCKETS 1024
#define FILE_BUCKETS 256
#define INHERIT_DEPTH 16

/* A file seen mapped, with its build-id (from the kernel or read here). */
struct file_info {
	char *path;
	char build_id[KP_BUILD_ID_HEX];
	bool have_build_id;
	struct file_info *next;
};

struct entry {
	uint64_t start, end, offset, time_ns;
	struct file_info *file;
};

struct tgid_maps {
	uint32_t tgid;
	struct entry *v;
	size_t n, cap;
	bool inherits;		/* a fork child: the parent's mappings count too */
	uint32_t parent;
	uint64_t fork_ns;
	uint64_t generation;	/* bumped when what mappings_of() gives may change */
	struct tgid_maps *next;
};

struct perf_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
};

static struct {
	struct perf_ring *rings;
	int n_rings;
	struct tgid_maps *tgids[TGID_BUCKETS];
	struct file_info *files[FILE_BUCKETS];
	uint64_t lost;
	bool warned_lost;
	struct mapping *out;	/* mappings_of()'s result */
	size_t out_cap;
} m;

static unsigned hash_str(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct file_info *file_get(const char *path)
{
	unsigned b = hash_str(path) % FILE_BUCKETS;
	for (struct file_info *f = m.files[b]; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	struct file_info *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	f->next = m.files[b];
	m.files[b] = f;
	return f;
}

static struct tgid_maps *tgid_get(uint32_t tgid, bool create)
{
	unsigned b = tgid % TGID_BUCKETS;
	for (struct tgid_maps *t = m.tgids[b]; t; t = t->next)
		if (t->tgid == tgid)
			return t;
	if (!create)
		return NULL;
	struct tgid_maps *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tgid = tgid;
	t->next = m.tgids[b];
	m.tgids[b] = t;
	return t;
}

static void add_entry(uint32_t tgid, uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, const unsigned char *build_id,
		      unsigned build_id_size, uint64_t time_ns)
{
	struct tgid_maps *t = tgid_get(tgid, true);
	struct file_info *f = file_get(path);
	if (!t || !f)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct entry *e = &t->v[i];
		if (e->start == start && e->end == end && e->offset == offset &&
		    e->file == f) {
			if (time_ns > e->time_ns)
				e->time_ns = time_ns;
			return;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct entry){ start, end, offset, time_ns, f };
	t->generation++;
	if (build_id_size && build_id_size <= (KP_BUILD_ID_HEX - 1) / 2 &&
	    !f->have_build_id) {
		static const char digits[] = "0123456789abcdef";
		for (unsigned k = 0; k < build_id_size; k++) {
			f->build_id[2 * k] = digits[build_id[k] >> 4];
			f->build_id[2 * k + 1] = digits[build_id[k] & 15];
		}
		f->build_id[2 * build_id_size] = 0;
		f->have_build_id = true;
	}
}

static int perf_open(int cpu)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.build_id = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int mappings_start(void)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	long page = sysconf(_SC_PAGESIZE);
	if (ncpu < 1)
		ncpu = 1;
	m.rings = calloc((size_t)ncpu, sizeof(*m.rings));
	if (!m.rings)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		int fd = perf_open(cpu);
		if (fd < 0) {
			if (errno == ENODEV || errno == EINVAL)
				continue; /* a possible CPU that is not online */
			int err = -errno;
			fprintf(stderr, TOOL ": --stacks: cannot follow the processes' "
				"mappings (perf_event_open: %s)\n", strerror(-err));
			mappings_stop();
			return err;
		}
		size_t len = (size_t)page * (PERF_PAGES + 1);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			int err = -errno;
			close(fd);
			fprintf(stderr, TOOL ": --stacks: cannot map the perf buffer: %s\n",
				strerror(-err));
			mappings_stop();
			return err;
		}
		struct perf_ring *r = &m.rings[m.n_rings++];
		r->fd = fd;
		r->meta = p;
		r->data = (unsigned char *)p + page;
		r->size = (uint64_t)page * PERF_PAGES;
	}
	return 0;
}

void mappings_stop(void)
{
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < m.n_rings; i++) {
		munmap(m.rings[i].meta, (size_t)page * (PERF_PAGES + 1));
		close(m.rings[i].fd);
	}
	free(m.rings);
	m.rings = NULL;
	m.n_rings = 0;
}

/* Copies len bytes at ring offset off (records may wrap around). */
static void ring_copy(const struct perf_ring *r, uint64_t off, void *to, size_t len)
{
	uint64_t at = off % r->size, first = r->size - at;
	if (first >= len) {
		memcpy(to, r->data + at, len);
	} else {
		memcpy(to, r->data + at, first);
		memcpy((unsigned char *)to + first, r->data, len - first);
	}
}

struct mmap2_fixed {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size, reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
};

static void handle_record(const struct perf_event_header *h, const unsigned char *rec)
{
	if (h->type == PERF_RECORD_LOST) {
		uint64_t lost;
		memcpy(&lost, rec + sizeof(*h) + 8, sizeof(lost));
		m.lost += lost;
		return;
	}
	if (h->type != PERF_RECORD_MMAP2)
		return;
	size_t fixed = sizeof(*h) + sizeof(struct mmap2_fixed);
	/* sample_id (TID, TIME) closes the record: the time is its last word */
	if (h->size < fixed + 16)
		return;
	struct mmap2_fixed f;
	uint64_t time_ns;
	memcpy(&f, rec + sizeof(*h), sizeof(f));
	memcpy(&time_ns, rec + h->size - 8, sizeof(time_ns));
	const char *name = (const char *)rec + fixed;
	size_t name_max = h->size - fixed - 16;
	if (!(f.prot & PROT_EXEC) || !name_max || name[0] != '/' ||
	    strnlen(name, name_max) == name_max)
		return;
	bool has_id = h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID;
	add_entry(f.pid, f.addr, f.addr + f.len, f.pgoff, name,
		  has_id ? f.build_id : NULL, has_id ? f.build_id_size : 0, time_ns);
}

void mappings_drain(void)
{
	static unsigned char rec[65536];
	for (int i = 0; i < m.n_rings; i++) {
		struct perf_ring *r = &m.rings[i];
		uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->meta->data_tail;
		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			ring_copy(r, tail, &h, sizeof(h));
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			ring_copy(r, tail, rec, h.size);
			handle_record(&h, rec);
			tail += h.size;
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
	if (m.lost && !m.warned_lost) {
		m.warned_lost = true;
		fprintf(stderr, TOOL ": --stacks: %llu mapping records lost (perf buffer "
			"full): some stack addresses may stay unresolved\n",
			(unsigned long long)m.lost);
	}
}

void mappings_fork(uint32_t parent, uint32_t child, uint64_t time_ns)
{
	struct tgid_maps *t = tgid_get(child, true);
	if (!t)
		return;
	/* A reused pid: what an earlier process of that number mapped goes. */
	size_t kept = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].time_ns >= time_ns)
			t->v[kept++] = t->v[i];
	t->n = kept;
	t->inherits = true;
	t->parent = parent;
	t->fork_ns = time_ns;
	t->generation++;
}

void mappings_exec(uint32_t tgid)
{
	struct tgid_maps *t = tgid_get(tgid, false);
	if (t && t->inherits) {
		t->inherits = false;
		t->generation++;
	}
}

int mappings_read_proc(uint32_t tgid)
{
	char path[64], line[4352];
	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		struct kp_maps_line l;
		if (kp_maps_parse_line(line, &l))
			add_entry(tgid, l.start, l.end, l.offset, l.path, NULL, 0, now);
	}
	fclose(f);
	return 0;
}

uint64_t mappings_generation(uint32_t tgid)
{
	uint64_t g = 0;
	const struct tgid_maps *t = tgid_get(tgid, false);
	for (int d = 0; t && d < INHERIT_DEPTH; d++) {
		g += t->generation;
		t = t->inherits ? tgid_get(t->parent, false) : NULL;
	}
	return g;
}

static int newest_first(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;
	return x->time_ns > y->time_ns ? -1 : x->time_ns < y->time_ns;
}

static long pread_fd(void *ctx, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread(*(int *)ctx, buf, n, (off_t)off);
	return r < 0 ? -errno : r;
}

static const char *build_id_of(struct file_info *f)
{
	if (!f->have_build_id) {
		static char scratch[8192];
		f->have_build_id = true;
		int fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			kp_elf_build_id(pread_fd, &fd, scratch, sizeof(scratch), f->build_id);
			close(fd);
		}
	}
	return f->build_id;
}

size_t mappings_of(uint32_t tgid, const struct mapping **out)
{
	size_t n = 0;
	uint64_t cutoff = UINT64_MAX;
	const struct tgid_maps *t = tgid_get(tgid, false);
	for (int d = 0; t && d < INHERIT_DEPTH; d++) {
		size_t first = n;
		for (size_t i = 0; i < t->n; i++) {
			const struct entry *e = &t->v[i];
			if (e->time_ns > cutoff)
				continue;
			if (n == m.out_cap) {
				size_t cap = m.out_cap ? 2 * m.out_cap : 64;
				struct mapping *v = realloc(m.out, cap * sizeof(*v));
				if (!v)
					break;
				m.out = v;
				m.out_cap = cap;
			}
			m.out[n++] = (struct mapping){ e->start, e->end, e->offset,
						       e->time_ns, e->file->path,
						       build_id_of(e->file) };
		}
		/* a process's own mappings first, newest first: an address
		 * mapped again hides what was there before */
		if (n - first > 1)
			qsort(m.out + first, n - first, sizeof(*m.out), newest_first);
		if (!t->inherits)
			break;
		cutoff = t->fork_ns;
		t = tgid_get(t->parent, false);
	}
	*out = m.out;
	return n;
}

const struct mapping *mapping_find(const struct mapping *v, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= v[i].start && addr < v[i].end)
			return &v[i];
	return NULL;
}

void mappings_free(void)
{
	mappings_stop();
	for (unsigned b = 0; b < TGID_BUCKETS; b++) {
		while (m.tgids[b]) {
			struct tgid_maps *t = m.tgids[b];
			m.tgids[b] = t->next;
			free(t->v);
			free(t);
		}
	}
	for (unsigned b = 0; b < FILE_BUCKETS; b++) {
		while (m.files[b]) {
			struct file_info *f = m.files[b];
			m.files[b] = f->next;
			free(f->path);
			free(f);
		}
	}
	free(m.out);
	m.out = NULL;
	m.out_cap = 0;
}
