/*
 * What kanalyze knows after reading the traces: streams (one per process
 * image, keyed by pid + stream id), their threads' last aggregates, exit
 * and drop records; and the merged per-syscall rows the reports print.
 * Kept apart from the reports so that every output format shows the same
 * numbers, and from the decoder so that the decoder stays reusable.
 */
#ifndef KANALYZE_MODEL_H
#define KANALYZE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "record_reader.h"

struct kp_pair {
	uint64_t key;
	uint64_t value;
};

/* One call site of a syscall: the return address of the libc function. */
struct kp_site {
	uint64_t addr; /* 0: other sites, or unknown */
	uint64_t count, time_ns;
};

/* One user stack of a syscall (kbpf-trace --stacks), innermost frame first. */
struct kp_stack {
	uint64_t *pcs; /* NULL with depth 0: calls whose stack is unknown */
	size_t depth;
	uint64_t count, time_ns;
};

/* One syscalls entry of one thread's last aggregate. */
struct kp_sc_stats {
	uint64_t nr, count, time_ns, min_ns, max_ns, retries, errors;
	struct kp_pair *errnos; /* errno -> calls */
	size_t n_errnos;
	struct kp_pair *hist; /* bucket -> calls */
	size_t n_hist;
	struct kp_site *sites;
	size_t n_sites;
	/* `kinds`: [count, time_ns, retries, errors] per enum kp_fd_kind */
	bool have_kinds;
	uint64_t kinds[4][4];
	struct kp_stack *stacks;
	size_t n_stacks;
};

/* One mapping of a stream (its `maps` records merged: model.c). */
struct kp_map {
	uint64_t start, end, offset;
	char *path, *build_id;
};

/* One call from an `events` record. */
struct kp_event {
	uint64_t start_ns, duration_ns, nr, tid;
	int64_t ret;
	int64_t fd;    /* -1: no descriptor argument, or not recorded */
	unsigned kind; /* 0: none; else enum kp_fd_kind + 1 */
};

/* Record numbers (`seq`) seen in a stream, as sorted disjoint ranges. */
struct kp_seq_range {
	uint64_t first, last;
};

/* Totals of one aggregate record, kept for time series (--interval). */
struct kp_snapshot {
	uint64_t pid, stream, thread, time_ns;
	struct kp_sc_stats *sc; /* only nr, count, time_ns, retries, errors */
	size_t n_sc;
};

struct kp_thread {
	uint64_t thread, tid, time_ns;
	bool exited, final;
	struct kp_sc_stats *sc;
	size_t n_sc;
};

enum kp_fd_kind { KP_FD_FILE, KP_FD_PIPE, KP_FD_SOCKET, KP_FD_OTHER, KP_FD_KINDS };
extern const char *const kp_fd_kind_names[KP_FD_KINDS];

struct kp_stream {
	uint64_t pid, stream, ppid, parent_stream, version, start_ns;
	bool have_header;
	char *producer, *origin, *exe, *arch, *host, *kernel, *coverage;
	char *hook_mode; /* shim: "rewrite" or "symbols" */
	/* shim: its own syscalls (the last `own` record), nr -> calls */
	struct kp_pair *own;
	size_t n_own;
	/* shim: when its start-up began, and which of its own calls came
	 * before the stream's start (`own` record; 0, NULL: not said) */
	uint64_t own_startup_ns;
	struct kp_pair *own_startup;
	size_t n_own_startup;
	/* shim: calls other threads were in at the exit (`exit` record) */
	struct kp_pair *in_progress;
	size_t n_in_progress;
	char **argv;
	size_t argc;
	bool have_exit;
	bool exit_detached; /* kbpf-trace: tracing ended while it went on running */
	bool exit_after_death; /* the shim's output process wrote it: killed */
	char *exec_path; /* the image replaced itself with this (exec record) */
	/*
	 * Where the stream's last record ends (the one with the highest seq;
	 * without seq, the last one read): a stream that did not end is
	 * reported as lost after this byte of that input. Keys are seq, or
	 * the model's record count for records without one.
	 */
	uint64_t last_key, last_end;
	size_t last_source; /* index into kp_model.sources */
	bool last_decompressed;
	/* an exec record followed by calls: the exec failed, the image went on */
	uint64_t exec_key, activity_key;
	/* a stand-in for an empty trace file named after this pid (no record) */
	char *empty_file;
	int64_t exit_status;
	uint64_t exit_signal;
	uint64_t fds[KP_FD_KINDS];
	uint64_t pending_pipe_readers, pending_pipe_writers;
	uint64_t events; /* calls seen in events records */
	struct kp_thread *threads;
	size_t n_threads, cap_threads;
	struct kp_map *maps;
	size_t n_maps;
	uint64_t maps_time_ns;
	struct kp_seq_range *seq;
	size_t n_seq, cap_seq;
	uint64_t seq_duplicates;
	struct kp_event *event_list; /* with kp_model.keep_events */
	size_t n_event_list, cap_event_list;
};

