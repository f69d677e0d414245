/* SPDX-License-Identifier: MIT */
/*
 * --events: the ring buffer's batches of events (one per call, gathered
 * per CPU by the kernel side) into `events` records, each thread's in
 * the order its calls started, written once every CPU has handed over
 * what ended before a moment (events_sync), so that none comes late.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#include "kbpf_trace.h"
#include "tracer.h"

#define EVENTS_BUFFERED 65536	/* written as soon as this many wait */
#define EVENTS_PER_RECORD 1024

static struct tracer *tr;
static bool enabled;
static struct kbpf_event *evbuf;
static size_t n_events, cap_events;
static bool events_due;	/* EVENTS_BUFFERED reached: write at the next poll */

void events_init(struct tracer *t, bool on)
{
	tr = t;
	enabled = on;
}

/* A batch of events from one CPU (see struct kbpf_event_batch). */
int collect_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	const struct kbpf_event_batch *b = data;
	size_t head = offsetof(struct kbpf_event_batch, ev);
	if (size < head)
		return 0;
	size_t n = b->n;
	if (n > KBPF_EVENT_BATCH || head + n * sizeof(struct kbpf_event) > size)
		n = (size - head) / sizeof(struct kbpf_event);
	if (!n)
		return 0;
	if (n_events + n > cap_events) {
		size_t cap = cap_events ? 2 * cap_events : EVENTS_BUFFERED + KBPF_EVENT_BATCH;
		while (cap < n_events + n)
			cap *= 2;
		struct kbpf_event *v = realloc(evbuf, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		evbuf = v;
		cap_events = cap;
	}
	memcpy(&evbuf[n_events], b->ev, n * sizeof(struct kbpf_event));
	n_events += n;
	if (n_events >= EVENTS_BUFFERED)
		events_due = true;
	return 0;
}

/*
 * Events by thread without sorting them all: a CPU's batches keep each
 * thread's events in order, so a thread's events arrive in order unless
 * it moved between CPUs; they are grouped (stable, by a hash of the
 * thread) and only a group found out of order is sorted.
 */
struct thread_group {
	uint32_t tgid, image, tid;
	uint32_t first, count; /* into order[] */
};

static uint32_t *order;		/* event indices, grouped by thread */
static uint32_t *group_of;	/* group of each event */
static struct thread_group *groups;
static int32_t *slots;		/* open addressing: group index or -1 */
static size_t cap_order, cap_groups, n_slots;

