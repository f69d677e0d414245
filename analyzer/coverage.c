/*
 * kanalyze --coverage A B: what trace A saw of the calls trace B saw, per
 * syscall. Made for the same workload traced twice, by the shim (A) and by
 * kbpf-trace (B), so that the shim's blind spots are visible: a row with
 * share < 100% is a syscall the program made partly outside libc's
 * exported functions (or that the shim made itself, when A > B).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "syscalls.h"

struct cov_row {
	uint64_t nr, a, b;
	const char *name;
	char buf[32];
};

static int by_b_desc(const void *x, const void *y)
{
	const struct cov_row *r = x, *s = y;
	if (r->b != s->b)
		return r->b > s->b ? -1 : 1;
	if (r->a != s->a)
		return r->a > s->a ? -1 : 1;
	return r->nr < s->nr ? -1 : r->nr > s->nr;
}

static struct cov_row *row_for(struct cov_row *rows, size_t *n, uint64_t nr,
			       const char *arch)
{
	for (size_t i = 0; i < *n; i++)
		if (rows[i].nr == nr)
			return &rows[i];
	struct cov_row *r = &rows[(*n)++];
	memset(r, 0, sizeof(*r));
	r->nr = nr;
	r->name = nr < KP_SYSCALL_MAX ? kp_syscall_name(arch, (unsigned)nr) : NULL;
	if (!r->name) {
		snprintf(r->buf, sizeof(r->buf), "syscall_%" PRIu64, nr);
		r->name = r->buf;
	}
	return r;
}

/* share of b that a saw, in percent; -1 when b saw none */
static double share(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : -1;
}

static void print_share(FILE *out, uint64_t a, uint64_t b, int width)
{
	double s = share(a, b);
	if (s < 0)
		fprintf(out, "%*s", width, "-");
	else
		fprintf(out, "%*.1f%%", width - 1, s);
}

static int write_json(FILE *out, const struct cov_row *rows, size_t n,
		      uint64_t ta, uint64_t tb, const char *la, const char *lb,
		      const uint64_t *own)
{
	json_t *root = json_object(), *arr = json_array();
	if (!root || !arr)
		goto nomem;
	json_object_set_new(root, "a", json_string(la));
	json_object_set_new(root, "b", json_string(lb));
	json_object_set_new(root, "after_start", json_boolean(own != NULL));
	if (own)
		json_object_set_new(root, "own_a", json_integer((json_int_t)*own));
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_pack("{s:s, s:I, s:I, s:I}", "name", rows[i].name,
				      "nr", (json_int_t)rows[i].nr,
				      "count_a", (json_int_t)rows[i].a,
				      "count_b", (json_int_t)rows[i].b);
		if (!r)
			goto nomem;
		double s = share(rows[i].a, rows[i].b);
		json_object_set_new(r, "share", s < 0 ? json_null() : json_real(s / 100));
		json_array_append_new(arr, r);
	}
	json_object_set_new(root, "syscalls", arr);
	arr = NULL;
	json_object_set_new(root, "total", json_pack("{s:I, s:I}", "count_a",
		(json_int_t)ta, "count_b", (json_int_t)tb));
	json_object_set_new(root, "share", tb ? json_real((double)ta / (double)tb) : json_null());
	int err = json_dumpf(root, out, JSON_INDENT(2)) ? -EIO : 0;
	fputc('\n', out);
	json_decref(root);
	return err;
nomem:
	json_decref(arr);
	json_decref(root);
	return -ENOMEM;
}

/* One of B's calls, for --after-start. */
struct timed_call {
	uint64_t pid, start_ns, nr;
	int64_t ret;
};

/* An A stream's start: from there on its shim saw the process's calls. */
struct start {
	uint64_t pid, start_ns;
};

static int by_pid_time(const void *x, const void *y)
{
	const struct timed_call *p = x, *q = y;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

static int start_by_pid_time(const void *x, const void *y)
{
	const struct start *p = x, *q = y;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->start_ns < q->start_ns ? -1 : p->start_ns > q->start_ns;
}

static bool is_exec(uint64_t nr, const char *arch)
{
	const char *name = nr < KP_SYSCALL_MAX ? kp_syscall_name(arch, (unsigned)nr) : NULL;
	return name && (strcmp(name, "execve") == 0 || strcmp(name, "execveat") == 0);
}

/*
 * B's calls per syscall number, counting only those a shim in A could
 * have seen: in a process (pid) with an A stream, from that stream's
 * start (the end of the shim's start-up) until a successful exec replaced
 * the image (the next image's loader runs before its shim's start). A's
 * own calls are then taken away. counts has KP_SYSCALL_MAX entries.
 */
static int after_start_counts(const struct kp_model *a, const struct kp_model *b,
			      uint64_t *counts, uint64_t *own_total,
			      uint64_t *events_total)
{
	size_t n_calls = 0, n_starts = 0;
	for (size_t i = 0; i < b->n_streams; i++)
		n_calls += b->streams[i].n_event_list;
	*events_total = n_calls;
	if (!n_calls) {
		fprintf(stderr, "kanalyze: --after-start: B has no events "
				"(trace it with kbpf-trace --events)\n");
		return -ENODATA;
	}
	struct timed_call *calls = calloc(n_calls, sizeof(*calls));
	struct start *starts = calloc(a->n_streams + 1, sizeof(*starts));
	if (!calls || !starts) {
		free(calls);
		free(starts);
		return -ENOMEM;
	}
	n_calls = 0;
	for (size_t i = 0; i < b->n_streams; i++) {
		const struct kp_stream *s = &b->streams[i];
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct kp_event *e = &s->event_list[k];
			calls[n_calls++] = (struct timed_call){ s->pid, e->start_ns, e->nr, e->ret };
		}
	}
	*own_total = 0;
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct kp_stream *s = &a->streams[i];
		if (!s->have_header)
			continue;
		starts[n_starts++] = (struct start){ s->pid, s->start_ns };
		for (size_t k = 0; k < s->n_own; k++) {
			counts[s->own[k].key] -= s->own[k].value; /* added back below */
			*own_total += s->own[k].value;
		}
	}
	qsort(calls, n_calls, sizeof(*calls), by_pid_time);
	qsort(starts, n_starts, sizeof(*starts), start_by_pid_time);
	const char *arch = kp_model_arch(b);
	size_t j = 0;
	for (size_t i = 0; i < n_calls;) {
		uint64_t pid = calls[i].pid;
		while (j < n_starts && starts[j].pid < pid)
			j++;
		bool seen = false;
		for (; i < n_calls && calls[i].pid == pid; i++) {
			while (j < n_starts && starts[j].pid == pid &&
			       starts[j].start_ns <= calls[i].start_ns) {
				seen = true;
				j++;
			}
			if (seen && calls[i].nr < KP_SYSCALL_MAX)
				counts[calls[i].nr]++;
			if (is_exec(calls[i].nr, arch) && calls[i].ret == 0)
				seen = false;
		}
	}
	free(calls);
	free(starts);
	return 0;
}

