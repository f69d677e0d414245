/* SPDX-License-Identifier: MIT */
/*
 * Declarations shared by the user-side files of kbpf-trace: options
 * (main.c), the BPF object's life (loader.c), the process images being
 * traced (procs.c), trace files (output.c) and turning maps and ring
 * buffers into records (collect.c).
 */
#ifndef KBPF_TRACER_H
#define KBPF_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "kbpf_trace.h"
#include "record_writer.h"

#define TOOL "kbpf-trace"

extern int verbose;
#define info(level, ...) \
	do { if (verbose >= (level)) fprintf(stderr, TOOL ": " __VA_ARGS__); } while (0)

struct options {
	pid_t *pids;
	unsigned n_pids;
	char **cmd;		/* after "--", NULL-terminated; NULL with -p */
	bool follow;
	bool per_thread;
	bool events;
	bool stacks;		/* user stacks per call, `maps` records */
	bool raw_tp;		/* force the raw_tp programs */
	unsigned interval_ms;
	double duration_s;	/* 0: until the processes are gone or a signal */
	unsigned events_buffer_kb;
	unsigned map_entries;	/* aggs; errnos a sixteenth, spills 1/64 */
	const char *out_path;
	/* --comm: trace every process of these names, until a signal */
	char comms[KBPF_COMMS_MAX][KBPF_COMM_LEN];
	unsigned n_comms;
	const char *metrics;	/* --metrics=HOST:PORT: a kanalyze exporter */
};

/* ---- loader.c ---- */
struct kbpf_trace_bpf;
struct tracer {
	struct kbpf_trace_bpf *skel;
	struct ring_buffer *rings;	/* notes */
	struct ring_buffer *event_ring;	/* --events */
	int flush_fd;			/* flush_events, --events */
	int traced_fd, aggs_fd, errnos_fd, aggs_spill_fd, errnos_spill_fd;
	int stack_traces_fd, stack_aggs_fd, stack_samples_fd, ret_slots_fd;
	bool tp_btf;		/* which program set is attached */
};
/* Open, configure, load and attach; prints the one error line itself. */
int tracer_start(struct tracer *t, const struct options *o);
void tracer_stop(struct tracer *t);
/* Every CPU's staged events into the event ring buffer (--events). */
int tracer_flush_events(struct tracer *t);
/* Adds a tgid to the traced map (flags: KBPF_PROC_*). */
int tracer_add_pid(struct tracer *t, pid_t pid, uint32_t image, uint32_t flags);
void tracer_remove_pid(struct tracer *t, pid_t pid);
/* context switches of threads in traced calls the switch program missed */
uint64_t tracer_switches_unseen(const struct tracer *t);

/* ---- aggs.c ---- */
/* One aggregation key's counters, summed over the CPUs and the maps. */
struct agg_entry {
	struct kbpf_agg_key key;
	struct kbpf_agg_value v;
	bool in_map, in_spill;	/* found in the per-CPU map, the spill map */
};
struct errno_entry {
	struct kbpf_errno_key key;
	uint64_t count;
	bool in_map, in_spill;
};
struct image;
/* The entries of image only (its listed keys, else a scan), or of every
 * image (only NULL), sorted by key: 0 or -ENOMEM (what was read is kept). */
int aggs_read(const struct tracer *t, int ncpus, const struct image *only,
	      struct agg_entry **out, size_t *n_out);
int errnos_read(const struct tracer *t, int ncpus, const struct image *only,
		struct errno_entry **out, size_t *n_out);
/* Deletes the entries read, from the maps they were in. */
void aggs_delete(const struct tracer *t, const struct agg_entry *a, size_t n_a,
		 const struct errno_entry *ev, size_t n_ev);
/* Orders struct kbpf_agg_key: tgid, image, tid, nr. */
int aggs_cmp_key(const void *a, const void *b);