struct kp_damage_entry {
	char *file;
	uint64_t offset;
	bool decompressed;
	/* no stream starts in this input: empty, or its first record is not
	 * a header (--strict fails on these) */
	bool no_start;
	bool whole_input; /* the reason is about the input, not a byte of it */
	char *reason;
};

/* An input records came from (a file, or a --listen connection). */
struct kp_source {
	char *name;
	bool live; /* a connection still open when kanalyze stopped listening */
};

/* A fork record: the child pid should have a stream of its own. */
struct kp_fork_note {
	uint64_t pid, stream, child;
	char how[24];
	bool orphan; /* no stream of the child pid in the inputs (kp_model_check_forks) */
};

struct kp_model {
	struct kp_stream *streams;
	size_t n_streams, cap_streams;
	uint64_t *index; /* open addressing: stream slot + 1, 0 = empty */
	size_t index_size;

	uint64_t drop_records, drop_events, drop_bytes, drops;
	char **drop_reasons; /* distinct reasons, in order of appearance */
	size_t n_drop_reasons;
	uint64_t unknown_records, records, files;

	struct kp_damage_entry *damaged;
	size_t n_damaged;

	struct kp_source *sources;
	size_t n_sources, cap_sources, last_source;
	uint64_t *source_index; /* open addressing by name: slot + 1, 0 = empty */
	size_t source_index_size;
	struct kp_fork_note *forks;
	size_t n_forks, cap_forks;
	/* the inputs should hold the whole traced tree (a directory, several
	 * files, --listen, kbpf-trace): a fork child without a stream counts */
	bool whole_tree;
	bool forks_checked;
	/* --listen connections still open at the end that sent no record */
	uint64_t silent_live;

	bool keep_events;  /* store every event (timeline, event filters) */
	bool keep_history; /* store every aggregate (time series) */
	struct kp_snapshot *history;
	size_t n_history, cap_history;
};

/* One merged line of a profile. */
struct kp_row {
	uint64_t nr;
	char name[40];
	uint64_t count, time_ns, min_ns, max_ns, retries, errors;
	uint64_t p50_ns, p90_ns, p99_ns;
	struct kp_pair *errnos; /* sorted by errno */
	size_t n_errnos;
	struct kp_hist hist;
	/* min/max, percentiles and errno are not known for every call (a
	 * --by=kind row: the `kinds` counters have none of them) */
	bool no_latency;
};

struct kp_profile {
	struct kp_row *rows;
	size_t n_rows;
	struct kp_row total; /* name "TOTAL"; errno and hist merged too */
};

void kp_model_init(struct kp_model *m);
void kp_model_free(struct kp_model *m);
/* Reader callbacks: records go into the model, damage into m->damaged. */
int kp_model_on_record(const struct kp_record *rec, void *model);
void kp_model_on_damage(const struct kp_damage *damage, void *model);

