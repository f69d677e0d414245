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

void stacks_init(struct tracer *t)
{
	tr = t;
	ncpus = libbpf_num_possible_cpus();
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
 * The frame-pointer chain of stack id, with the return address of a
 * frameless innermost function (a libc syscall wrapper) inserted after
 * frame 0 when .eh_frame locates it among the words BPF saved.
 */
static unsigned stack_frames(uint64_t id, const struct mapping *maps, size_t n_maps,
			     uint64_t *out, bool *unknown)
{
	uint64_t raw[KBPF_STACK_DEPTH] = { 0 };
	uint64_t key = id;
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
	uint64_t slot;
	if (mp && !bpf_map_lookup_elem(tr->stack_samples_fd, &key, &sample) &&
	    !unwind_return_slot(mp->path, raw[0] - mp->start + mp->offset, &slot) &&
	    slot % 8 == 0 && slot / 8 < KBPF_STACK_WORDS) {
		uint64_t ret = sample.words[slot / 8];
		if ((depth < 2 || raw[1] != ret) && mapping_find(maps, n_maps, ret))
			out[n++] = ret;
	}
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
		unsigned depth = stack_frames(v[i].key.stack_id, maps, n_maps, pcs, unknown);
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
	unwind_free();
	mappings_free();
}
