/* SPDX-License-Identifier: MIT */
/*
 * Reading the aggregation maps: the per-CPU aggs and errnos entries of one
 * image (its listed keys) or of every image (a scan), summed over the
 * CPUs, plus what the shared spill maps hold for the same keys (calls
 * whose per-CPU entry could not be made), merged into one entry per key.
 * BPF never deletes from these maps, so a scan while it inserts neither
 * skips nor repeats an old key.
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kbpf_trace.h"
#include "tracer.h"

int aggs_cmp_key(const void *a, const void *b)
{
	const struct kbpf_agg_key *x = a, *y = b;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	return 0;
}

static int cmp_errno(const void *a, const void *b)
{
	const struct kbpf_errno_key *x = a, *y = b;
	int c = aggs_cmp_key(&x->agg, &y->agg);
	if (c)
		return c;
	return x->error < y->error ? -1 : x->error > y->error;
}

static bool key_selected(const struct kbpf_agg_key *k, const struct image *only)
{
	return !only || (k->tgid == only->tgid && k->image == only->image);
}

/* One map to read: its descriptor, values per key (CPUs, or 1 shared). */
struct map_read {
	int fd;
	bool errnos, spill;
	int n_values;
};

/*
 * The next key of the map to read for only: from the image's listed keys
 * when its note gave them (*i: the list's cursor; error 0 the aggs entry,
 * otherwise an errnos entry; KBPF_KEY_SPILL the spill maps'), else by
 * scanning the map (*prev). 0, or -ENOENT after the last.
 */
static int next_key(const struct map_read *m, const struct image *only, size_t *i,
		    void **prev, void *key, size_t key_size)
{
	if (only && only->keys_listed) {
		for (; *i < only->n_keys; (*i)++) {
			uint32_t listed = only->keys[*i];
			uint32_t nr = listed & 0xffff;
			uint32_t error = (listed & ~KBPF_KEY_SPILL) >> 16;
			if ((error != 0) != m->errnos || !(listed & KBPF_KEY_SPILL) != !m->spill)
				continue;
			struct kbpf_errno_key k = {
				.agg = { .tgid = only->tgid, .tid = 0, .image = only->image,
					 .nr = nr },
				.error = error,
			};
			memcpy(key, &k, key_size);
			(*i)++;
			return 0;
		}
		return -ENOENT;
	}
	char next[sizeof(struct kbpf_errno_key)];
	if (bpf_map_get_next_key(m->fd, *prev, next))
		return -ENOENT;
	memcpy(key, next, key_size);
	*prev = key;
	return 0;
}

/* c (one CPU's, or the spill map's counters) added into e */
static void agg_add(void *entry, const void *value)
{
	struct kbpf_agg_value *e = &((struct agg_entry *)entry)->v;
	const struct kbpf_agg_value *c = value;
	if (!c->count)
		return;
	/* the optional counters too: a program without them leaves 0 */
#define OPTIONAL(name, merge) e->name = KP_SC_MERGE_##merge(e->name, c->name, e->count);
	KP_SC_OPTIONAL(OPTIONAL)
#undef OPTIONAL
	KP_SC_MERGE(e, c);
	for (int b = 0; b < KBPF_HIST_BUCKETS; b++)
		e->hist[b] += c->hist[b];
	for (int k = 0; k < KP_KINDS; k++)
		for (int i = 0; i < KP_KIND_COUNTERS; i++)
			e->kinds[k][i] += c->kinds[k][i];
}

static void errno_add(void *entry, const void *value)
{
	((struct errno_entry *)entry)->count += *(const uint64_t *)value;
}

/* An entry type: the key first, then the counters, then where it was. */
struct entry_type {
	size_t size, key_size, value_size;
	size_t value, flags;	/* offsets of the counters and of in_map */
	bool errnos;
	void (*add)(void *entry, const void *value);
	int (*cmp)(const void *a, const void *b);
};

static const struct entry_type agg_type = {
	.size = sizeof(struct agg_entry),
	.key_size = sizeof(struct kbpf_agg_key),
	.value_size = sizeof(struct kbpf_agg_value),
	.value = offsetof(struct agg_entry, v),
	.flags = offsetof(struct agg_entry, in_map),
	.add = agg_add,
	.cmp = aggs_cmp_key,
};

