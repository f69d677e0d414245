/* SPDX-License-Identifier: MIT */
/*
 * Calls by thread in bounded memory: a lane per tid with its totals and
 * a min-heap of its longest calls. Memory is that of at most
 * KA_LANE_LONGEST calls per thread, whatever the trace's length, and the
 * model lets go of those of ended threads that cannot be drawn (below the
 * KA_LANES_DRAWN busiest: the others' time only grows).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lanes.h"
#include "model.h"

static struct ka_lane *lane_of(struct ka_lanes *l, uint64_t tid)
{
	/* the calls of one events record share a thread */
	if (l->last < l->n && l->lane[l->last].tid == tid)
		return &l->lane[l->last];
	for (size_t i = 0; i < l->n; i++)
		if (l->lane[i].tid == tid) {
			l->last = i;
			return &l->lane[i];
		}
	if (ka_grow((void **)&l->lane, &l->cap, l->n + 1, sizeof(*l->lane)))
		return NULL;
	l->last = l->n;
	l->lane[l->n] = (struct ka_lane){ .tid = tid, .first_ns = UINT64_MAX };
	return &l->lane[l->n++];
}

/* a is drawn after b: shorter, or as long and later */
static bool after(const struct ka_event *a, const struct ka_event *b)
{
	return a->duration_ns < b->duration_ns ||
	       (a->duration_ns == b->duration_ns && a->start_ns > b->start_ns);
}

static void sift_down(struct ka_event *h, size_t n, size_t i)
{
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && after(&h[c + 1], &h[c]))
			c++;
		if (!after(&h[c], &h[i]))
			return;
		struct ka_event t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

static void sift_up(struct ka_event *h, size_t i)
{
	while (i > 0 && after(&h[i], &h[(i - 1) / 2])) {
		struct ka_event t = h[i];
		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

int ka_lanes_add(struct ka_lanes *l, const struct ka_event *e)
{
	struct ka_lane *ln = lane_of(l, e->tid);
	if (!ln)
		return -ENOMEM;
	ln->calls++;
	ln->time_ns += e->duration_ns;
	if (e->start_ns < ln->first_ns)
		ln->first_ns = e->start_ns;
	if (e->start_ns + e->duration_ns > ln->end_ns)
		ln->end_ns = e->start_ns + e->duration_ns;
	if (ln->let_go)
		return 0;
	if (ln->n_longest < KA_LANE_LONGEST) {
		if (ka_grow((void **)&ln->longest, &ln->cap_longest, ln->n_longest + 1,
			    sizeof(*ln->longest)))
			return -ENOMEM;
		ln->longest[ln->n_longest] = *e;
		sift_up(ln->longest, ln->n_longest++);
	} else if (after(&ln->longest[0], e)) {
		ln->longest[0] = *e;
		sift_down(ln->longest, ln->n_longest, 0);
	}
	return 0;
}

void ka_lanes_free(struct ka_lanes *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->lane[i].longest);
	free(l->lane);
	*l = (struct ka_lanes){ 0 };
}

void ka_busiest_add(struct ka_busiest *b, const struct ka_lanes *l)
{
	for (size_t k = 0; k < l->n; k++) {
		uint64_t t = l->lane[k].time_ns;
		size_t j;
		if (b->have < KA_LANES_DRAWN) {
			for (j = b->have++; j > 0 && b->top[j - 1] > t; j--)
				b->top[j] = b->top[j - 1];
		} else if (t > b->top[0]) {
			for (j = 0; j + 1 < b->have && b->top[j + 1] < t; j++)
				b->top[j] = b->top[j + 1];
		} else {
			continue;
		}
		b->top[j] = t;
	}
}

uint64_t ka_busiest_nth(const struct ka_busiest *b)
{
	return b->have == KA_LANES_DRAWN ? b->top[0] : 0;
}

void ka_lanes_let_go(struct ka_lanes *l, uint64_t below)
{
	for (size_t i = 0; i < l->n; i++) {
		struct ka_lane *ln = &l->lane[i];
		if (ln->time_ns >= below || ln->let_go)
			continue;
		free(ln->longest);
		ln->longest = NULL;
		ln->n_longest = ln->cap_longest = 0;
		ln->let_go = true;
	}
}
