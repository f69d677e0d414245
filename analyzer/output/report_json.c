/* SPDX-License-Identifier: MIT */
/*
 * JSON output, written with jansson. The keys are a contract with tests
 * and scripts (see --help and README.md): counters are JSON integers in
 * their unit (_ns), 64-bit stream ids are 16-digit hex strings because
 * JSON readers such as jq hold numbers as doubles.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "columns.h"
#include "dispatch.h"
#include "report.h"
#include "syscalls.h"
#include "views.h"

static json_t *jint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* A string from the input: null when absent, bytes that are not UTF-8
 * replaced by '?' (jansson refuses invalid UTF-8). */
static json_t *jstr(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

static json_t *jid(uint64_t id)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%016" PRIx64, id);
	return json_string(buf);
}

/* json_object_set_new that remembers a failure in *err. */
static void set(json_t *obj, const char *key, json_t *value, int *err)
{
	if (!value || json_object_set_new(obj, key, value))
		*err = -ENOMEM;
}

/* Patch mode's dispatch path: null unless some stream had it armed. */
static json_t *dispatch_json(const struct ka_model *m, int *err)
{
	struct ka_dispatch d;
	int e = ka_dispatch_sum(m, &d);
	if (e || !d.armed) {
		if (e)
			*err = e;
		ka_dispatch_free(&d);
		return json_null();
	}
	json_t *o = json_object(), *sites = json_array();
	for (size_t k = 0; o && sites && k < d.n_sites; k++) {
		json_t *x = json_object();
		set(x, "site", jstr(d.sites[k].where), err);
		set(x, "calls", jint(d.sites[k].calls), err);
		if (!x || json_array_append_new(sites, x))
			*err = -ENOMEM;
	}
	set(o, "calls", jint(d.calls), err);
	set(o, "sites", sites, err);
	ka_dispatch_free(&d);
	return o;
}

static void append(json_t *array, json_t *value, int *err)
{
	if (!value || json_array_append_new(array, value))
		*err = -ENOMEM;
}

/* A row's counters, in order; "name", "nr" before them, "errno" after. */
static const enum ka_col json_cols[] = {
	KA_COL_COUNT, KA_COL_TIME,    KA_COL_OFF_CPU, KA_COL_AVG, KA_COL_MIN,
	KA_COL_MAX,   KA_COL_RETRIES, KA_COL_ERRORS,  KA_COL_P50, KA_COL_P90,
	KA_COL_P99,
};
#define JSON_COLS (sizeof(json_cols) / sizeof(json_cols[0]))

static json_t *row_json(const struct ka_row *r, bool total, int *err)
{
	json_t *o = json_object();
	if (!o) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!total) {
		set(o, "name", json_string(r->name), err);
		set(o, "nr", jint(r->nr), err);
	}
	/* null: not known for every call of the row (--by=kind); off_cpu_ns
	 * only where the trace says it */
	for (size_t c = 0; c < JSON_COLS; c++) {
		uint64_t v;
		if (ka_col_value(json_cols[c], r, &v))
			set(o, ka_columns[json_cols[c]].key, jint(v), err);
		else if (json_cols[c] != KA_COL_OFF_CPU)
			set(o, ka_columns[json_cols[c]].key, json_null(), err);
	}
	bool nl = r->no_latency;
	if (nl) {
		set(o, "errno", json_null(), err);
		return o;
	}
	json_t *errnos = json_object();
	for (size_t i = 0; errnos && i < r->n_errnos; i++) {
		char buf[32];
		const char *name = ka_errno_name(r->errnos[i].key, buf, sizeof(buf));
		json_t *prev = json_object_get(errnos, name);
		uint64_t v = r->errnos[i].value +
			     (prev ? (uint64_t)json_integer_value(prev) : 0);
		set(errnos, name, jint(v), err);
	}
	set(o, "errno", errnos, err);
	return o;
}

/* Adds "total" and "syscalls" of one profile to obj. */
static int add_profile(json_t *obj, const struct ka_model *m,
		       const struct ka_stream *s, const struct ka_thread *t,
		       const struct ka_report_opts *o)
{
	struct ka_profile p;
	int err = ka_report_profile(&p, m, s, t, o);
	if (err)
		return err;
	json_t *rows = json_array();
	if (!rows)
		err = -ENOMEM;
	for (size_t i = 0; rows && i < ka_report_rows(&p, o); i++)
		append(rows, row_json(&p.rows[i], false, &err), &err);
	set(obj, "total", row_json(&p.total, true, &err), &err);
	set(obj, "syscalls", rows, &err);
	ka_profile_free(&p);
	return err;
}