/*
 * An input without a stream start: nothing in it at all (reason says
 * why that happens). Counted as damage; when the name is the shim's
 * (EXE.PID.N.msgpack[.gz]) the process gets a stand-in stream so that
 * per-process views show it. 0 or -ENOMEM.
 */
int kp_model_note_empty(struct kp_model *m, const char *source, const char *reason);
/*
 * An input that is not a kprof trace at all: the damage entries from
 * index since on (all of them its own) are replaced by one for the whole
 * input, without a stream start. 0 or -ENOMEM.
 */
int kp_model_note_foreign(struct kp_model *m, size_t since, const char *source,
			  bool decompressed, const char *reason);
/* "N more damaged records after byte B (not listed)": the damage of one
 * input past the first few. 0 or -ENOMEM. */
int kp_model_note_damage_summary(struct kp_model *m, const char *source,
				 uint64_t offset, bool decompressed, uint64_t more);
/* A --listen connection still open when listening ended. 0 or -ENOMEM. */
int kp_model_note_live(struct kp_model *m, const char *source);
/* Whether the stream ended: exit record, or an exec nothing followed. */
bool kp_stream_ended(const struct kp_stream *s);
/* Not ended, and not the stand-in of an empty file (reported as damage). */
bool kp_stream_unended(const struct kp_stream *s);
/* Marks fork records whose child pid has no stream. Call before filters. */
int kp_model_check_forks(struct kp_model *m);
/* A fork record to report: its child has no stream, its parent is shown. */
bool kp_model_fork_orphan(const struct kp_model *m, const struct kp_fork_note *f);
/* Any stream of this pid (linear). */
bool kp_model_has_pid(const struct kp_model *m, uint64_t pid);

/* Streams in a stable order: by header time, then pid, then stream. */
void kp_model_sort_streams(struct kp_model *m);
/* The architecture syscall numbers of the whole trace refer to. */
const char *kp_model_arch(const struct kp_model *m);
uint64_t kp_model_processes(const struct kp_model *m); /* distinct pids */
uint64_t kp_model_threads(const struct kp_model *m);
/* The one producer/coverage of every header, or NULL when they differ. */
const char *kp_model_producer(const struct kp_model *m);
const char *kp_model_coverage(const struct kp_model *m);
/*
 * The shim's hook mode over every preload stream: "rewrite" or "symbols"
 * when all agree, "mixed" when they differ, NULL without preload streams.
 */
const char *kp_model_hook_mode(const struct kp_model *m);

/*
 * Merge threads into rows. stream NULL = every stream; thread NULL = all
 * threads of the selected streams. Rows come out sorted by nr.
 */
int kp_profile_build(struct kp_profile *p, const struct kp_model *m,
		     const struct kp_stream *stream,
		     const struct kp_thread *thread);
void kp_profile_free(struct kp_profile *p);

enum kp_sort { KP_SORT_TIME, KP_SORT_COUNT, KP_SORT_AVG, KP_SORT_RETRIES,
	       KP_SORT_ERRORS, KP_SORT_NAME };
void kp_profile_sort(struct kp_profile *p, enum kp_sort by);

/* Records missing from a stream: holes in its seq numbers (from 1 to the
 * highest seen). Returns the count; ranges (may be NULL) get the holes. */
uint64_t kp_stream_missing(const struct kp_stream *s,
			   struct kp_seq_range *holes, size_t max_holes,
			   size_t *n_holes);
/* Frees what one syscalls entry points to (errnos, hist, sites, stacks). */
void kp_sc_free(struct kp_sc_stats *sc);
/* Frees one thread's counters (its syscalls entries). */
void kp_thread_free_stats(struct kp_thread *t);
/* Removes stream i from the model (the index is rebuilt). */
void kp_model_remove_stream(struct kp_model *m, size_t i);
struct kp_stream *kp_model_find(struct kp_model *m, uint64_t pid, uint64_t id);

/* "EAGAIN", or "errno_N" into buf for numbers without a name. */
const char *kp_errno_name(uint64_t err, char *buf, size_t size);

#endif
