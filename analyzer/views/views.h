/* SPDX-License-Identifier: MIT */
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

#include "filter.h"
#include "profile.h"
#include "report.h"

/* diff.c: per-syscall change from a to b. *regressions gets the flagged rows. */
int ka_report_diff(FILE *out, const struct ka_model *a, const struct ka_model *b,
		   const char *name_a, const char *name_b,
		   const struct ka_report_opts *o, size_t *regressions);

/* runs.c: the runs and producers a model merges (a run: a tree of
 * streams whose root has no parent among its producer's streams). */
#define KA_RUNS_PRODUCERS 4
#define KA_RUNS_SHOWN 4
struct ka_runs {
	uint64_t roots;
	const struct ka_stream *root[KA_RUNS_SHOWN];
	unsigned n_producers;
	const char *producer[KA_RUNS_PRODUCERS];
	uint64_t streams[KA_RUNS_PRODUCERS];
};
void ka_runs_count(const struct ka_model *m, struct ka_runs *r);
/* What the streams of one producer say of their coverage: the first
 * coverage line and hook mode among them (a preload stream without one is
 * symbol mode), and whether their hook modes differ. */
struct ka_producer_coverage {
	const char *coverage, *hook_mode;
	bool mixed;
};
void ka_runs_coverage(const struct ka_model *m, const char *producer,
		      struct ka_producer_coverage *c);
/* A warning on out when the model merges several runs or producers. */
void ka_report_runs(FILE *out, const struct ka_model *m, const char *name);

/* timeline.c: a JSON string literal with escapes. */
void ka_json_string(FILE *out, const char *s);

/* timeline.c: Chrome trace event JSON, one complete ("X") slice per event;
 * cut at a time (said on stderr) when longer than max_bytes (0: never). */
#define KA_TIMELINE_MAX_MB 256
int ka_write_timeline(FILE *out, const struct ka_model *m, uint64_t max_bytes, uint64_t *slices);

/* sites.c: top call sites per syscall (--sites), folded stacks (--folded). */
int ka_report_sites(FILE *out, const struct ka_model *m,
		    const struct ka_report_opts *o);
int ka_write_folded(FILE *out, const struct ka_model *m);
/* The stacks (kbpf-trace) and sites (the shim) as folded lines, root
 * first: "lib`function;...;syscall" (frames may hold spaces, no ';'),
 * equal ones merged, sorted by text. The caller frees with
 * ka_folded_free. */
struct ka_folded_line {
	char *text;
	uint64_t count, time_ns;
};
int ka_folded_collect(const struct ka_model *m, struct ka_folded_line **lines, size_t *n);
void ka_folded_free(struct ka_folded_line *lines, size_t n);

/* sites.c, also for pprof.c: the model's sites and stacks. */
/* Whether any stream of the model has kbpf-trace stacks. */
bool ka_model_has_stacks(const struct ka_model *m);
/* A stream whose calls all belong at a site: the shim's, or any with stacks. */
bool ka_stream_has_sites(const struct ka_stream *s, bool stacks);
/* The calls (and their time) of sc at no site, nor stack when stacks. */
uint64_t ka_sc_unattributed(const struct ka_sc_stats *sc, bool stacks, uint64_t *time_ns);
/* A stack's frames worth showing, innermost first: those before the
 * first in no code (a frame-pointer chain read through noise). */
struct ka_symbolizer;
size_t ka_stack_depth(struct ka_symbolizer *sym, const struct ka_stream *s,
		      const struct ka_stack *st);
/* The syscall's name in arch, or syscall_NR. */
void ka_syscall_label(char *out, size_t size, const char *arch, uint64_t nr);

/* flame.c: the folded stacks as an SVG flame graph, weighted by time or
 * calls (--flame, and inside --html without standalone); *frames drawn. */
int ka_write_flame(FILE *out, const struct ka_model *m, bool by_time, bool standalone,
		   uint64_t *frames);

/* pprof.c: the profile as pprof's profile.proto, gzipped (--pprof). */
int ka_write_pprof(FILE *out, const struct ka_model *m, uint64_t *samples);