/* --by=kind: {"file": {"total", "syscalls"}, ..., "none", "unknown"}. */
static json_t *kinds_json(const struct ka_model *m, const struct ka_report_opts *o,
			  int *err)
{
	json_t *all = json_object();
	for (int k = 0; all && !*err && k < KA_KIND_SECTIONS; k++) {
		struct ka_profile p;
		json_t *section = json_object(), *rows = json_array();
		if ((*err = ka_kind_profile(&p, m, k, o))) {
			json_decref(section);
			json_decref(rows);
			break;
		}
		for (size_t i = 0; rows && i < ka_report_rows(&p, o); i++)
			append(rows, row_json(&p.rows[i], false, err), err);
		if (section) {
			set(section, "total", row_json(&p.total, true, err), err);
			set(section, "syscalls", rows, err);
		} else {
			json_decref(rows);
		}
		set(all, ka_kind_section_name(k), section, err);
		ka_profile_free(&p);
	}
	return all;
}

/* Holes in the stream's record numbers: {"count": N, "seq": [[a, b], ...]}. */
#define HOLES_LISTED 64
static json_t *missing_json(const struct ka_stream *s, int *err)
{
	struct ka_seq_range holes[HOLES_LISTED];
	size_t n = 0;
	uint64_t missing = ka_stream_missing(s, holes, HOLES_LISTED, &n);
	json_t *j = json_object(), *list = json_array();
	set(j, "count", jint(missing), err);
	for (size_t i = 0; list && i < n && i < HOLES_LISTED; i++) {
		json_t *r = json_array();
		append(r, jint(holes[i].first), err);
		append(r, jint(holes[i].last), err);
		append(list, r, err);
	}
	set(j, "seq", list, err);
	return j;
}

static json_t *fds_json(const uint64_t fds[KP_KINDS], int *err)
{
	json_t *o = json_object();
	for (int k = 0; o && k < KP_KINDS; k++)
		set(o, kp_kind_names[k], jint(fds[k]), err);
	return o;
}

/* How a stream ended ("ending"): "exit", "after_death" (killed: the shim's output
 * process wrote the end), "detached" (tracing ended first), "exec",
 * "running" (a --listen connection still open), "unknown" (no end record:
 * killed or lost), "empty" (the stand-in of an empty trace file). */
static const char *end_name(const struct ka_model *m, const struct ka_stream *s)
{
	if (s->empty_file)
		return "empty";
	if (s->have_exit)
		return s->exit_detached ? "detached" : s->exit_after_death ? "after_death" : "exit";
	if (ka_stream_ended(s))
		return "exec";
	if (s->last_key && s->last_source < m->n_sources && m->sources[s->last_source].live)
		return "running";
	return "unknown";
}

/* Streams without their end, as kanalyze's warnings name them. */
static json_t *unended_json(const struct ka_model *m, int *err)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!ka_stream_unended(s))
			continue;
		bool known = s->last_key && s->last_source < m->n_sources;
		json_t *j = json_object();
		set(j, "pid", jint(s->pid), err);
		set(j, "stream", jid(s->stream), err);
		set(j, "exe", jstr(s->exe), err);
		set(j, "name", jstr(ka_stream_name(s)), err);
		set(j, "producer", jstr(s->producer), err);
		set(j, "file", known ? jstr(m->sources[s->last_source].name) : json_null(), err);
		set(j, "byte", known ? jint(s->last_end) : json_null(), err);
		set(j, "decompressed", json_boolean(known && s->last_decompressed), err);
		set(j, "ending", jstr(end_name(m, s)), err);
		append(list, j, err);
	}
	return list;
}

static json_t *orphans_json(const struct ka_model *m, int *err)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < m->n_forks; i++) {
		const struct ka_fork_note *f = &m->forks[i];
		if (!ka_model_fork_orphan(m, f))
			continue;
		json_t *j = json_object();
		set(j, "pid", jint(f->pid), err);
		set(j, "stream", jid(f->stream), err);
		set(j, "child", jint(f->child), err);
		set(j, "how", jstr(f->how[0] ? f->how : "fork"), err);
		if (f->why[0]) {
			/* the shim's word on the child's program */
			set(j, "not_entered", jstr(f->why), err);
			set(j, "path", jstr(f->path), err);
		}
		append(list, j, err);
	}
	return list;
}

static json_t *exec_orphans_json(const struct ka_model *m, int *err)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!ka_model_exec_orphan(m, s))
			continue;
		json_t *j = json_object();
		set(j, "pid", jint(s->pid), err);
		set(j, "stream", jid(s->stream), err);
		set(j, "path", jstr(s->exec_path), err);
		if (s->exec_why[0])
			set(j, "not_entered", jstr(s->exec_why), err);
		append(list, j, err);
	}
	return list;
}

