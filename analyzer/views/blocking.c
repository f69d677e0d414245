/* SPDX-License-Identifier: MIT */
/*
 * --blocking: what EAGAIN costs. Derived from event records (no extra
 * state in the shim's hot path). A logical operation starts with a call
 * that returned EAGAIN and ends with the next call of the same syscall on
 * the same thread and the same descriptor that did not; its retries are
 * the EAGAIN calls, its blocked time runs from the start of the first
 * EAGAIN call to the end of the final one. Operations still open when the
 * thread closes that descriptor, or when the trace ends, are unfinished.
 * Only an EAGAIN of a syscall that would have blocked counts
 * (kp_syscall_would_block: read, accept4, flock, ...); futex's EAGAIN (the
 * word had changed) and the like are errors, never an operation here.
 * Retries counts every such EAGAIN (finished and unfinished operations:
 * the syscall's retries in the profile); the retries-per-operation
 * histogram and the blocked time are of the finished operations.
 *
 * Events that carry the descriptor and its kind (six elements) give the
 * breakdown per kind and syscall. Older events (four elements) carry
 * neither: the operation is then keyed by thread and syscall only (a
 * thread alternating two non-blocking descriptors with one syscall has
 * their retries counted as one operation) and the report is per syscall.
 * Events are in order per thread, not across threads, so a close on
 * another thread does not end an operation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "syscalls.h"
#include "views.h"

#define BUCKETS 8 /* retries per operation: 1, 2, 3-4, 5-8, ... 33-64, >64 */
#define NRS KP_SYSCALL_MAX
#define KIND_SLOTS (KP_KINDS + 1) /* 0: kind not recorded */

static const char *const bucket_names[BUCKETS] = { "1", "2", "3-4", "5-8",
						   "9-16", "17-32", "33-64", ">64" };

struct open_op {
	uint64_t tid, nr, first_ns, retries;
	int64_t fd;
	unsigned kind;
};

