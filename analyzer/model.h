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
	char **argv;
	size_t argc;
	bool have_exit;
	char *exec_path; /* the image replaced itself with this (exec record) */
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
	char *reason;
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
