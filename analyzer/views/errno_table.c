/* SPDX-License-Identifier: MIT */
/*
 * --by=errno: failed calls by errno, then by syscall, most frequent first;
 * a table, or JSON, CSV or markdown with --format.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "views.h"

struct cell {
	uint64_t err, calls;
	const struct ka_row *row;
};

static int by_err_then_calls(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	if (x->err != y->err)
		return x->err < y->err ? -1 : 1;
	return x->calls > y->calls ? -1 : x->calls < y->calls;
}

/* Errno 0 is the shim's "other errno" (FORMAT.md: beyond six per syscall). */
static const char *err_name(uint64_t err, char *buf, size_t size, const char *other)
{
	return err ? ka_errno_name(err, buf, size) : other;
}

/* End of the run of cells with c[i]'s errno; *total gets their calls. */
static size_t run_end(const struct cell *c, size_t n, size_t i, uint64_t *total)
{
	size_t j = i;
	*total = 0;
	while (j < n && c[j].err == c[i].err)
		*total += c[j++].calls;
	return j;
}

static void print_table(FILE *out, const struct cell *c, size_t n, bool markdown)
{
	if (markdown)
		fprintf(out, "| errno | Calls | Syscalls |\n|:--|--:|:--|\n");
	else
		fprintf(out, "=== Failed Calls by errno ===\n%-16s %10s  %s\n", "errno",
			"Calls", "Syscalls");
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t total;
		char buf[32];
		j = run_end(c, n, i, &total);
		const char *name = err_name(c[i].err, buf, sizeof(buf), "(other errno)");
		if (markdown)
			fprintf(out, "| %s | %" PRIu64 " |", name, total);
		else
			fprintf(out, "%-16s %10" PRIu64 " ", name, total);
		for (size_t k = i; k < j; k++)
			fprintf(out, " %s %" PRIu64 "%s", c[k].row->name, c[k].calls,
				k + 1 < j ? "," : "");
		fputs(markdown ? " |\n" : "\n", out);
	}
	if (markdown)
		return;
	if (!n)
		fprintf(out, "No call failed.\n");
	fprintf(out, "=== End Failed Calls ===\n");
}

static void print_csv(FILE *out, const struct cell *c, size_t n)
{
	fprintf(out, "errno,number,syscall,nr,calls\n");
	for (size_t i = 0; i < n; i++) {
		char buf[32];
		fprintf(out, "%s,", err_name(c[i].err, buf, sizeof(buf), "other"));
		if (c[i].err)
			fprintf(out, "%" PRIu64, c[i].err);
		fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 "\n", c[i].row->name, c[i].row->nr,
			c[i].calls);
	}
}

static json_t *jint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* json_object_set_new / json_array_append_new that remember a failure. */
static void set(json_t *obj, const char *key, json_t *value, int *err)
{
	if (!value || json_object_set_new(obj, key, value))
		*err = -ENOMEM;
}

static void append(json_t *array, json_t *value, int *err)
{
	if (!value || json_array_append_new(array, value))
		*err = -ENOMEM;
}

/*
 * {"failed_calls": N, "errnos": [{"errno": "ENOENT", "number": 2,
 * "calls": N, "syscalls": [{"name", "nr", "calls"}, ...]}, ...]};
 * the shim's other errno is "errno": "other", "number": null.
 */
static int print_json(FILE *out, const struct cell *c, size_t n)
{
	int err = 0;
	uint64_t failed = 0;
	json_t *root = json_object(), *errnos = json_array();
	for (size_t i = 0, j; !err && i < n; i = j) {
		uint64_t total;
		char buf[32];
		j = run_end(c, n, i, &total);
		failed += total;
		json_t *e = json_object(), *calls = json_array();
		set(e, "errno", json_string(err_name(c[i].err, buf, sizeof(buf), "other")), &err);
		set(e, "number", c[i].err ? jint(c[i].err) : json_null(), &err);
		set(e, "calls", jint(total), &err);
		for (size_t k = i; !err && k < j; k++) {
			json_t *sc = json_object();
			set(sc, "name", json_string(c[k].row->name), &err);
			set(sc, "nr", jint(c[k].row->nr), &err);
			set(sc, "calls", jint(c[k].calls), &err);
			append(calls, sc, &err);
		}
		set(e, "syscalls", calls, &err);
		append(errnos, e, &err);
	}
	set(root, "failed_calls", jint(failed), &err);
	set(root, "errnos", errnos, &err);
	if (!err && (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
		     fputc('\n', out) == EOF))
		err = -EIO;
	json_decref(root);
	return err;
}

int ka_report_errno_table(FILE *out, const struct ka_model *m,
			  const struct ka_report_opts *o)
{
	struct ka_profile p;
	int err = ka_report_profile(&p, m, NULL, NULL, o);
	if (err)
		return err;
	size_t n = 0;
	for (size_t i = 0; i < p.n_rows; i++)
		n += p.rows[i].n_errnos;
	struct cell *c = calloc(n + 1, sizeof(*c));
	if (!c) {
		ka_profile_free(&p);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < p.n_rows; i++)
		for (size_t k = 0; k < p.rows[i].n_errnos; k++)
			c[n++] = (struct cell){ p.rows[i].errnos[k].key,
						p.rows[i].errnos[k].value, &p.rows[i] };
	qsort(c, n, sizeof(*c), by_err_then_calls);
	switch (o->format) {
	case KA_FORMAT_JSON:
		err = print_json(out, c, n);
		break;
	case KA_FORMAT_CSV:
		print_csv(out, c, n);
		break;
	default:
		print_table(out, c, n, o->format == KA_FORMAT_MARKDOWN);
		break;
	}
	free(c);
	ka_profile_free(&p);
	return err;
}