/* ---- output.c ---- */
struct sink {
	int fd;
	struct kp_writer w;
	char *buf;
	uint64_t records_flushed;	/* w.records at the last good flush */
	uint64_t lost_records, lost_bytes; /* not yet reported */
	char lost_reason[128];
	unsigned users;			/* images writing here */
	bool is_socket;			/* the connection to kanalyze --listen */
	bool dead;			/* ... which was lost */
	uint64_t flushes;		/* successful flushes */
};
int output_open(const char *path);
/*
 * Called once when the listener's connection fails mid-run, after the
 * output switched to the fallback directory: every image whose sink is
 * `dead` must take a new one (output_sink) and release the dead one.
 */
void output_on_listener_lost(void (*fn)(struct sink *dead, const char *reason));
/* The sink of a new image (dir: a new file; single file: the shared one). */
struct sink *output_sink(const char *exe, pid_t pid);
void output_release(struct sink *s);
/* Hands the batch to the file; on failure remembers what was lost. */
void sink_flush(struct sink *s);
/* A connection whose listener is gone is given up now (socket_lost). */
void sink_check(struct sink *s);
void output_close(void);
bool output_is_dir(void);
const char *output_path(void);

/* ---- procs.c ---- */
struct thread_name {
	uint32_t tid;
	char name[16];
};

struct image {
	uint32_t tgid, image;
	uint64_t stream, parent_stream;
	uint32_t ppid;
	const char *origin;
	char *exe;
	char **argv;
	unsigned argc;
	struct sink *sink;
	uint64_t lost_events, lost_calls, lost_notes; /* reported so far */
	uint32_t *exited_tids;	/* -t: threads gone, their last record pending */
	unsigned n_exited, cap_exited;
	char comm[16];		/* the main thread's name at the image's start */
	struct thread_name *names; /* -t: names of threads gone, at their exit */
	unsigned n_names, cap_names;
	uint32_t *done_tids;	/* -t: threads whose `exited` record is out */
	unsigned n_done, cap_done;
	bool ended;
	bool suspect;		/* missing from the traced map: exit note lost? */
	/* at its end: the aggs and errnos entries its calls created, from
	 * its exit or exec note (kbpf_proc.keys); keys_listed false: scan */
	bool keys_listed;
	uint32_t n_keys;
	uint32_t keys[KBPF_KEYS_LISTED];
	uint64_t seq;		/* records numbered so far (`seq` key) */
	uint64_t start_ns, clock_monotonic_ns, clock_realtime_ns; /* header */
	/* Records (and calls in them) given to a connection since its last
	 * successful flush, number pending_flush: lost if it fails. */
	uint64_t pending_flush, pending_records, pending_events;
	uint64_t maps_generation; /* --stacks: of the last `maps` record + 1 */
	uint64_t events_written;  /* --events: calls written as events */
	uint64_t events_dropped;  /* ... and reported lost */
	uint64_t calls_final;	  /* calls in the final aggregates */
};
struct image *image_find(uint32_t tgid, uint32_t image);
struct image *image_new(uint32_t tgid, uint32_t image);
void image_free(struct image *im);
/* Calls fn on every live image (fn may end it). */
void images_each(void (*fn)(struct image *im, void *ctx), void *ctx);
unsigned images_live(void);
/* exe and argv from /proc (at first sight); ppid from /proc/PID/stat. */
int image_fill_from_proc(struct image *im);
void image_set_argv_from_block(struct image *im, const char *args, unsigned len);
/* Descriptors by kind and threads blocked in pipe I/O, from /proc. */
void proc_fds(pid_t pid, uint64_t fds[4]);
void proc_pending_pipes(pid_t pid, uint64_t *readers, uint64_t *writers);
bool proc_exists(pid_t pid);
uint64_t random_stream_id(void);
uint64_t now_ns(int clock);

/* ---- mappings.c (--stacks) ---- */
struct mapping {
	uint64_t start, end, offset, time_ns;
	const char *path, *build_id;
};
/* Follow every executable mapping made from now on; prints its error. */
int mappings_start(void);
void mappings_stop(void);
/* Reads what the kernel reported since the last call. */
void mappings_drain(void);
void mappings_fork(uint32_t parent, uint32_t child, uint64_t time_ns);
void mappings_exec(uint32_t tgid);
/* Adds /proc/PID/maps (a process running before tracing, a refresh). */
int mappings_read_proc(uint32_t tgid);
/* Changes whenever mappings_of(tgid) may give something else. */
uint64_t mappings_generation(uint32_t tgid);
/* The mappings that can hold tgid's code, to search in order (valid
 * until the next call). */