/* One resolved call site of the whole model. */
struct ka_site_row {
	uint64_t nr;
	char syscall[40];
	char where[256]; /* "function (library)" or "library+0xoffset" */
	uint64_t count, time_ns;
};
/* Sites merged over streams and threads, by time; caller frees *rows. */
int ka_sites_collect(const struct ka_model *m, struct ka_site_row **rows,
		     size_t *n_rows);

/* series.c: per-interval deltas of the cumulative aggregates. */
struct ka_series_point {
	uint64_t end_ns; /* since the earliest stream start */
	uint64_t count, time_ns, retries, errors;
	uint64_t top_nr; /* syscall with the most time in the interval */
	/* aggregates that landed in the interval: 0 says nothing is known of
	 * it (an interval shorter than the producers' period), not no calls */
	uint64_t aggregates;
};
int ka_series_build(const struct ka_model *m, uint64_t interval_ns,
		    struct ka_series_point **points, size_t *n_points);
int ka_report_series(FILE *out, const struct ka_model *m, uint64_t interval_ms,
		     const struct ka_report_opts *o);

/* html.c: one self-contained report file. */
int ka_write_html(FILE *out, const struct ka_model *m,
		  const struct ka_report_opts *o, uint64_t interval_ms);

/* assert.c: --assert EXPR on the end state. 0 holds, 1 fails, -EINVAL bad. */
int ka_assert_check(const struct ka_model *m, const char *expr, char *why,
		    size_t why_size);

/* gaps.c: missing records by sequence number (and drops). */
uint64_t ka_report_gaps(FILE *out, const struct ka_model *m);

/* ends.c: streams without their end, fork children without a stream. */
struct ka_ends {
	uint64_t unended;     /* streams reported as ended without exit */
	uint64_t orphans;     /* fork children reported as without a stream */
	uint64_t exec_orphans; /* execs whose new image has no stream */
	uint64_t silent_live; /* --listen connections still open, nothing received */
	uint64_t no_start;    /* inputs without a stream start (empty, headerless) */
	uint64_t untraced;    /* processes of the run the shim could not enter */
};
/* Prints one line per unended stream and per child without a stream. */
void ka_report_ends(FILE *out, const struct ka_model *m, struct ka_ends *ends);

/*
 * untraced.c: processes of the run the shim could not enter, each once
 * (by pid, none with a stream of its own): seen "exec" (an exec record's
 * not_entered), "child" (a fork record's) or "parent" (a header's
 * untraced_parent); exe and why point into the model.
 */
struct ka_untraced {
	uint64_t pid;
	const char *exe, *why, *seen;
	uint64_t by_pid; /* the traced process that said it */
};
/* A malloc'd list into *out (may be NULL when *n_out is 0): 0 or -ENOMEM. */
int ka_untraced_list(const struct ka_model *m, struct ka_untraced **out, size_t *n_out);
size_t ka_untraced_count(const struct ka_model *m);
/* The sentence for a not_entered code ("static": "static binary, ..."). */
const char *ka_untraced_reason(const char *why);
/* "pid N (EXE), the parent of ..., was not traced: WHY; trace it with ..." */
void ka_untraced_line(FILE *out, const struct ka_model *m, const struct ka_untraced *u,
		      const char *prefix);
/* One such line each; their number. */
size_t ka_report_untraced(FILE *out, const struct ka_model *m, const char *prefix);
/* The headers' notes on the site cache, each distinct one once. */
void ka_report_header_notes(FILE *out, const struct ka_model *m, const char *prefix);
/* A Go program traced in symbol mode: what that mode cannot see of it. */
void ka_report_go_note(FILE *out, const struct ka_model *m, const char *prefix);

/* blocking.c: EAGAIN retries per logical operation, from events; per
 * descriptor kind when the events carry it. Table, or JSON with o. */
int ka_report_blocking(FILE *out, const struct ka_model *m,
		       const struct ka_report_opts *o);

/* by errno: one table of failed calls by errno and syscall. */
int ka_report_errno_table(FILE *out, const struct ka_model *m,
			  const struct ka_report_opts *o);

#endif
