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
		      uint64_t ta, uint64_t tb, const char *la, const char *lb)
{
	json_t *root = json_object(), *arr = json_array();
	if (!root || !arr)
		goto nomem;
	json_object_set_new(root, "a", json_string(la));
	json_object_set_new(root, "b", json_string(lb));
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

int kp_report_coverage(FILE *out, const struct kp_model *a,
		       const struct kp_model *b, const char *label_a,
		       const char *label_b, bool json, bool markdown)
{
	struct kp_profile pa = { 0 }, pb = { 0 };
	struct cov_row *rows = NULL;
	size_t n = 0;
	int err;

	if ((err = kp_profile_build(&pa, a, NULL, NULL)) ||
	    (err = kp_profile_build(&pb, b, NULL, NULL)))
		goto out;
	rows = calloc(pa.n_rows + pb.n_rows + 1, sizeof(*rows));
	if (!rows) {
		err = -ENOMEM;
		goto out;
	}
	/* both traces are of one workload, so of one architecture */
	const char *arch = kp_model_arch(b);
	for (size_t i = 0; i < pa.n_rows; i++)
		row_for(rows, &n, pa.rows[i].nr, arch)->a = pa.rows[i].count;
	for (size_t i = 0; i < pb.n_rows; i++)
		row_for(rows, &n, pb.rows[i].nr, arch)->b = pb.rows[i].count;
	qsort(rows, n, sizeof(*rows), by_b_desc);
	uint64_t ta = pa.total.count, tb = pb.total.count;

	if (json) {
		err = write_json(out, rows, n, ta, tb, label_a, label_b);
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
	free(rows);
	kp_profile_free(&pa);
	kp_profile_free(&pb);
	return err;
}
