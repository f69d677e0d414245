/* SPDX-License-Identifier: MIT */
/*
 * export: hyperfine's three export formats for the command suite's
 * benchmarks. JSON and CSV carry times in seconds, as hyperfine's do; the
 * Markdown table milliseconds, with each mean relative to the fastest.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "export.h"
#include "stats.h"

/* The command suite's own metrics, in its table's order. */
enum { WALL, USER, SYS, N_TIMES };

struct row {
	char command[1024];
	const char *value;		/* the parameter's, or NULL */
	struct stats_summary t[N_TIMES];	/* ms */
	const struct value_list *wall;
};

static void join_argv(const char *const *argv, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; argv[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/* The benchmarks that completed; *n of them. */
static struct row *collect(const struct run *run, size_t *n)
{
	struct row *rows = calloc(run->n_suites + 1, sizeof(*rows));
	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < run->n_suites; i++) {
		const struct suite_ctx *ctx = &run->suites[i];
		struct row *r = &rows[*n];
		bool ok = !ctx->error && ctx->rounds_done == ctx->n_rounds;
		for (int k = 0; ok && k < N_TIMES; k++)
			ok = stats_summarize(ctx->values[k].v, ctx->values[k].n, &r->t[k]) == 0;
		if (!ok)
			continue;
		join_argv(suite_command_argv(i), r->command, sizeof(r->command));
		r->value = suite_command_value(i);
		r->wall = &ctx->values[WALL];
		(*n)++;
	}
	return rows;
}

static FILE *open_out(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "krunner: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (fclose(f) != 0) {
		fprintf(stderr, "krunner: cannot write %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int write_json(const struct run *run, const struct row *rows, size_t n, const char *path)
{
	json_t *results = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		json_t *times = json_array();
		for (size_t k = 0; k < r->wall->n; k++)
			json_array_append_new(times, json_real(r->wall->v[k] / 1e3));
		json_t *o = json_object();
		json_object_set_new(o, "command", json_string(r->command));
		const struct { const char *key; double ms; } fields[] = {
			{ "mean", r->t[WALL].mean }, { "stddev", r->t[WALL].sd },
			{ "median", r->t[WALL].median }, { "user", r->t[USER].mean },
			{ "system", r->t[SYS].mean }, { "min", r->t[WALL].min },
			{ "max", r->t[WALL].max },
		};
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
			json_object_set_new(o, fields[k].key, isfinite(fields[k].ms)
					    ? json_real(fields[k].ms / 1e3) : json_null());
		json_object_set_new(o, "times", times);
		if (r->value)
			json_object_set_new(o, "parameters",
					    json_pack("{s:s}", run->opts->cmd.param, r->value));
		json_array_append_new(results, o);
	}
	json_t *root = json_pack("{s:o}", "results", results);
	FILE *f = open_out(path);
	int err = f ? 0 : -errno;
	if (f && json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) < 0)
		err = -EIO;
	if (f) {
		fputc('\n', f);
		int cerr = close_out(f, path);
		err = err ? err : cerr;
	}
	json_decref(root);
	return err;
}

static int write_csv(const struct run *run, const struct row *rows, size_t n, const char *path)
{
	FILE *f = open_out(path);
	if (!f)
		return -errno;
	const char *param = run->opts->cmd.param;
	fprintf(f, "command,mean,stddev,median,user,system,min,max");
	if (param)
		fprintf(f, ",parameter_%s", param);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		kp_csv_field(f, r->command);
		fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", r->t[WALL].mean / 1e3,
			isfinite(r->t[WALL].sd) ? r->t[WALL].sd / 1e3 : 0, r->t[WALL].median / 1e3,
			r->t[USER].mean / 1e3, r->t[SYS].mean / 1e3, r->t[WALL].min / 1e3,
			r->t[WALL].max / 1e3);
		if (param) {
			fputc(',', f);
			kp_csv_field(f, r->value);
		}
		fputc('\n', f);
	}
	return close_out(f, path);
}

static int write_markdown(const struct run *run, const struct row *rows, size_t n,
			  const char *path)
{
	FILE *f = open_out(path);
	if (!f)
		return -errno;
	const char *param = run->opts->cmd.param;
	double fastest = INFINITY;
	for (size_t i = 0; i < n; i++)
		fastest = fmin(fastest, rows[i].t[WALL].mean);
	fprintf(f, "| Command | Mean ± σ [ms] | Median [ms] | Min [ms] | Max [ms] | Relative |");
	if (param)
		fprintf(f, " %s |", param);
	fprintf(f, "\n|:---|---:|---:|---:|---:|---:|%s\n", param ? "---:|" : "");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		fprintf(f, "| `");
		for (const char *c = r->command; *c; c++)
			fputs(*c == '|' ? "\\|" : *c == '`' ? "'" : (char[2]){ *c, 0 }, f);
		fprintf(f, "` | %.3f ± %.3f | %.3f | %.3f | %.3f | %.2f |", r->t[WALL].mean,
			isfinite(r->t[WALL].sd) ? r->t[WALL].sd : 0, r->t[WALL].median,
			r->t[WALL].min, r->t[WALL].max,
			fastest > 0 ? r->t[WALL].mean / fastest : 1.0);
		if (param)
			fprintf(f, " %s |", r->value);
		fputc('\n', f);
	}
	return close_out(f, path);
}

int export_write(const struct run *run)
{
	const struct options *o = run->opts;
	if (!o->export_json && !o->export_csv && !o->export_markdown)
		return 0;
	size_t n;
	struct row *rows = collect(run, &n);
	if (!rows)
		return -ENOMEM;
	int err = 0;
	if (o->export_json)
		err = write_json(run, rows, n, o->export_json);
	if (!err && o->export_csv)
		err = write_csv(run, rows, n, o->export_csv);
	if (!err && o->export_markdown)
		err = write_markdown(run, rows, n, o->export_markdown);
	free(rows);
	return err;
}