struct op_stats {
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

static struct op_stats *stats_of(struct op_stats *st, unsigned kind, uint64_t nr)
{
	return &st[(size_t)kind * NRS + nr];
}

static void unfinished(struct op_stats *st, const struct open_op *op)
{
	struct op_stats *x = stats_of(st, op->kind, op->nr);
	x->unfinished++;
	x->retries += op->retries;
}

/* Ends the operations of one stream's events; 0 or -ENOMEM. */
static int stream_ops(const struct ka_stream *s, struct op_stats *st,
		      unsigned close_nr, const uint64_t *would_block)
{
	struct open_op *ops = NULL;
	size_t n_ops = 0, cap = 0;
	for (size_t k = 0; k < s->n_event_list; k++) {
		const struct ka_event *e = &s->event_list[k];
		if (e->nr >= NRS)
			continue;
		if (e->nr == close_nr && e->ret != -EBADF) {
			/* that descriptor's operations on this thread end here */
			for (size_t j = 0; j < n_ops;) {
				if (ops[j].tid == e->tid && ops[j].fd == e->fd && e->fd >= 0) {
					unfinished(st, &ops[j]);
					ops[j] = ops[--n_ops];
				} else {
					j++;
				}
			}
			continue;
		}
		size_t j;
		for (j = 0; j < n_ops; j++)
			if (ops[j].tid == e->tid && ops[j].nr == e->nr && ops[j].fd == e->fd)
				break;
		if (e->ret == -EAGAIN && ((would_block[e->nr / 64] >> (e->nr % 64)) & 1)) {
			if (j == n_ops) {
				if (n_ops == cap) {
					size_t c = cap ? cap * 2 : 16;
					void *p = reallocarray(ops, c, sizeof(*ops));
					if (!p) {
						free(ops);
						return -ENOMEM;
					}
					ops = p;
					cap = c;
				}
				ops[n_ops++] = (struct open_op){ e->tid, e->nr, e->start_ns, 0,
								 e->fd, e->kind };
			}
			ops[j].retries++;
		} else if (j < n_ops) {
			struct op_stats *x = stats_of(st, ops[j].kind, e->nr);
			uint64_t end = e->start_ns + e->duration_ns;
			uint64_t blocked = end > ops[j].first_ns ? end - ops[j].first_ns : 0;
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
		unfinished(st, &ops[j]);
	free(ops);
	return 0;
}

static const char *kind_name(unsigned kind)
{
	return kind ? kp_kind_names[KP_KIND_ROW(kind)] : "-";
}

static void print_table(FILE *out, const struct ka_model *m,
			const struct op_stats *st, bool any_events, bool per_kind)
{
	const char *arch = ka_model_arch(m);
	fprintf(out, "=== EAGAIN Blocking (from event records, per %s) ===\n",
		per_kind ? "descriptor kind and syscall" : "syscall");
	if (!any_events)
		fprintf(out, "No event records: trace with KPROF_EVENTS=1 or kbpf-trace --events.\n");
	else
		fprintf(out, "%s%-16s %8s %9s %13s %13s %10s  %s\n",
			per_kind ? "Kind    " : "", "Syscall", "Ops", "Retries",
			"Blocked(ms)", "MaxBlk(ms)", "Unfinished",
			"retries/op: 1 2 3-4 5-8 9-16 17-32 33-64 >64");
	bool any = false;
	for (unsigned kind = 0; kind < KIND_SLOTS; kind++) {
		for (unsigned nr = 0; nr < NRS; nr++) {
			const struct op_stats *x = stats_of((struct op_stats *)st, kind, nr);
			if (!x->ops && !x->unfinished)
				continue;
			any = true;
			const char *name = kp_syscall_name(arch, nr);
			char label[48];
			snprintf(label, sizeof(label), "%s (%u)", name ? name : "?", nr);
			if (per_kind)
				fprintf(out, "%-8s", kind_name(kind));
			fprintf(out, "%-16s %8" PRIu64 " %9" PRIu64 " %13.3f %13.3f %10" PRIu64 " ",
				label, x->ops, x->retries, (double)x->blocked_ns / 1e6,
				(double)x->max_blocked_ns / 1e6, x->unfinished);
			for (unsigned b = 0; b < BUCKETS; b++)
				fprintf(out, " %" PRIu64, x->hist[b]);
			fputc('\n', out);
		}
	}
	if (any_events && !any)
		fprintf(out, "No call returned EAGAIN where it would have blocked.\n");
	fprintf(out, "=== End EAGAIN Blocking ===\n");
}

static int put(json_t *o, const char *key, json_t *v)
{
	return !v || json_object_set_new(o, key, v) ? -ENOMEM : 0;
}

static json_t *jint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* {"per": "kind"|"syscall", "events": bool, "operations": [...]} */
static int print_json(FILE *out, const struct ka_model *m,
		      const struct op_stats *st, bool any_events, bool per_kind)
{
	const char *arch = ka_model_arch(m);
	json_t *root = json_object(), *rows = json_array();
	int err = root && rows ? 0 : -ENOMEM;
	for (unsigned kind = 0; !err && kind < KIND_SLOTS; kind++) {
		for (unsigned nr = 0; !err && nr < NRS; nr++) {
			const struct op_stats *x = stats_of((struct op_stats *)st, kind, nr);
			if (!x->ops && !x->unfinished)
				continue;
			const char *name = kp_syscall_name(arch, nr);
			char buf[32];
			if (!name) {
				snprintf(buf, sizeof(buf), "syscall_%u", nr);
				name = buf;
			}
			json_t *r = json_object(), *h = json_object();
			err = r && h ? 0 : -ENOMEM;
			if (!err)
				err = put(r, "kind", kind ? json_string(kind_name(kind)) : json_null()) ||
				      put(r, "name", json_string(name)) ||
				      put(r, "nr", jint(nr)) ||
				      put(r, "ops", jint(x->ops)) ||
				      put(r, "retries", jint(x->retries)) ||
				      put(r, "blocked_ns", jint(x->blocked_ns)) ||
				      put(r, "max_blocked_ns", jint(x->max_blocked_ns)) ||
				      put(r, "unfinished", jint(x->unfinished)) ? -ENOMEM : 0;
			for (unsigned b = 0; !err && b < BUCKETS; b++)
				err = put(h, bucket_names[b], jint(x->hist[b]));
			if (!err) {
				err = put(r, "retries_per_op", h);
				h = NULL;
			}
			if (!err && json_array_append_new(rows, r))
				err = -ENOMEM;
			else if (err)
				json_decref(r);
			json_decref(h);
		}
	}
	if (!err)
		err = put(root, "per", json_string(per_kind ? "kind" : "syscall")) ||
		      put(root, "events", json_boolean(any_events)) ? -ENOMEM : 0;
	if (!err) {
		err = put(root, "operations", rows);
		rows = NULL;
	}
	if (!err && (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		     fputc('\n', out) == EOF))
		err = -EIO;
	json_decref(rows);
	json_decref(root);
	return err;
}

int ka_report_blocking(FILE *out, const struct ka_model *m,
		       const struct ka_report_opts *o)
{
	struct op_stats *st = calloc((size_t)KIND_SLOTS * NRS, sizeof(*st));
	if (!st)
		return -ENOMEM;
	int close_nr = kp_syscall_nr(ka_model_arch(m), "close");
	uint64_t would_block[NRS / 64];
	kp_syscall_would_block_bits(ka_model_arch(m), would_block, NRS);
	bool any_events = false, per_kind = false;
	int err = 0;
	for (size_t i = 0; !err && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		any_events |= s->n_event_list > 0;
		for (size_t k = 0; !per_kind && k < s->n_event_list; k++)
			per_kind = s->event_list[k].kind != 0;
		err = stream_ops(s, st, close_nr < 0 ? NRS : (unsigned)close_nr,
				 would_block);
	}
	if (!err && o->format == KA_FORMAT_JSON)
		err = print_json(out, m, st, any_events, per_kind);
	else if (!err)
		print_table(out, m, st, any_events, per_kind);
	free(st);
	return err;
}
