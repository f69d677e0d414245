/*
 * --blocking: what EAGAIN costs. Derived from event records (no extra
 * state in the shim's hot path): on each thread, a logical operation of a
 * syscall starts with a call that returned EAGAIN and ends with the next
 * call of the same syscall on that thread that did not. Its retries are
 * the EAGAIN calls, its blocked time runs from the start of the first
 * EAGAIN call to the end of the final one. Event records do not carry the
 * descriptor, so the breakdown is per syscall, not per descriptor kind,
 * and a thread that alternates two non-blocking descriptors with the same
 * syscall has their retries counted as one operation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "views.h"

#define BUCKETS 8 /* 1, 2, 3-4, 5-8, ... 65-128, >128 retries */
#define NRS KP_SYSCALL_MAX

struct open_op {
	uint64_t tid, nr, first_ns, retries;
};

struct nr_stats {
	uint64_t ops, retries, blocked_ns, max_blocked_ns, unfinished;
	uint64_t hist[BUCKETS];
};

static unsigned bucket(uint64_t retries)
{
	unsigned b = 0;
	while (b + 1 < BUCKETS && retries > (1ull << b))
		b++;
	return b;
}

int kp_report_blocking(FILE *out, const struct kp_model *m)
{
	struct nr_stats *st = calloc(NRS, sizeof(*st));
	if (!st)
		return -ENOMEM;
	bool any_events = false;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct kp_stream *s = &m->streams[i];
		struct open_op *ops = NULL;
		size_t n_ops = 0;
		any_events |= s->n_event_list > 0;
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct kp_event *e = &s->event_list[k];
			if (e->nr >= NRS)
				continue;
			size_t j;
			for (j = 0; j < n_ops; j++)
				if (ops[j].tid == e->tid && ops[j].nr == e->nr)
					break;
			bool again = e->ret == -EAGAIN;
			if (again) {
				if (j == n_ops) {
					void *p = reallocarray(ops, n_ops + 1, sizeof(*ops));
					if (!p) {
						free(ops);
						free(st);
						return -ENOMEM;
					}
					ops = p;
					ops[n_ops++] = (struct open_op){ e->tid, e->nr, e->start_ns, 0 };
				}
				ops[j].retries++;
			} else if (j < n_ops) {
				struct nr_stats *x = &st[e->nr];
				uint64_t blocked = e->start_ns + e->duration_ns - ops[j].first_ns;
				x->ops++;
				x->retries += ops[j].retries;
				x->blocked_ns += blocked;
				if (blocked > x->max_blocked_ns)
					x->max_blocked_ns = blocked;
				x->hist[bucket(ops[j].retries)]++;
				ops[j] = ops[--n_ops];
			}
		}
		for (size_t j = 0; j < n_ops; j++)
			st[ops[j].nr].unfinished++;
		free(ops);
	}
	const char *arch = kp_model_arch(m);
	fprintf(out, "=== EAGAIN Blocking (from event records, per syscall) ===\n");
	if (!any_events)
		fprintf(out, "No event records: trace with KPROF_EVENTS=1 or kbpf-trace --events.\n");
	else
		fprintf(out, "%-16s %8s %9s %13s %13s %10s  %s\n", "Syscall", "Ops",
			"Retries", "Blocked(ms)", "MaxBlk(ms)", "Unfinished",
			"retries/op: 1 2 3-4 5-8 9-16 17-32 33-64 >64");
	bool any = false;
	for (unsigned nr = 0; nr < NRS; nr++) {
		const struct nr_stats *x = &st[nr];
		if (!x->ops && !x->unfinished)
			continue;
		any = true;
		const char *name = kp_syscall_name(arch, nr);
		char label[48];
		snprintf(label, sizeof(label), "%s (%u)", name ? name : "?", nr);
		fprintf(out, "%-16s %8" PRIu64 " %9" PRIu64 " %13.3f %13.3f %10" PRIu64 " ",
			label, x->ops, x->retries, (double)x->blocked_ns / 1e6,
			(double)x->max_blocked_ns / 1e6, x->unfinished);
		for (unsigned b = 0; b < BUCKETS; b++)
			fprintf(out, " %" PRIu64, x->hist[b]);
		fputc('\n', out);
	}
	if (any_events && !any)
		fprintf(out, "No call returned EAGAIN.\n");
	fprintf(out, "=== End EAGAIN Blocking ===\n");
	free(st);
	return 0;
}
