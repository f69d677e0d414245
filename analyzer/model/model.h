/* SPDX-License-Identifier: MIT */
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
#include "lanes.h"
#include "record_reader.h"
#include "record_schema.h"

struct ka_pair {
	uint64_t key;
	uint64_t value;
};

/* One call site of a syscall: the return address of the libc function. */
struct ka_site {
	uint64_t addr; /* 0: other sites, or unknown */
	uint64_t count, time_ns;
};

/* One user stack of a syscall (kbpf-trace --stacks), innermost frame first. */
struct ka_stack {
	uint64_t *pcs; /* NULL with depth 0: calls whose stack is unknown */
	size_t depth;
	uint64_t count, time_ns;
};

/* One syscalls entry of one thread's last aggregate. */
struct ka_sc_stats {
	uint64_t nr;
	KP_SC_COUNTERS(KP_SC_U64) /* record_schema.h */
	struct ka_pair *errnos; /* errno -> calls */
	size_t n_errnos;
	struct ka_pair *hist; /* bucket -> calls */
	size_t n_hist;
	struct ka_site *sites;
	size_t n_sites;
	/* `kinds`: KP_KIND_COUNTERS per descriptor kind, by KP_KIND_ROW */
	bool have_kinds;
	uint64_t kinds[KP_KINDS][KP_KIND_COUNTERS];
	/* kbpf-trace's `off_cpu_ns` (of time_ns, off CPU), with has_NAME */
	KP_SC_OPTIONAL(KP_SC_U64_HAS)
	struct ka_stack *stacks;
	size_t n_stacks;
};

/* One mapping of a stream (its `maps` records merged: model.c). */
struct ka_map {
	uint64_t start, end, offset;
	char *path, *build_id;
};

/* One call from an `events` record. */
struct ka_event {
	uint64_t start_ns, duration_ns, nr, tid;
	int64_t ret;
	int64_t fd;    /* -1: no descriptor argument, or not recorded */
	unsigned kind; /* enum kp_kind (record_schema.h); KP_KIND_NONE: none */
};

/* Record numbers (`seq`) seen in a stream, as sorted disjoint ranges. */
struct ka_seq_range {
	uint64_t first, last;
};

/* Totals of one aggregate record, kept for time series (--interval). */
struct ka_snapshot {
	uint64_t pid, stream, thread, time_ns;
	struct ka_sc_stats *sc; /* nr and the counters only */
	size_t n_sc;
};

struct ka_thread {
	uint64_t thread, tid, time_ns;
	char name[16]; /* the aggregate's `name` (comm); "": not said */
	bool exited, final;
	struct ka_sc_stats *sc;
	size_t n_sc;
};