size_t mappings_of(uint32_t tgid, const struct mapping **out);
const struct mapping *mapping_find(const struct mapping *v, size_t n, uint64_t addr);
void mappings_free(void);

/* ---- unwind.c (--stacks) ---- */
/*
 * Where the return address of the frame executing at file_offset of path
 * is, as an offset from the stack pointer: 0 or -ENOENT (not known, or
 * not a stack-pointer-based rule).
 */
int unwind_return_slot(const char *path, uint64_t file_offset, uint64_t *sp_offset);
/* Each syscall instruction of path: fill(ctx, offset after it, its
 * function's return address slot or KBPF_NO_SLOT). */
int unwind_syscall_slots(const char *path, void (*fill)(void *ctx, uint64_t off, int32_t slot),
			 void *ctx);
void unwind_free(void);

/* ---- stacks.c (--stacks) ---- */
struct stack_entry {
	struct kbpf_stack_key key;
	uint64_t count, time_ns;
};
void stacks_init(struct tracer *t);
/* The summed counters of image (tgid, image), or of all (tgid 0), sorted
 * by aggregation key, most calls first. */
int stacks_read(uint32_t tgid, uint32_t image, struct stack_entry **out, size_t *n);
void stacks_delete(const struct stack_entry *v, size_t n);
/*
 * The `stacks` of one syscalls entry from its n counters (count and
 * time_ns: the entry's; what the counters miss goes to the empty stack).
 * *unknown is set when a frame lies in no known mapping. Valid until the
 * next call.
 */
unsigned stacks_build(uint32_t tgid, const struct stack_entry *v, size_t n,
		      uint64_t count, uint64_t time_ns,
		      const struct kp_rec_stack **out, bool *unknown);
/* A `maps` record is due: the image's mappings changed since its last. */
bool stacks_maps_changed(const struct image *im);
void stacks_write_maps(struct image *im, const struct kp_rec_common *c);
void stacks_free(void);

/* ---- collect.c ---- */
struct collector_config {
	bool per_thread;
	bool events;
	bool stacks;
	unsigned interval_ms;
};
void collector_init(struct tracer *t, const struct collector_config *c,
		    pid_t start_child);
/* Ring buffer callback for `notes` and `events`. */
int collect_note(void *ctx, void *data, size_t size);
int collect_event(void *ctx, void *data, size_t size);
/* Drains the event ring (periodic; writes when the buffer filled up). */
void collect_events_poll(void);
/* Writes the header of a stream that starts now. */
void image_begin(struct image *im, uint64_t time_ns);
/* Handles the notes queued by collect_note (after draining the rings). */
void collect_process_notes(void);
void collect_flush_events(void);
/* For events.c: an image made from the aggregation map when its note is
 * late; the common keys of its next record; what a connection would lose. */
struct image *collect_image_lazy(uint32_t tgid, uint32_t image);
struct kp_rec_common collect_common_now(struct image *im, uint64_t time_ns);
void collect_pending_add(struct image *im, uint64_t records, uint64_t events);

/* ---- events.c (--events) ---- */
void events_init(struct tracer *t, bool enabled);
/* Every event in hand, once every CPU handed over its batch: written. */
void events_write_all(void);
/* The `--` child has neither exec'd nor exited yet. */
bool collect_start_pending(void);
/* Periodic: cumulative aggregates of every live image, events, drops. */
void collect_interval(void);
/* Images whose exit note may have been lost (checked after a drain). */
void collect_check_liveness(void);
/* End of tracing: final records for every image still alive. */
void collect_finish(void);
/* Exit status of the `--` child when its exit note was seen, or -1. */
int collect_start_child_status(void);

#endif
