/* SPDX-License-Identifier: MIT */
/*
 * The output formats of kanalyze. Each report_*.c file writes one format
 * from the same model; what they share (options, the footer facts, sorted
 * profiles, labels for streams) is in report.c.
 */
#ifndef KANALYZE_REPORT_H
#define KANALYZE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile.h"

enum ka_format { KA_FORMAT_TABLE, KA_FORMAT_JSON, KA_FORMAT_CSV,
		 KA_FORMAT_MARKDOWN, KA_FORMAT_SUMMARY };
enum ka_by { KA_BY_SYSCALL, KA_BY_PROCESS, KA_BY_THREAD, KA_BY_KIND };

struct ka_report_opts {
	enum ka_format format;
	enum ka_by by;
	enum ka_sort sort;
	size_t top; /* rows per table, 0 = all */
	bool top_given; /* --top on the command line (--sites has its own default) */
	bool errors;
	bool percentiles;
	bool live; /* a --listen snapshot: streams without exit are running */
	bool flame_by_calls; /* --flame-weight=calls */
	bool verbose; /* -v: the summary's full footer */
	/* the live view: calls and ms per second since its last snapshot,
	 * by syscall nr (n_rates of them; NULL: no rate columns) */
	const double *rate_calls, *rate_ms;
	size_t n_rates;
};

int ka_report_table(FILE *out, const struct ka_model *m,
		    const struct ka_report_opts *o);
int ka_report_json(FILE *out, const struct ka_model *m,
		   const struct ka_report_opts *o);
int ka_report_csv(FILE *out, const struct ka_model *m,
		  const struct ka_report_opts *o);
int ka_report_markdown(FILE *out, const struct ka_model *m,
		       const struct ka_report_opts *o);
/* report_summary.c: strace -c's table, the waits in a block of their own */
int ka_report_summary(FILE *out, const struct ka_model *m,
		      const struct ka_report_opts *o);

/* report.c */
/* A thread's name: its records' `name`, or for the main thread the
 * image's `comm`; NULL when the trace does not say. */
const char *ka_thread_name(const struct ka_stream *s, const struct ka_thread *t);
/* The --exclude-waits line: what the profile sets aside (nothing without). */
void ka_report_aside(FILE *out, const struct ka_model *m, const char *prefix);

/* A profile of (stream, thread) (NULLs = all), sorted as o asks. */
int ka_report_profile(struct ka_profile *p, const struct ka_model *m,
		      const struct ka_stream *s, const struct ka_thread *t,
		      const struct ka_report_opts *o);
/* The same profile handed to emit, which prints it on out, then freed. */
typedef void ka_profile_emit(FILE *out, const struct ka_profile *p, const struct ka_stream *s,
			     const struct ka_thread *t, const struct ka_report_opts *o);
int ka_report_emit(FILE *out, const struct ka_model *m, const struct ka_stream *s,
		   const struct ka_thread *t, const struct ka_report_opts *o,
		   ka_profile_emit *emit);
/*
 * A time in its column's unit (ms, us) with the given decimals ("13.84");
 * a non-zero value below one unit of the last decimal gets two
 * significant digits instead ("0.00025"), so that no call that took time
 * shows as 0 (nor as twice its time, 0.001 for 0.00056).
 */
void ka_format_duration(char *buf, size_t size, double value, int decimals);
/* Rows to print: o->top or all. */
size_t ka_report_rows(const struct ka_profile *p,
		      const struct ka_report_opts *o);
/* "pid 12 (ppid 1) /bin/sh -c x" of a stream, "pid 12 thread 2 (tid 14)
 * ..." with a thread. */
void ka_report_label(char *buf, size_t size, const struct ka_stream *s,
		     const struct ka_thread *t);
/* One damage warning on stderr: "kanalyze: FILE: REASON at byte N". */
void ka_print_damage(FILE *out, const struct ka_damage_entry *d);
/* "sleep": basename of the stream's exe (or argv[0]); "no header". */
const char *ka_stream_name(const struct ka_stream *s);
/* For a stream that did not end (ka_stream_unended), what follows "ended
 * without exit: ": "killed or lost after byte 4096 of FILE". */
void ka_report_unended_why(char *buf, size_t size, const struct ka_model *m,
			   const struct ka_stream *s);
/* seen.c: what the producers saw, by hook mode, and what
 * kbpf-trace's times measure: the lines above a profile. */
void ka_report_seen(FILE *out, const struct ka_model *m);
/* The profile's footer lines (losses, coverage, what is left out), each
 * as prefix + text + "\n". */
void ka_report_footer(FILE *out, const struct ka_model *m, const char *prefix);
/* "EAGAIN 7, ENOENT 3" */
void ka_report_errnos(char *buf, size_t size, const struct ka_row *r);
void ka_model_pending(const struct ka_model *m, uint64_t *readers,
		      uint64_t *writers, uint64_t fds[KP_KINDS],
		      size_t *exited);

/* kinds.c: --by=kind sections, the four kinds (by KP_KIND_ROW) first. */
enum { KA_KIND_NONE_SECTION = KP_KINDS, KA_KIND_UNKNOWN_SECTION,
       KA_KIND_SECTIONS };
/* "file", "pipe", "socket", "other", "none", "unknown" */
const char *ka_kind_section_name(int section);
/* Whether any syscalls entry carries `kinds`. */
bool ka_model_has_kinds(const struct ka_model *m);
/* The profile of the calls in one section, sorted as o asks. */
int ka_kind_profile(struct ka_profile *p, const struct ka_model *m,
		    int section, const struct ka_report_opts *o);

#endif
