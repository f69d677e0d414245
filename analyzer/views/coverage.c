/* SPDX-License-Identifier: MIT */
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
#include "views.h"

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

/* a of b in percent with one decimal, never rounded to 100.0 when a < b
 * (400,010 of 400,092 is 99.9%, not 100.0%) nor to 0.0 when a > 0 */
static void share_text(char *buf, size_t size, uint64_t a, uint64_t b)
{
	double s = share(a, b);
	if (s < 0)
		snprintf(buf, size, "-");
	else if (a < b && s >= 99.95)
		snprintf(buf, size, "99.9%%");
	else if (a > 0 && s < 0.05)
		snprintf(buf, size, "<0.1%%");
	else
		snprintf(buf, size, "%.1f%%", s);
}

static void print_share(FILE *out, uint64_t a, uint64_t b, int width)
{
	char buf[32];
	share_text(buf, sizeof(buf), a, b);
	fprintf(out, "%*s", width, buf);
}

struct accounting;
static json_t *accounting_json(const struct accounting *acc);
static uint64_t accounting_own(const struct accounting *acc);

static int write_json(FILE *out, const struct cov_row *rows, size_t n,
		      uint64_t ta, uint64_t tb, const char *la, const char *lb,
		      const struct accounting *acc)
{
	json_t *root = json_object(), *arr = json_array();
	if (!root || !arr)
		goto nomem;
	json_object_set_new(root, "a", json_string(la));
	json_object_set_new(root, "b", json_string(lb));
	json_object_set_new(root, "after_start", json_boolean(acc != NULL));
	if (acc) {
		json_object_set_new(root, "own_a", json_integer((json_int_t)accounting_own(acc)));
		json_object_set_new(root, "accounting", accounting_json(acc));
	}
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

/* An A stream's start-up and start: from there on its shim made or saw
 * the process's calls. */
struct start {
	uint64_t pid, startup_ns, start_ns;
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
	return p->startup_ns < q->startup_ns ? -1 : p->startup_ns > q->startup_ns;
}

static bool is_exec(uint64_t nr, const char *arch)
{
	const char *name = nr < KP_SYSCALL_MAX ? kp_syscall_name(arch, (unsigned)nr) : NULL;
	return name && (strcmp(name, "execve") == 0 || strcmp(name, "execveat") == 0);
}

/*
 * Where each of B's calls went, for --after-start: every call of a
 * process (pid) that A traced is before A's start-up in its image (the
 * dynamic loader; libc's fork in a fork child) or from the start-up on,
 * until a successful exec replaced the image. From the start-up on, a call
 * is the shim's own (A's `own` record counts them all, start-up included)
 * or the program's, which A counted or did not see; per syscall, what A
 * counted beyond B's calls is said too, so the identity
 *   B = before + own + counted + unseen - over
 * holds exactly. B's calls in processes A did not trace (the shim's output
 * processes and helpers, programs it cannot enter) are outside it.
 */
struct accounting {
	uint64_t b_total;	   /* B's calls, every process */
	uint64_t untraced;	   /* in processes without an A stream */
	uint64_t untraced_pids;
	uint64_t images;	   /* A's streams with a start */
	uint64_t before;	   /* before A's start-up in an image */
	uint64_t startup;	   /* during A's start-up */
	uint64_t startup_own;	   /* A's own count of its start-up calls */
	uint64_t own;		   /* A's own calls after its start-up */
	uint64_t counted;	   /* A's count of the program's calls */
	uint64_t in_progress;	   /* in progress at an exit: never returned */
	uint64_t unseen;	   /* the program's, beyond A's count */
	uint64_t over;		   /* A's count beyond B's calls */
	uint64_t *from_start;	   /* per nr: B's calls from A's start-up on */
	uint64_t *own_by_nr;	   /* per nr: A's own after its start-up */
	uint64_t *in_progress_by_nr;
};

/* B's calls per pid and time, A's starts; both sorted. */
static int b_calls(const struct ka_model *b, struct timed_call **out, size_t *n_out)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n_streams; i++)
		n += b->streams[i].n_event_list;
	if (!n) {
		fprintf(stderr, "kanalyze: --after-start: B has no events "
				"(trace it with kbpf-trace --events)\n");
		return -ENODATA;
	}
	struct timed_call *calls = calloc(n, sizeof(*calls));
	if (!calls)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < b->n_streams; i++) {
		const struct ka_stream *s = &b->streams[i];
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct ka_event *e = &s->event_list[k];
			calls[n++] = (struct timed_call){ s->pid, e->start_ns, e->nr, e->ret };
		}
	}
	qsort(calls, n, sizeof(*calls), by_pid_time);
	*out = calls;
	*n_out = n;
	return 0;
}

