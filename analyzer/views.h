/*
 * The views of kanalyze beyond the profile table: each reads the same
 * model and writes one kind of output. One header for them because main.c
 * is their only caller; each lives in the file named after it.
 */
#ifndef KANALYZE_VIEWS_H
#define KANALYZE_VIEWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "report.h"

/* diff.c: per-syscall change from a to b. *regressions gets the flagged rows. */
int kp_report_diff(FILE *out, const struct kp_model *a, const struct kp_model *b,
		   const char *name_a, const char *name_b,
		   const struct kp_report_opts *o, size_t *regressions);

/* runs.c: the runs and producers a model merges (a run: a tree of
 * streams whose root has no parent among its producer's streams). */
#define KP_RUNS_PRODUCERS 4
#define KP_RUNS_SHOWN 4
struct kp_runs {
	uint64_t roots;
	const struct kp_stream *root[KP_RUNS_SHOWN];
	unsigned n_producers;
	const char *producer[KP_RUNS_PRODUCERS];
	uint64_t streams[KP_RUNS_PRODUCERS];
};
void kp_runs_count(const struct kp_model *m, struct kp_runs *r);
/* What the streams of one producer say of their coverage: the first
 * coverage line and hook mode among them (a preload stream without one is
 * symbol mode), and whether their hook modes differ. */
struct kp_producer_coverage {
	const char *coverage, *hook_mode;
	bool mixed;
};
void kp_runs_coverage(const struct kp_model *m, const char *producer,
		      struct kp_producer_coverage *c);
/* A warning on out when the model merges several runs or producers. */
void kp_report_runs(FILE *out, const struct kp_model *m, const char *name);

/* timeline.c: a JSON string literal with escapes. */
void kp_json_string(FILE *out, const char *s);

/* timeline.c: Chrome trace event JSON, one complete ("X") slice per event. */
int kp_write_timeline(FILE *out, const struct kp_model *m, uint64_t *slices);

/* sites.c: top call sites per syscall (--sites), folded stacks (--folded). */
int kp_report_sites(FILE *out, const struct kp_model *m,
		    const struct kp_report_opts *o);
int kp_write_folded(FILE *out, const struct kp_model *m);

/* One resolved call site of the whole model. */
struct kp_site_row {
	uint64_t nr;
	char syscall[40];
	char where[256]; /* "function (library)" or "library+0xoffset" */
	uint64_t count, time_ns;
};
/* Sites merged over streams and threads, by time; caller frees *rows. */
int kp_sites_collect(const struct kp_model *m, struct kp_site_row **rows,
		     size_t *n_rows);

/* series.c: per-interval deltas of the cumulative aggregates. */
struct kp_series_point {
	uint64_t end_ns; /* since the earliest stream start */
	uint64_t count, time_ns, retries, errors;
	uint64_t top_nr; /* syscall with the most time in the interval */
};
int kp_series_build(const struct kp_model *m, uint64_t interval_ns,
		    struct kp_series_point **points, size_t *n_points);
int kp_report_series(FILE *out, const struct kp_model *m, uint64_t interval_ms,
		     const struct kp_report_opts *o);

/* html.c: one self-contained report file. */
int kp_write_html(FILE *out, const struct kp_model *m,
		  const struct kp_report_opts *o, uint64_t interval_ms);

/* filter.c: -e names and %classes, --pid, event filters. */
struct kp_filter {
	bool nr_set;
	bool nr[1024];
	uint64_t *pids;
	size_t n_pids;
	uint64_t min_duration_ns;
	bool failed, succeeded;
};
/* Parses "read,write,%file"; -EINVAL with a message printed. */
int kp_filter_parse_names(struct kp_filter *f, const char *list);
int kp_filter_parse_pids(struct kp_filter *f, const char *list);
/* Applies the filter to the model (streams, threads, rows, events). */
int kp_filter_apply(struct kp_model *m, const struct kp_filter *f);
bool kp_filter_needs_events(const struct kp_filter *f);
void kp_filter_free(struct kp_filter *f);
/* The class names and their syscalls, for --help and docs. */
extern const char *const kp_class_names[];

/* assert.c: --assert EXPR on the end state. 0 holds, 1 fails, -EINVAL bad. */
int kp_assert_check(const struct kp_model *m, const char *expr, char *why,
		    size_t why_size);

/* gaps.c: missing records by sequence number (and drops). */
uint64_t kp_report_gaps(FILE *out, const struct kp_model *m);

/* ends.c: streams without their end, fork children without a stream. */
struct kp_ends {
	uint64_t unended;     /* streams reported as ended without exit */
	uint64_t orphans;     /* fork children reported as without a stream */
	uint64_t silent_live; /* --listen connections still open, nothing received */
	uint64_t no_start;    /* inputs without a stream start (empty, headerless) */
};
/* Prints one line per unended stream and per child without a stream. */
void kp_report_ends(FILE *out, const struct kp_model *m, struct kp_ends *ends);

/* blocking.c: EAGAIN retries per logical operation, from events; per
 * descriptor kind when the events carry it. Table, or JSON with o. */
int kp_report_blocking(FILE *out, const struct kp_model *m,
		       const struct kp_report_opts *o);

/* by errno: one table of failed calls by errno and syscall. */
int kp_report_errno_table(FILE *out, const struct kp_model *m,
			  const struct kp_report_opts *o);

#endif
