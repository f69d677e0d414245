/* SPDX-License-Identifier: MIT */
/*
 * kanalyze: the calls of event records by thread, in bounded memory
 * (lanes.c): per thread its calls, their summed time, the span they
 * cover and its KA_LANE_LONGEST longest calls. What the HTML report's
 * timeline draws; the model keeps this instead of every event when no
 * other view needs them all.
 */
#ifndef KANALYZE_LANES_H
#define KANALYZE_LANES_H

#include <stddef.h>
#include <stdint.h>

struct ka_event;

/* The most calls drawn in the timeline, and so kept per thread. */
#define KA_LANE_LONGEST 4000
/* The busiest threads drawn, each a lane. */
#define KA_LANES_DRAWN 24

struct ka_lane {
	uint64_t tid, calls, time_ns;
	uint64_t first_ns, end_ns; /* the earliest start, the latest end */
	/* the longest calls, a heap with the shortest at [0] */
	struct ka_event *longest;
	size_t n_longest, cap_longest;
	/* its longest calls let go (ka_lanes_let_go): it ended below the
	 * KA_LANES_DRAWN busiest, so it is never drawn, unless calls came
	 * after its end (the same trace read twice) */
	bool let_go;
};

struct ka_lanes {
	struct ka_lane *lane;
	size_t n, cap, last; /* last: the lane of the previous call */
};

/* Counts the call e into its thread's lane; 0 or -ENOMEM. */
int ka_lanes_add(struct ka_lanes *l, const struct ka_event *e);
void ka_lanes_free(struct ka_lanes *l);
/* The KA_LANES_DRAWN largest lane times seen (ascending): add each
 * stream's lanes, then the KA_LANES_DRAWN-th largest (0: fewer lanes). */
struct ka_busiest {
	uint64_t top[KA_LANES_DRAWN];
	size_t have;
};
void ka_busiest_add(struct ka_busiest *b, const struct ka_lanes *l);
uint64_t ka_busiest_nth(const struct ka_busiest *b);
/* Frees the longest calls of l's lanes with less time than below: those
 * of a thread that ended, which can no longer be among the drawn. */
void ka_lanes_let_go(struct ka_lanes *l, uint64_t below);

#endif