/* An A stream's start-up: from then on its shim saw or made the calls. */
static uint64_t startup_of(const struct ka_stream *s)
{
	return s->own_startup_ns && s->own_startup_ns <= s->start_ns ? s->own_startup_ns
								     : s->start_ns;
}

static int account(const struct ka_model *a, const struct ka_model *b,
		   const struct ka_profile *pa, struct accounting *acc)
{
	struct timed_call *calls = NULL;
	size_t n_calls = 0, n_starts = 0;
	int err = b_calls(b, &calls, &n_calls);
	if (err)
		return err;
	struct start *starts = calloc(a->n_streams + 1, sizeof(*starts));
	if (!starts) {
		free(calls);
		return -ENOMEM;
	}
	acc->b_total = n_calls;
	for (size_t i = 0; i < a->n_streams; i++) {
		const struct ka_stream *s = &a->streams[i];
		if (!s->have_header)
			continue;
		starts[n_starts++] = (struct start){ s->pid, startup_of(s), s->start_ns };
		for (size_t k = 0; k < s->n_own; k++)
			acc->own_by_nr[s->own[k].key] += s->own[k].value;
		for (size_t k = 0; k < s->n_in_progress; k++) {
			acc->in_progress_by_nr[s->in_progress[k].key] += s->in_progress[k].value;
			acc->in_progress += s->in_progress[k].value;
		}
		for (size_t k = 0; k < s->n_own_startup; k++) {
			acc->own_by_nr[s->own_startup[k].key] -= s->own_startup[k].value;
			acc->startup_own += s->own_startup[k].value;
		}
	}
	acc->images = n_starts;
	qsort(starts, n_starts, sizeof(*starts), start_by_pid_time);
	const char *arch = ka_model_arch(b);
	size_t j = 0;
	for (size_t i = 0; i < n_calls;) {
		uint64_t pid = calls[i].pid;
		while (j < n_starts && starts[j].pid < pid)
			j++;
		bool traced = j < n_starts && starts[j].pid == pid;
		enum { BEFORE, STARTUP, SEEN } phase = BEFORE;
		uint64_t start_ns = 0;
		if (!traced)
			acc->untraced_pids++;
		for (; i < n_calls && calls[i].pid == pid; i++) {
			uint64_t t = calls[i].start_ns;
			while (j < n_starts && starts[j].pid == pid && starts[j].startup_ns <= t) {
				phase = STARTUP;
				start_ns = starts[j].start_ns;
				j++;
			}
			if (phase == STARTUP && t >= start_ns)
				phase = SEEN;
			if (!traced)
				acc->untraced++;
			else if (phase == BEFORE)
				acc->before++;
			else if (phase == STARTUP)
				acc->startup++;
			else if (calls[i].nr < KP_SYSCALL_MAX)
				acc->from_start[calls[i].nr]++;
			else
				acc->unseen++;
			if (is_exec(calls[i].nr, arch) && calls[i].ret == 0)
				phase = BEFORE;
		}
	}
	uint64_t *counted = calloc(KP_SYSCALL_MAX, sizeof(*counted));
	if (!counted) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < pa->n_rows; i++)
		if (pa->rows[i].nr < KP_SYSCALL_MAX)
			counted[pa->rows[i].nr] += pa->rows[i].count;
	for (unsigned nr = 0; nr < KP_SYSCALL_MAX; nr++) {
		acc->counted += counted[nr];
		acc->own += acc->own_by_nr[nr];
		int64_t d = (int64_t)acc->from_start[nr] - (int64_t)acc->own_by_nr[nr] -
			    (int64_t)acc->in_progress_by_nr[nr] - (int64_t)counted[nr];
		if (d > 0)
			acc->unseen += (uint64_t)d;
		else
			acc->over += (uint64_t)-d;
	}
	free(counted);
out:
	free(calls);
	free(starts);
	return err;
}