/* Processes of the run the shim could not enter (untraced.c). */
static json_t *untraced_json(const struct ka_model *m, int *err)
{
	json_t *list = json_array();
	struct ka_untraced *u;
	size_t n;
	if (!list || ka_untraced_list(m, &u, &n)) {
		*err = -ENOMEM;
		return list;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_object();
		set(j, "pid", jint(u[i].pid), err);
		set(j, "exe", jstr(u[i].exe), err);
		set(j, "why", jstr(u[i].why), err);
		set(j, "reason", jstr(ka_untraced_reason(u[i].why)), err);
		set(j, "seen", jstr(u[i].seen), err);
		set(j, "by_pid", jint(u[i].by_pid), err);
		append(list, j, err);
	}
	free(u);
	return list;
}

static json_t *stream_json(const struct ka_model *m, const struct ka_stream *s,
			   const struct ka_report_opts *o, int *err)
{
	json_t *j = json_object();
	if (!j) {
		*err = -ENOMEM;
		return NULL;
	}
	set(j, "pid", jint(s->pid), err);
	set(j, "ppid", s->have_header ? jint(s->ppid) : json_null(), err);
	set(j, "exe", jstr(s->exe), err);
	set(j, "comm", s->comm[0] ? jstr(s->comm) : json_null(), err);
	json_t *argv = json_array();
	for (size_t i = 0; argv && i < s->argc; i++)
		append(argv, jstr(s->argv[i]), err);
	set(j, "argv", argv, err);
	set(j, "origin", jstr(s->origin), err);
	set(j, "stream", jid(s->stream), err);
	set(j, "parent_stream", jid(s->parent_stream), err);
	set(j, "producer", jstr(s->producer), err);
	set(j, "arch", jstr(s->arch), err);
	set(j, "host", jstr(s->host), err);
	set(j, "kernel", jstr(s->kernel), err);
	set(j, "exit_status", s->have_exit ? json_integer(s->exit_status) :
					      json_null(), err);
	set(j, "exec_path", s->exec_path ? jstr(s->exec_path) : json_null(), err);
	set(j, "runtime", s->runtime[0] ? jstr(s->runtime) : json_null(), err);
	set(j, "site_cache_note", s->site_cache_note ? jstr(s->site_cache_note) : json_null(),
	    err);
	set(j, "ending", jstr(end_name(m, s)), err);
	set(j, "empty_file", jstr(s->empty_file), err);
	set(j, "exit_signal", s->have_exit ? jint(s->exit_signal) : json_null(),
	    err);
	set(j, "fds_at_exit", s->have_exit ? fds_json(s->fds, err) : json_null(),
	    err);
	set(j, "pending_pipe_readers", jint(s->pending_pipe_readers), err);
	set(j, "pending_pipe_writers", jint(s->pending_pipe_writers), err);
	set(j, "threads", jint(s->n_threads), err);
	set(j, "events", jint(s->events), err);
	set(j, "missing_records", missing_json(s, err), err);
	if (!*err)
		*err = add_profile(j, m, s, NULL, o);
	if (o->by != KA_BY_THREAD)
		return j;
	json_t *threads = json_array();
	for (size_t t = 0; threads && !*err && t < s->n_threads; t++) {
		const struct ka_thread *th = &s->threads[t];
		json_t *tj = json_object();
		if (!tj) {
			*err = -ENOMEM;
			break;
		}
		set(tj, "thread", jint(th->thread), err);
		set(tj, "tid", jint(th->tid), err);
		const char *name = ka_thread_name(s, th);
		set(tj, "name", name ? jstr(name) : json_null(), err);
		set(tj, "exited", json_boolean(th->exited), err);
		set(tj, "final", json_boolean(th->final), err);
		if (!*err)
			*err = add_profile(tj, m, s, th, o);
		append(threads, tj, err);
	}
	set(j, "thread_profiles", threads, err);
	return j;
}

/* Per producer merged: its streams and what it could see (its first
 * stream's coverage sentence; the shim's, by hook mode). */