static const struct entry_type errno_type = {
	.size = sizeof(struct errno_entry),
	.key_size = sizeof(struct kbpf_errno_key),
	.value_size = sizeof(uint64_t),
	.value = offsetof(struct errno_entry, count),
	.flags = offsetof(struct errno_entry, in_map),
	.errnos = true,
	.add = errno_add,
	.cmp = cmp_errno,
};

_Static_assert(offsetof(struct agg_entry, in_spill) == offsetof(struct agg_entry, in_map) + 1 &&
	       offsetof(struct errno_entry, in_spill) ==
		       offsetof(struct errno_entry, in_map) + 1, "in_map, in_spill");

static bool *entry_flags(const struct entry_type *t, void *e)
{
	return (bool *)((char *)e + t->flags); /* in_map, then in_spill */
}

/* A new zeroed entry at the end of *v (n of cap), or NULL. */
static void *entry_new(const struct entry_type *t, void **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		void *nv = realloc(*v, ncap * t->size);
		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap;
	}
	void *e = (char *)*v + (*n)++ * t->size;
	memset(e, 0, t->size);
	return e;
}

static int read_map(const struct entry_type *t, const struct map_read *m,
		    const struct image *only, void **v, size_t *n, size_t *cap)
{
	void *values = calloc(m->n_values, t->value_size);
	struct kbpf_errno_key key;	/* the larger key */
	size_t i = 0;
	void *prev = NULL;
	int err = 0;

	if (!values)
		return -ENOMEM;
	while (next_key(m, only, &i, &prev, &key, t->key_size) == 0) {
		if (!key_selected(&key.agg, only))
			continue;
		if (bpf_map_lookup_elem(m->fd, &key, values))
			continue;
		void *e = entry_new(t, v, n, cap);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		memcpy(e, &key, t->key_size);
		entry_flags(t, e)[m->spill] = true;
		for (int k = 0; k < m->n_values; k++)
			t->add(e, (const char *)values + k * t->value_size);
	}
	free(values);
	return err;
}

/*
 * The entries of type t from the per-CPU map and the spill map, sorted,
 * one per key: 0 or -ENOMEM (what was read is kept).
 */
static int read_entries(const struct entry_type *t, int map_fd, int spill_fd, int ncpus,
			const struct image *only, void **out, size_t *n_out)
{
	const struct map_read maps[] = {
		{ .fd = map_fd, .errnos = t->errnos, .n_values = ncpus },
		{ .fd = spill_fd, .errnos = t->errnos, .spill = true, .n_values = 1 },
	};
	void *v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]) && !err; m++)
		err = read_map(t, &maps[m], only, &v, &n, &cap);
	if (n)
		qsort(v, n, t->size, t->cmp);
	/* a key in both maps: one entry */
	size_t w = 0;
	for (size_t r = 0; r < n; r++) {
		char *e = (char *)v + r * t->size;
		char *last = w ? (char *)v + (w - 1) * t->size : NULL;
		if (last && t->cmp(last, e) == 0) {
			bool *lf = entry_flags(t, last), *ef = entry_flags(t, e);
			t->add(last, e + t->value);
			lf[0] |= ef[0];
			lf[1] |= ef[1];
		} else {
			memmove((char *)v + w++ * t->size, e, t->size);
		}
	}
	*out = v;
	*n_out = w;
	return err;
}

int aggs_read(const struct tracer *t, int ncpus, const struct image *only,
	      struct agg_entry **out, size_t *n_out)
{
	return read_entries(&agg_type, t->aggs_fd, t->aggs_spill_fd, ncpus, only,
			    (void **)out, n_out);
}

int errnos_read(const struct tracer *t, int ncpus, const struct image *only,
		struct errno_entry **out, size_t *n_out)
{
	return read_entries(&errno_type, t->errnos_fd, t->errnos_spill_fd, ncpus, only,
			    (void **)out, n_out);
}

void aggs_delete(const struct tracer *t, const struct agg_entry *a, size_t n_a,
		 const struct errno_entry *ev, size_t n_ev)
{
	for (size_t i = 0; i < n_a; i++) {
		if (a[i].in_map)
			bpf_map_delete_elem(t->aggs_fd, &a[i].key);
		if (a[i].in_spill)
			bpf_map_delete_elem(t->aggs_spill_fd, &a[i].key);
	}
	for (size_t i = 0; i < n_ev; i++) {
		if (ev[i].in_map)
			bpf_map_delete_elem(t->errnos_fd, &ev[i].key);
		if (ev[i].in_spill)
			bpf_map_delete_elem(t->errnos_spill_fd, &ev[i].key);
	}
}