struct ka_stream {
	uint64_t pid, stream, ppid, parent_stream, version, start_ns;
	uint64_t start_real_ns; /* the header's clock.realtime_ns; 0: not said */
	bool have_header;
	char *producer, *origin, *exe, *arch, *host, *kernel, *coverage;
	char comm[16]; /* the header's `comm`: the main thread's name at start */
	char *hook_mode; /* shim: "rewrite" or "symbols" */
	/* shim: its own syscalls (the last `own` record), nr -> calls */
	struct ka_pair *own;
	size_t n_own;
	/* shim: when its start-up began, and which of its own calls came
	 * before the stream's start (`own` record; 0, NULL: not said) */
	uint64_t own_startup_ns;
	struct ka_pair *own_startup;
	size_t n_own_startup;
	/* shim, patch mode: calls that came through Syscall User Dispatch,
	 * and the busiest sites (address -> calls) (`own` record) */
	bool dispatch;
	uint64_t dispatch_calls;
	struct ka_pair *dispatch_sites;
	size_t n_dispatch_sites;
	/* shim: calls other threads were in at the exit (`exit` record) */
	struct ka_pair *in_progress;
	size_t n_in_progress;
	char **argv;
	size_t argc;
	bool have_exit;
	bool exit_detached; /* kbpf-trace: tracing ended while it went on running */
	bool exit_after_death; /* the shim's output process wrote it: killed */
	char *exec_path; /* the image replaced itself with this (exec record) */
	/* the exec record's not_entered: why the new image cannot load the
	 * shim ("static", "setuid", ...); "": not said */
	char exec_why[24];
	/* the header's untraced_parent (pid 0: none): a parent meant to be
	 * traced that is not, its executable and why */
	uint64_t up_pid;
	char *up_exe;
	char up_why[24];
	char runtime[16];	 /* the header's runtime ("go"); "": not said */
	char *site_cache_note;	 /* the header's site_cache_note, or NULL */
	/*
	 * Where the stream's last record ends (the one with the highest seq;
	 * without seq, the last one read): a stream that did not end is
	 * reported as lost after this byte of that input. Keys are seq, or
	 * the model's record count for records without one.
	 */
	uint64_t last_key, last_end;
	size_t last_source; /* index into ka_model.sources */
	bool last_decompressed;
	/* an exec record followed by calls: the exec failed, the image went on */
	uint64_t exec_key, activity_key;
	/* a stand-in for an empty trace file named after this pid (no record) */
	char *empty_file;
	int64_t exit_status;
	uint64_t exit_signal;
	uint64_t fds[KP_KINDS];
	uint64_t pending_pipe_readers, pending_pipe_writers;
	uint64_t events; /* calls seen in events records */
	struct ka_thread *threads;
	size_t n_threads, cap_threads;
	struct ka_map *maps;
	size_t n_maps;
	uint64_t maps_time_ns;
	struct ka_seq_range *seq;
	size_t n_seq, cap_seq;
	uint64_t seq_duplicates;
	struct ka_event *event_list; /* with ka_model.keep_events */
	size_t n_event_list, cap_event_list;
	struct ka_lanes lanes; /* with ka_model.keep_lanes and not keep_events */
};

struct ka_damage_entry {
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
struct ka_source {
	char *name;
	bool live; /* a connection still open when kanalyze stopped listening */
};

/* A fork record: the child pid should have a stream of its own. */
struct ka_fork_note {
	uint64_t pid, stream, child;
	char how[24];
	bool orphan; /* no stream of the child pid in the inputs (ka_model_check_forks) */
	/* the shim's word that the child's exec cannot load it (not_entered;
	 * "": not said) and the path it exec'd */
	char why[24];
	char path[256];
};

struct ka_model {
	struct ka_stream *streams;
	size_t n_streams, cap_streams;
	uint64_t *index; /* open addressing: stream slot + 1, 0 = empty */
	size_t index_size;

	uint64_t drop_records, drop_events, drop_bytes, drops;
	char **drop_reasons; /* distinct reasons, in order of appearance */
	size_t n_drop_reasons;
	uint64_t unknown_records, records, files;

	struct ka_damage_entry *damaged;
	size_t n_damaged;

	struct ka_source *sources;
	size_t n_sources, cap_sources, last_source;
	uint64_t *source_index; /* open addressing by name: slot + 1, 0 = empty */
	size_t source_index_size;
	struct ka_fork_note *forks;
	size_t n_forks, cap_forks;
	/* the inputs should hold the whole traced tree (a directory, several
	 * files, --listen, kbpf-trace): a fork child without a stream counts */
	bool whole_tree;
	bool forks_checked;
	/* --listen connections still open at the end that sent no record */
	uint64_t silent_live;

	/* --exclude-waits: syscalls set aside (nr < 1024; NULL: none), left
	 * out of every profile, and what they held when last counted */
	const bool *set_aside;
	uint64_t aside_calls, aside_ns;