int kp_report_coverage(FILE *out, const struct kp_model *a,
		       const struct kp_model *b, const char *label_a,
		       const char *label_b, bool json, bool markdown,
		       bool after_start)
{
	struct kp_profile pa = { 0 }, pb = { 0 };
	struct cov_row *rows = NULL;
	size_t n = 0;
	int err;
	uint64_t *b_after = NULL, own_total = 0, b_events = 0;

	if ((err = kp_profile_build(&pa, a, NULL, NULL)) ||
	    (err = kp_profile_build(&pb, b, NULL, NULL)))
		goto out;
	rows = calloc(pa.n_rows + pb.n_rows + KP_SYSCALL_MAX + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	/* both traces are of one workload, so of one architecture */
	const char *arch = kp_model_arch(b);
	for (size_t i = 0; i < pa.n_rows; i++)
		row_for(rows, &n, pa.rows[i].nr, arch)->a = pa.rows[i].count;
	uint64_t tb = 0;
	if (after_start) {
		b_after = calloc(KP_SYSCALL_MAX, sizeof(*b_after));
		if (!b_after) {
			err = -ENOMEM;
			goto out;
		}
		if ((err = after_start_counts(a, b, b_after, &own_total, &b_events)))
			goto out;
		for (unsigned nr = 0; nr < KP_SYSCALL_MAX; nr++) {
			/* own calls B did not see (or saw before the start) stay at 0 */
			int64_t v = (int64_t)b_after[nr];
			if (v > 0) {
				row_for(rows, &n, nr, arch)->b = (uint64_t)v;
				tb += (uint64_t)v;
			}
		}
	} else {
		for (size_t i = 0; i < pb.n_rows; i++)
			row_for(rows, &n, pb.rows[i].nr, arch)->b = pb.rows[i].count;
		tb = pb.total.count;
	}
	/* rows that ended with nothing on either side */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].a || rows[i].b)
			rows[kept++] = rows[i];
	n = kept;
	qsort(rows, n, sizeof(*rows), by_b_desc);
	uint64_t ta = pa.total.count;

	if (json) {
		err = write_json(out, rows, n, ta, tb, label_a, label_b,
				 after_start ? &own_total : NULL);
		goto out;
	}
	if (markdown) {
		fprintf(out, "| Syscall | %s | %s | Share |\n|---|---:|---:|---:|\n",
			label_a, label_b);
		for (size_t i = 0; i < n; i++) {
			fprintf(out, "| %s (%" PRIu64 ") | %" PRIu64 " | %" PRIu64 " | ",
				rows[i].name, rows[i].nr, rows[i].a, rows[i].b);
			print_share(out, rows[i].a, rows[i].b, 0);
			fprintf(out, " |\n");
		}
		fprintf(out, "| **TOTAL** | %" PRIu64 " | %" PRIu64 " | ", ta, tb);
		print_share(out, ta, tb, 0);
		fprintf(out, " |\n");
		goto out;
	}
	int w = 7;
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(rows[i].name) + 3 + snprintf(NULL, 0, "%" PRIu64, rows[i].nr);
		if (len > w)
			w = len;
	}
	fprintf(out, "=== Coverage: A = %s, B = %s ===\n", label_a, label_b);
	if (after_start)
		fprintf(out, "B: calls made after A's start-up in each process, "
			     "less A's own %" PRIu64 " calls\n", own_total);
	fprintf(out, "%-*s %12s %12s %8s\n", w, "Syscall", "A", "B", "A/B");
	for (size_t i = 0; i < n; i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s (%" PRIu64 ")", rows[i].name, rows[i].nr);
		fprintf(out, "%-*s %12" PRIu64 " %12" PRIu64 " ", w, name, rows[i].a, rows[i].b);
		print_share(out, rows[i].a, rows[i].b, 8);
		fputc('\n', out);
	}
	fprintf(out, "%-*s %12" PRIu64 " %12" PRIu64 " ", w, "TOTAL", ta, tb);
	print_share(out, ta, tb, 8);
	fprintf(out, "\nA saw %" PRIu64 " of the %" PRIu64 " calls B saw", ta, tb);
	if (tb)
		fprintf(out, " (%.1f%%)", 100.0 * (double)ta / (double)tb);
	fprintf(out, ".\n=== End Coverage ===\n");
out:
	free(b_after);
	free(rows);
	kp_profile_free(&pa);
	kp_profile_free(&pb);
	return err;
}