static void print_accounting(FILE *out, const struct accounting *acc)
{
	uint64_t in_images = acc->b_total - acc->untraced;
	fprintf(out, "Accounting of B's %" PRIu64 " calls in the %" PRIu64
		" process images A traced:\n", in_images, acc->images);
	fprintf(out, "  %12" PRIu64 "  before A's start-up (the dynamic loader; libc's fork in a fork child)\n",
		acc->before);
	fprintf(out, "  %12" PRIu64 "  A's start-up (%" PRIu64 " counted by A itself, the rest made inside libc)\n",
		acc->startup, acc->startup_own);
	fprintf(out, "  %12" PRIu64 "  A's own calls after its start-up (trace output, /proc, rescans)\n", acc->own);
	fprintf(out, "  %12" PRIu64 "  the program's, counted by A\n", acc->counted);
	fprintf(out, "  %12" PRIu64 "  the program's, in progress at its exit (never returned; named by A)\n",
		acc->in_progress);
	fprintf(out, "  %12" PRIu64 "  the program's, not seen by A\n", acc->unseen);
	if (acc->over)
		fprintf(out, "  %12s  counted by A beyond B's calls: -%" PRIu64 "\n", "", acc->over);
	fprintf(out, "  %12" PRIu64 "  = B's calls in those images\n",
		acc->before + acc->startup + acc->own + acc->counted + acc->in_progress +
			acc->unseen - acc->over);
	if (acc->untraced)
		fprintf(out, "B's calls in %" PRIu64 " processes A did not trace (the shim's "
			     "output processes and helpers; programs not preloaded): %" PRIu64 "\n",
			acc->untraced_pids, acc->untraced);
}

static uint64_t accounting_own(const struct accounting *acc)
{
	return acc->own;
}

static json_t *accounting_json(const struct accounting *acc)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "b_total", (json_int_t)acc->b_total,
			 "images", (json_int_t)acc->images,
			 "before_startup", (json_int_t)acc->before,
			 "startup", (json_int_t)acc->startup,
			 "startup_counted_by_a", (json_int_t)acc->startup_own,
			 "own", (json_int_t)acc->own,
			 "counted", (json_int_t)acc->counted,
			 "in_progress", (json_int_t)acc->in_progress,
			 "unseen", (json_int_t)acc->unseen,
			 "over", (json_int_t)acc->over,
			 "untraced", (json_int_t)acc->untraced,
			 "untraced_processes", (json_int_t)acc->untraced_pids);
}

int ka_report_coverage(FILE *out, const struct ka_model *a,
		       const struct ka_model *b, const char *label_a,
		       const char *label_b, bool json, bool markdown,
		       bool after_start)
{
	struct ka_profile pa = { 0 }, pb = { 0 };
	struct cov_row *rows = NULL;
	size_t n = 0;
	int err;
	struct accounting acc = { 0 };

	if ((err = ka_profile_build(&pa, a, NULL, NULL)) ||
	    (err = ka_profile_build(&pb, b, NULL, NULL)))
		goto out;
	rows = calloc(pa.n_rows + pb.n_rows + KP_SYSCALL_MAX + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	/* both traces are of one workload, so of one architecture */
	const char *arch = ka_model_arch(b);
	for (size_t i = 0; i < pa.n_rows; i++)
		row_for(rows, &n, pa.rows[i].nr, arch)->a = pa.rows[i].count;
	uint64_t tb = 0;
	if (after_start) {
		acc.from_start = calloc(KP_SYSCALL_MAX, sizeof(*acc.from_start));
		acc.own_by_nr = calloc(KP_SYSCALL_MAX, sizeof(*acc.own_by_nr));
		acc.in_progress_by_nr = calloc(KP_SYSCALL_MAX, sizeof(*acc.in_progress_by_nr));
		if (!acc.from_start || !acc.own_by_nr || !acc.in_progress_by_nr) {
			err = -ENOMEM;
			goto out;
		}
		if ((err = account(a, b, &pa, &acc)))
			goto out;
		for (unsigned nr = 0; nr < KP_SYSCALL_MAX; nr++) {
			/* own calls B did not see stay at 0 */
			int64_t v = (int64_t)acc.from_start[nr] - (int64_t)acc.own_by_nr[nr];
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
				 after_start ? &acc : NULL);
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
		if (after_start) {
			fputc('\n', out);
			print_accounting(out, &acc);
		}
		if (ka_untraced_count(a)) {
			fprintf(out, "\nA's producer could not enter these processes:\n\n");
			ka_report_untraced(out, a, "- ");
		}
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
			     "less A's own %" PRIu64 " calls\n", acc.own);
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
	if (tb) {
		char buf[32];
		share_text(buf, sizeof(buf), ta, tb);
		fprintf(out, " (%s)", buf);
	}
	fprintf(out, ".\n");
	if (after_start)
		print_accounting(out, &acc);
	else
		fprintf(out, "B's calls include the loaders', the shim's own and those of processes "
			     "A did not trace; --after-start (B with --events) accounts for each.\n");
	/* what A's producer said it could not enter (B may have seen them) */
	if (ka_untraced_count(a)) {
		fprintf(out, "A's producer could not enter these processes:\n");
		ka_report_untraced(out, a, "  ");
	}
	fprintf(out, "=== End Coverage ===\n");
out:
	free(acc.from_start);
	free(acc.own_by_nr);
	free(acc.in_progress_by_nr);
	free(rows);
	ka_profile_free(&pa);
	ka_profile_free(&pb);
	return err;
}
