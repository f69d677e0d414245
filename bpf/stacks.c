/* SPDX-License-Identifier: MIT */
/*
 * --stacks, user side: the per-CPU (image, thread, syscall, stack id)
 * counters summed into the `stacks` of each syscalls entry, the stack ids
 * turned into frame lists (innermost first) with the leaf frame that the
 * frame-pointer chain skips put back (bpf/unwind.c), and the `maps`
 * record that resolves them. Kept apart from collect.c, which calls it
 * per aggregate record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kbpf_trace.h"
#include "tracer.h"

static struct tracer *tr;
static int ncpus;

/* Scratch for the stacks of one syscalls entry. */
static struct kp_rec_stack *recs;
static uint64_t *frames;
static size_t cap_recs;

/* Files whose syscalls `ret_slots` has, by (dev, ino). */
static struct kbpf_file_pos *learnt;
static size_t n_learnt, cap_learnt;

struct fill_ctx {
	struct kbpf_file_pos pos;
	unsigned entries;
};

static void fill_slot(void *ctx, uint64_t off, int32_t slot)
{
	struct fill_ctx *c = ctx;
	c->pos.off = off;
	if (!bpf_map_update_elem(tr->ret_slots_fd, &c->pos, &slot, BPF_ANY))
		c->entries++;
}

/*
 * `ret_slots` for every syscall instruction of path, the file the kernel
 * knows as (dev, ino): from then on, BPF reads the return address of a
 * frameless function's call there and counts the call under it.
 */
static void learn_file(const char *path, uint32_t dev, uint64_t ino)
{
	if (tr->ret_slots_fd < 0)
		return;
	for (size_t i = 0; i < n_learnt; i++)
		if (learnt[i].dev == dev && learnt[i].ino == ino)
			return;
	if (n_learnt == cap_learnt) {
		size_t cap = cap_learnt ? 2 * cap_learnt : 16;
		void *p = realloc(learnt, cap * sizeof(*learnt));
		if (!p)
			return;
		learnt = p;
		cap_learnt = cap;
	}
	learnt[n_learnt++] = (struct kbpf_file_pos){ .ino = ino, .dev = dev };
	struct fill_ctx c = { .pos = { .ino = ino, .dev = dev } };
	int err = unwind_syscall_slots(path, fill_slot, &c);
	info(2, "%s: %u syscall return slots%s\n", path, c.entries,
	     err ? " (no usable .eh_frame)" : "");
}

/*
 * The C library and the loader a traced program maps are those this
 * process runs on: their syscalls are known before the first call, so
 * no call of theirs waits for a sample to be learnt from.
 */
static void learn_own_libraries(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int path_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &path_at) < 7 || !path_at || perms[2] != 'x' ||
		    line[path_at] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		const char *path = line + path_at;
		const char *base = strrchr(path, '/') + 1;
		if (!strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8))
			learn_file(path, maj << 20 | min, ino);
	}
	fclose(f);
}

void stacks_init(struct tracer *t)
{
	tr = t;
	ncpus = libbpf_num_possible_cpus();
	if (t->ret_slots_fd >= 0)
		learn_own_libraries();
}

static int cmp_stack(const void *a, const void *b)
{
	const struct stack_entry *x = a, *y = b;
	const struct kbpf_agg_key *p = &x->key.agg, *q = &y->key.agg;
	if (p->tgid != q->tgid)
		return p->tgid < q->tgid ? -1 : 1;
	if (p->image != q->image)
		return p->image < q->image ? -1 : 1;
	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	if (p->nr != q->nr)
		return p->nr < q->nr ? -1 : 1;
	/* most calls first */
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->key.stack_id < y->key.stack_id ? -1 : x->key.stack_id > y->key.stack_id;
}

int stacks_read(uint32_t tgid, uint32_t image, struct stack_entry **out, size_t *n_out)
{
	struct kbpf_stack_value *percpu = calloc(ncpus, sizeof(*percpu));
	struct stack_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct kbpf_stack_key key, next;
	void *prev = NULL;
	int err = 0;

	*out = NULL;
	*n_out = 0;
	if (!percpu)
		return -ENOMEM;
	while (bpf_map_get_next_key(tr->stack_aggs_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (tgid && (key.agg.tgid != tgid || key.agg.image != image))
			continue;
		if (bpf_map_lookup_elem(tr->stack_aggs_fd, &key, percpu))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct stack_entry *nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n] = (struct stack_entry){ .key = key };
		for (int cpu = 0; cpu < ncpus; cpu++) {
			v[n].count += percpu[cpu].count;
			v[n].time_ns += percpu[cpu].time_ns;
		}
		n++;
	}
	free(percpu);
	if (n)
		qsort(v, n, sizeof(*v), cmp_stack);
	*out = v;
	*n_out = n;
	return err;
}

void stacks_delete(const struct stack_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(tr->stack_aggs_fd, &v[i].key);
}

