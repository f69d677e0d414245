/* SPDX-License-Identifier: MIT */
/*
 * A profile: the model's threads merged into one row per syscall (or per
 * descriptor kind), with the total, sorted for a view. The model
 * (model.h) holds what the records said; a profile is what the reports
 * print. Built by profile.c, printed by report*.c and the other views.
 */
#ifndef KANALYZE_PROFILE_H
#define KANALYZE_PROFILE_H

#include "model.h"

/* One merged line of a profile. */
struct ka_row {
	uint64_t nr;
	char name[40];
	KP_SC_COUNTERS(KP_SC_U64) /* record_schema.h */
	uint64_t p50_ns, p90_ns, p99_ns;
	struct ka_pair *errnos; /* sorted by errno */
	size_t n_errnos;
	struct kp_hist hist;
	/* kbpf-trace's tp_btf programs: off_cpu_ns, of time_ns, off CPU
	 * (blocked or preempted; has_off_cpu_ns: some merged entry said it) */
	KP_SC_OPTIONAL(KP_SC_U64_HAS)
	/* min/max, percentiles and errno are not known for every call (a
	 * --by=kind row: the `kinds` counters have none of them) */
	bool no_latency;
};

struct ka_profile {
	struct ka_row *rows;
	size_t n_rows;
	struct ka_row total; /* name "TOTAL"; errno and hist merged too */
};

/*
 * Merge threads into rows. stream NULL = every stream; thread NULL = all
 * threads of the selected streams. Rows come out sorted by nr.
 */
int ka_profile_build(struct ka_profile *p, const struct ka_model *m,
		     const struct ka_stream *stream,
		     const struct ka_thread *thread);
void ka_profile_free(struct ka_profile *p);

enum ka_sort { KA_SORT_TIME, KA_SORT_COUNT, KA_SORT_AVG, KA_SORT_RETRIES,
	       KA_SORT_ERRORS, KA_SORT_NAME };
void ka_profile_sort(struct ka_profile *p, enum ka_sort by);

/* "EAGAIN", or "errno_N" into buf for numbers without a name. */
const char *ka_errno_name(uint64_t err, char *buf, size_t size);

#endif