static json_t *producers_json(const struct ka_model *m, int *err)
{
	struct ka_runs runs;
	ka_runs_count(m, &runs);
	json_t *a = json_array();
	for (unsigned k = 0; a && !*err && k < runs.n_producers; k++) {
		struct ka_producer_coverage c;
		ka_runs_coverage(m, runs.producer[k], &c);
		json_t *p = json_pack("{s:s, s:I}", "producer", runs.producer[k], "streams",
				      (json_int_t)runs.streams[k]);
		if (!p) {
			*err = -ENOMEM;
			break;
		}
		set(p, "hook_mode", jstr(c.mixed ? "mixed" : c.hook_mode), err);
		set(p, "coverage", jstr(c.mixed ? ka_model_coverage(m) : c.coverage), err);
		append(a, p, err);
	}
	if (!a)
		*err = -ENOMEM;
	return a;
}

int ka_report_json(FILE *out, const struct ka_model *m,
		   const struct ka_report_opts *o)
{
	int err = 0;
	uint64_t readers, writers, fds[KP_KINDS];
	size_t exited;
	json_t *root = json_object();
	if (!root)
		return -ENOMEM;

	set(root, "arch", jstr(ka_model_arch(m)), &err);
	set(root, "producer", jstr(ka_model_producer(m)), &err);
	set(root, "coverage", jstr(ka_model_coverage(m)), &err);
	set(root, "hook_mode", jstr(ka_model_hook_mode(m)), &err);
	set(root, "dispatch", dispatch_json(m, &err), &err);
	set(root, "producers", producers_json(m, &err), &err);
	if (!err)
		err = add_profile(root, m, NULL, NULL, o);
	if (!err && o->by == KA_BY_KIND)
		set(root, "kind_profiles", kinds_json(m, o, &err), &err);
	json_t *procs = json_array();
	for (size_t i = 0; procs && !err && i < m->n_streams; i++)
		append(procs, stream_json(m, &m->streams[i], o, &err), &err);
	set(root, "processes", procs, &err);

	ka_model_pending(m, &readers, &writers, fds, &exited);
	set(root, "pending_pipe_readers", jint(readers), &err);
	set(root, "pending_pipe_writers", jint(writers), &err);
	set(root, "fds_at_exit", fds_json(fds, &err), &err);
	set(root, "exited", jint(exited), &err);

	json_t *drops = json_object();
	if (drops) {
		set(drops, "records", jint(m->drop_records), &err);
		set(drops, "events", jint(m->drop_events), &err);
		set(drops, "bytes", jint(m->drop_bytes), &err);
		json_t *reasons = json_array();
		for (size_t i = 0; reasons && i < m->n_drop_reasons; i++)
			append(reasons, jstr(m->drop_reasons[i]), &err);
		set(drops, "reasons", reasons, &err);
	}
	set(root, "drops", drops, &err);
	if (m->set_aside) { /* --exclude-waits */
		json_t *aside = json_object();
		json_t *names = json_array();
		for (unsigned nr = 0; names && nr < 1024; nr++)
			if (m->set_aside[nr] && kp_syscall_name(ka_model_arch(m), nr))
				append(names, jstr(kp_syscall_name(ka_model_arch(m), nr)), &err);
		set(aside, "syscalls", names, &err);
		set(aside, "calls", jint(m->aside_calls), &err);
		set(aside, "time_ns", jint(m->aside_ns), &err);
		set(root, "set_aside", aside, &err);
	}

	json_t *damaged = json_array();
	for (size_t i = 0; damaged && i < m->n_damaged; i++) {
		const struct ka_damage_entry *d = &m->damaged[i];
		json_t *dj = json_object();
		if (dj) {
			set(dj, "file", jstr(d->file), &err);
			set(dj, "offset", jint(d->offset), &err);
			set(dj, "decompressed", json_boolean(d->decompressed), &err);
			set(dj, "reason", jstr(d->reason), &err);
			set(dj, "no_stream_start", json_boolean(d->no_start), &err);
		}
		append(damaged, dj, &err);
	}
	set(root, "damaged", damaged, &err);
	set(root, "unended", unended_json(m, &err), &err);
	set(root, "fork_children_checked", json_boolean(m->forks_checked), &err);
	set(root, "forks_without_stream", orphans_json(m, &err), &err);
	set(root, "execs_without_stream", exec_orphans_json(m, &err), &err);
	set(root, "not_traced", untraced_json(m, &err), &err);

	json_t *counts = json_object();
	if (counts) {
		set(counts, "files", jint(m->files), &err);
		set(counts, "records", jint(m->records), &err);
		set(counts, "unknown_records", jint(m->unknown_records), &err);
		set(counts, "processes", jint(ka_model_processes(m)), &err);
		set(counts, "streams", jint(m->n_streams), &err);
		set(counts, "threads", jint(ka_model_threads(m)), &err);
	}
	set(root, "counts", counts, &err);

	if (!err && json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
		err = -EIO;
	if (!err)
		fputc('\n', out);
	json_decref(root);
	return err;
}
