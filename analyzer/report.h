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

#include "model.h"

enum kp_format { KP_FORMAT_TABLE, KP_FORMAT_JSON, KP_FORMAT_CSV,
		 KP_FORMAT_MARKDOWN };
enum kp_by { KP_BY_SYSCALL, KP_BY_PROCESS, KP_BY_THREAD, KP_BY_KIND };

struct kp_report_opts {
	enum kp_format format;
	enum kp_by by;
	enum kp_sort sort;
	size_t top; /* rows per table, 0 = all */
	bool top_given; /* --top on the command line (--sites has its own default) */
	bool errors;
	bool percentiles;
	bool live; /* a --listen snapshot: streams without exit are running */
};

int kp_report_table(FILE *out, const struct kp_model *m,
		    const struct kp_report_opts *o);
int kp_report_json(FILE *out, const struct kp_model *m,
		   const struct kp_report_opts *o);
int kp_report_csv(FILE *out, const struct kp_model *m,
		  const struct kp_report_opts *o);
int kp_report_markdown(FILE *out, const struct kp_model *m,
		       const struct kp_report_opts *o);

/* report.c */

/* A profile of (stream, thread) (NULLs = all), sorted as o asks. */
int kp_report_profile(struct kp_profile *p, const struct kp_model *m,
		      const struct kp_stream *s, const struct kp_thread *t,
		      const struct kp_report_opts *o);
/*
 * A time in its column's unit (ms, us) with the given decimals ("13.84");
 * a non-zero value below one unit of the last decimal gets two
 * significant digits instead ("0.00025"), so that no call that took time
 * shows as 0 (nor as twice its time, 0.001 for 0.00056).
 */
void kp_format_duration(char *buf, size_t size, double value, int decimals);
/* Rows to print: o->top or all. */
size_t kp_report_rows(const struct kp_profile *p,
		      const struct kp_report_opts *o);
/* "pid 12 (ppid 1) /bin/sh -c x" of a stream, "pid 12 thread 2 (tid 14)
 * ..." with a thread. */
void kp_report_label(char *buf, size_t size, const struct kp_stream *s,
		     const struct kp_thread *t);
/* One damage warning on stderr: "kanalyze: FILE: REASON at byte N". */
void kp_print_damage(FILE *out, const struct kp_damage_entry *d);
/* "sleep": basename of the stream's exe (or argv[0]); "no header". */
const char *kp_stream_name(const struct kp_stream *s);
/* For a stream that did not end (kp_stream_unended), what follows "ended
 * without exit: ": "killed or lost after byte 4096 of FILE". */
void kp_report_unended_why(char *buf, size_t size, const struct kp_model *m,
			   const struct kp_stream *s);
/* The footer lines of DESIGN.md and more, each as prefix + text + "\n". */
void kp_report_footer(FILE *out, const struct kp_model *m, const char *prefix);
/* "EAGAIN 7, ENOENT 3" */
void kp_report_errnos(char *buf, size_t size, const struct kp_row *r);
void kp_model_pending(const struct kp_model *m, uint64_t *readers,
		      uint64_t *writers, uint64_t fds[KP_FD_KINDS],
		      size_t *exited);

/* kinds.c: --by=kind sections, the four kinds (enum kp_fd_kind) first. */
enum { KP_KIND_NONE_SECTION = KP_FD_KINDS, KP_KIND_UNKNOWN_SECTION,
       KP_KIND_SECTIONS };
/* "file", "pipe", "socket", "other", "none", "unknown" */
const char *kp_kind_section_name(int section);
/* Whether any syscalls entry carries `kinds`. */
bool kp_model_has_kinds(const struct kp_model *m);
/* The profile of the calls in one section, sorted as o asks. */
int kp_kind_profile(struct kp_profile *p, const struct kp_model *m,
		    int section, const struct kp_report_opts *o);

#endif