/*
 * The frame-pointer chain of the key's stack, with the return address of
 * a frameless innermost function (a libc syscall wrapper) inserted after
 * frame 0: the one BPF read for each call (k->caller), or, where no slot
 * was known yet, the one .eh_frame locates among the words BPF saved at
 * the stack's first call (then learnt for the pc's whole file).
 */
static unsigned stack_frames(const struct kbpf_stack_key *k, const struct mapping *maps,
			     size_t n_maps, uint64_t *out, bool *unknown)
{
	uint64_t raw[KBPF_STACK_DEPTH] = { 0 };
	uint64_t key = k->stack_id, id = k->stack_id;
	unsigned depth = 0;

	if (!id || bpf_map_lookup_elem(tr->stack_traces_fd, &key, raw))
		return 0;
	while (depth < KBPF_STACK_DEPTH && raw[depth])
		depth++;
	if (!depth)
		return 0;
	for (unsigned i = 0; i < depth; i++)
		if (!mapping_find(maps, n_maps, raw[i]))
			*unknown = true;
	out[0] = raw[0];
	unsigned n = 1;
	struct kbpf_stack_sample sample;
	const struct mapping *mp = mapping_find(maps, n_maps, raw[0]);
	uint64_t slot, ret = k->caller;
	if (!ret && mp && !bpf_map_lookup_elem(tr->stack_samples_fd, &key, &sample)) {
		if (sample.has_pos)
			learn_file(mp->path, sample.pos.dev, sample.pos.ino);
		if (!unwind_return_slot(mp->path, raw[0] - mp->start + mp->offset, &slot) &&
		    slot % 8 == 0 && slot / 8 < KBPF_STACK_WORDS)
			ret = sample.words[slot / 8];
	}
	if (ret && (depth < 2 || raw[1] != ret) && mapping_find(maps, n_maps, ret))
		out[n++] = ret;
	memcpy(out + n, raw + 1, (depth - 1) * sizeof(*out));
	return n + depth - 1;
}

unsigned stacks_build(uint32_t tgid, const struct stack_entry *v, size_t n,
		      uint64_t count, uint64_t time_ns,
		      const struct kp_rec_stack **out, bool *unknown)
{
	const struct mapping *maps;
	size_t n_maps = mappings_of(tgid, &maps);

	if (n + 1 > cap_recs) {
		size_t cap = n + 1 > 2 * cap_recs ? n + 1 : 2 * cap_recs;
		struct kp_rec_stack *r = realloc(recs, cap * sizeof(*r));
		if (!r)
			return 0;
		recs = r;
		uint64_t *f = realloc(frames, cap * (KBPF_STACK_DEPTH + 1) * sizeof(*f));
		if (!f)
			return 0;
		frames = f;
		cap_recs = cap;
	}
	unsigned n_recs = 0;
	uint64_t known_count = 0, known_time = 0, unknown_count = 0, unknown_time = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *pcs = frames + n_recs * (KBPF_STACK_DEPTH + 1);
		unsigned depth = stack_frames(&v[i].key, maps, n_maps, pcs, unknown);
		if (!depth) {
			unknown_count += v[i].count;
			unknown_time += v[i].time_ns;
			continue;
		}
		recs[n_recs++] = (struct kp_rec_stack){ pcs, depth, v[i].count, v[i].time_ns };
		known_count += v[i].count;
		known_time += v[i].time_ns;
	}
	/* Calls the maps could not keep, and stack ids lost: the empty stack. */
	if (count > known_count) {
		unknown_count = count - known_count;
		unknown_time = time_ns > known_time ? time_ns - known_time : 0;
	}
	if (unknown_count)
		recs[n_recs++] = (struct kp_rec_stack){ NULL, 0, unknown_count, unknown_time };
	*out = recs;
	return n_recs;
}

bool stacks_maps_changed(const struct image *im)
{
	return im->maps_generation != mappings_generation(im->tgid) + 1;
}

void stacks_write_maps(struct image *im, const struct kp_rec_common *c)
{
	const struct mapping *maps;
	size_t n = mappings_of(im->tgid, &maps);
	kp_rec_maps_begin(&im->sink->w, c, (unsigned)n);
	for (size_t i = 0; i < n; i++) {
		struct kp_rec_map r = { .start = maps[i].start, .end = maps[i].end,
					.offset = maps[i].offset, .path = maps[i].path,
					.build_id = maps[i].build_id };
		kp_rec_map(&im->sink->w, &r);
	}
	im->maps_generation = mappings_generation(im->tgid) + 1;
}

void stacks_free(void)
{
	free(recs);
	free(frames);
	recs = NULL;
	frames = NULL;
	cap_recs = 0;
	free(learnt);
	learnt = NULL;
	n_learnt = cap_learnt = 0;
	unwind_free();
	mappings_free();
}