static int cmp_start(const void *a, const void *b)
{
	const struct kbpf_event *x = &evbuf[*(const uint32_t *)a];
	const struct kbpf_event *y = &evbuf[*(const uint32_t *)b];
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int group_events(size_t *n_groups)
{
	if (n_events > cap_order) {
		uint32_t *o = realloc(order, n_events * sizeof(*o));
		uint32_t *g = o ? realloc(group_of, n_events * sizeof(*g)) : NULL;
		if (o)
			order = o;
		if (!g)
			return -ENOMEM;
		group_of = g;
		cap_order = n_events;
	}
	size_t n = 0;
	if (n_slots)
		memset(slots, 0xff, n_slots * sizeof(*slots));
	for (size_t i = 0; i < n_events; i++) {
		const struct kbpf_event *e = &evbuf[i];
		if (2 * (n + 1) > n_slots) { /* grow and rehash */
			size_t ns = n_slots ? 2 * n_slots : 1024;
			int32_t *sl = malloc(ns * sizeof(*sl));
			if (!sl)
				return -ENOMEM;
			memset(sl, 0xff, ns * sizeof(*sl));
			for (size_t k = 0; k < n; k++) {
				size_t h = (groups[k].tid * 2654435761u ^ groups[k].image) & (ns - 1);
				while (sl[h] >= 0)
					h = (h + 1) & (ns - 1);
				sl[h] = (int32_t)k;
			}
			free(slots);
			slots = sl;
			n_slots = ns;
		}
		size_t h = (e->tid * 2654435761u ^ e->image) & (n_slots - 1);
		while (slots[h] >= 0) {
			const struct thread_group *g = &groups[slots[h]];
			if (g->tid == e->tid && g->tgid == e->tgid && g->image == e->image)
				break;
			h = (h + 1) & (n_slots - 1);
		}
		if (slots[h] < 0) {
			if (n == cap_groups) {
				size_t cap = cap_groups ? 2 * cap_groups : 64;
				struct thread_group *gv = realloc(groups, cap * sizeof(*gv));
				if (!gv)
					return -ENOMEM;
				groups = gv;
				cap_groups = cap;
			}
			groups[n] = (struct thread_group){ e->tgid, e->image, e->tid, 0, 0 };
			slots[h] = (int32_t)n++;
		}
		group_of[i] = (uint32_t)slots[h];
		groups[slots[h]].count++;
	}
	uint32_t at = 0;
	for (size_t k = 0; k < n; k++) {
		groups[k].first = at;
		at += groups[k].count;
		groups[k].count = 0;
	}
	for (size_t i = 0; i < n_events; i++) {
		struct thread_group *g = &groups[group_of[i]];
		order[g->first + g->count++] = (uint32_t)i;
	}
	for (size_t k = 0; k < n; k++) {
		const uint32_t *o = order + groups[k].first;
		for (uint32_t j = 1; j < groups[k].count; j++) {
			if (evbuf[o[j]].start_ns < evbuf[o[j - 1]].start_ns) {
				qsort(order + groups[k].first, groups[k].count,
				      sizeof(*order), cmp_start);
				break;
			}
		}
	}
	*n_groups = n;
	return 0;
}

/*
 * Writes the buffered events that ended by `upto`, each thread's in order,
 * and keeps the others for later: an event that ended after `upto` may
 * have an earlier one of its thread still staged on another CPU.
 */
static void write_events(uint64_t upto)
{
	size_t n_groups;
	if (!n_events)
		return;
	if (group_events(&n_groups)) {
		fprintf(stderr, TOOL ": out of memory sorting events\n");
		return;
	}
	for (size_t k = 0; k < n_groups; k++) {
		const struct thread_group *g = &groups[k];
		const uint32_t *o = order + g->first;
		uint32_t done = 0;
		while (done < g->count) {
			uint32_t j = done;
			while (j < g->count && j - done < EVENTS_PER_RECORD &&
			       evbuf[o[j]].start_ns + evbuf[o[j]].duration_ns <= upto)
				j++;
			if (j == done)
				break; /* ended after upto: every later one too */
			struct image *im = collect_image_lazy(g->tgid, g->image);
			if (im && im->sink) {
				struct kp_rec_common c = collect_common_now(im, 0);
				collect_pending_add(im, 0, j - done);
				kp_rec_events_begin(&im->sink->w, &c, g->tid, j - done);
				for (uint32_t x = done; x < j; x++) {
					const struct kbpf_event *e = &evbuf[o[x]];
					if (e->kind)
						kp_rec_event_fd(&im->sink->w, e->start_ns,
								e->duration_ns, e->nr, e->ret,
								e->fd, e->kind);
					else
						kp_rec_event(&im->sink->w, e->start_ns,
							     e->duration_ns, e->nr, e->ret);
				}
				im->events_written += j - done;
				sink_flush(im->sink);
			}
			done = j;
		}
		/* the rest waits: marked by a zero tgid below */
		for (uint32_t x = 0; x < done; x++)
			evbuf[o[x]].tgid = 0;
	}
	size_t kept = 0;
	for (size_t i = 0; i < n_events; i++)
		if (evbuf[i].tgid)
			evbuf[kept++] = evbuf[i];
	n_events = kept;
}

/*
 * Every event that ended before now into evbuf: each CPU hands over its
 * partial batch, then the ring is drained. Returns that "now" (0 when a
 * CPU could not be flushed: nothing may be written yet).
 */
static uint64_t events_sync(void)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int err = tracer_flush_events(tr);
	if (err)
		info(1, "cannot flush the staged events: %s\n", strerror(-err));
	ring_buffer__consume(tr->event_ring);
	return err ? 0 : now;
}

void collect_flush_events(void)
{
	if (enabled)
		write_events(events_sync());
}

void collect_events_poll(void)
{
	if (!enabled)
		return;
	ring_buffer__consume(tr->event_ring);
	if (events_due) {
		events_due = false;
		collect_flush_events();
	}
}

void events_write_all(void)
{
	events_sync();
	write_events(UINT64_MAX);
}