	bool keep_events;  /* store every event (timeline, event filters) */
	/* store the events by thread in bounded memory (lanes.h) unless
	 * keep_events; only those of the syscalls lane_nr holds (nr < 1024;
	 * NULL: all) */
	bool keep_lanes;
	const bool *lane_nr;
	/* let go of the longest calls of ended threads below the drawn
	 * (lanes.h) every so many calls; false when a filter applied after
	 * reading (--pid) could remove the busier ones */
	bool lanes_let_go;
	uint64_t lane_calls_since;
	bool keep_history; /* store every aggregate (time series) */
	struct ka_snapshot *history;
	size_t n_history, cap_history;
};

/* The largest errno a record may carry (larger: damage). */
#define KA_ERRNO_MAX 4095
/* Grows *array (of elem-byte items, *cap of them) to hold need: doubling,
 * from 8. 0 or -ENOMEM (the array stays as it was). */
int ka_grow(void **array, size_t *cap, size_t need, size_t elem);

void ka_model_init(struct ka_model *m);
void ka_model_free(struct ka_model *m);
/* Reader callbacks: records go into the model, damage into m->damaged. */
int ka_model_on_record(const struct kp_record *rec, void *model);
void ka_model_on_damage(const struct kp_damage *damage, void *model);

/*
 * An input without a stream start: nothing in it at all (reason says
 * why that happens). Counted as damage; when the name is the shim's
 * (EXE.PID.N.msgpack[.gz]) the process gets a stand-in stream so that
 * per-process views show it. 0 or -ENOMEM.
 */
int ka_model_note_empty(struct ka_model *m, const char *source, const char *reason);
/*
 * An input that is not a kprof trace at all: the damage entries from
 * index since on (all of them its own) are replaced by one for the whole
 * input, without a stream start. 0 or -ENOMEM.
 */
int ka_model_note_foreign(struct ka_model *m, size_t since, const char *source,
			  bool decompressed, const char *reason);
/* "N more damaged records after byte B (not listed)": the damage of one
 * input past the first few. 0 or -ENOMEM. */
int ka_model_note_damage_summary(struct ka_model *m, const char *source,
				 uint64_t offset, bool decompressed, uint64_t more);
/* A --listen connection still open when listening ended. 0 or -ENOMEM. */
int ka_model_note_live(struct ka_model *m, const char *source);
/* Whether the stream ended: exit record, or an exec nothing followed. */
bool ka_stream_ended(const struct ka_stream *s);
/* Not ended, and not the stand-in of an empty file (reported as damage). */
bool ka_stream_unended(const struct ka_stream *s);
/*
 * A stream replaced by an exec whose new image has no stream: the shim was
 * not loaded in it (a static or setuid program, one the dynamic loader
 * could not preload it into) or its trace is not among the inputs. Only
 * when the inputs hold the whole traced tree (forks_checked).
 */
bool ka_model_exec_orphan(const struct ka_model *m, const struct ka_stream *s);
/* Marks fork records whose child pid has no stream. Call before filters. */
int ka_model_check_forks(struct ka_model *m);
/* A fork record to report: its child has no stream, its parent is shown. */
bool ka_model_fork_orphan(const struct ka_model *m, const struct ka_fork_note *f);
/* Any stream of this pid (linear). */
bool ka_model_has_pid(const struct ka_model *m, uint64_t pid);

/* Streams in a stable order: by header time, then pid, then stream. */
void ka_model_sort_streams(struct ka_model *m);
/* The architecture syscall numbers of the whole trace refer to. */
const char *ka_model_arch(const struct ka_model *m);
uint64_t ka_model_processes(const struct ka_model *m); /* distinct pids */
uint64_t ka_model_threads(const struct ka_model *m);
/* The one producer/coverage of every header, or NULL when they differ. */
const char *ka_model_producer(const struct ka_model *m);
const char *ka_model_coverage(const struct ka_model *m);
/*
 * The shim's hook mode over every preload stream: "rewrite" or "symbols"
 * when all agree, "mixed" when they differ, NULL without preload streams.
 */
const char *ka_model_hook_mode(const struct ka_model *m);

/* Records missing from a stream: holes in its seq numbers (from 1 to the
 * highest seen). Returns the count; ranges (may be NULL) get the holes. */
uint64_t ka_stream_missing(const struct ka_stream *s,
			   struct ka_seq_range *holes, size_t max_holes,
			   size_t *n_holes);
/* Frees what one syscalls entry points to (errnos, hist, sites, stacks). */
void ka_sc_free(struct ka_sc_stats *sc);
/* Frees one thread's counters (its syscalls entries). */
void ka_thread_free_stats(struct ka_thread *t);
/* Removes stream i from the model (the index is rebuilt). */
void ka_model_remove_stream(struct ka_model *m, size_t i);
struct ka_stream *ka_model_find(struct ka_model *m, uint64_t pid, uint64_t id);

#endif
