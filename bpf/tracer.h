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
	bool raw_tp;		/* force the raw_tp programs */
	unsigned interval_ms;
	double duration_s;	/* 0: until the processes are gone or a signal */
	unsigned events_buffer_kb;
	const char *out_path;
};

/* ---- loader.c ---- */
struct kbpf_trace_bpf;
struct tracer {
	struct kbpf_trace_bpf *skel;
	struct ring_buffer *rings;
	int traced_fd, aggs_fd, errnos_fd;
	bool tp_btf;		/* which program set is attached */
};
/* Open, configure, load and attach; prints the one error line itself. */
int tracer_start(struct tracer *t, const struct options *o);
void tracer_stop(struct tracer *t);
/* Adds a tgid to the traced map (flags: KBPF_PROC_*). */
int tracer_add_pid(struct tracer *t, pid_t pid, uint32_t image, uint32_t flags);
void tracer_remove_pid(struct tracer *t, pid_t pid);

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
	uint32_t *done_tids;	/* -t: threads whose `exited` record is out */
	unsigned n_done, cap_done;
	bool ended;
	bool suspect;		/* missing from the traced map: exit note lost? */
	uint64_t seq;		/* records numbered so far (`seq` key) */
	uint64_t start_ns, clock_monotonic_ns, clock_realtime_ns; /* header */
	/* Records (and calls in them) given to a connection since its last
	 * successful flush, number pending_flush: lost if it fails. */
	uint64_t pending_flush, pending_records, pending_events;
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

/* ---- collect.c ---- */
struct collector_config {
	bool per_thread;
	bool events;
	unsigned interval_ms;
};
void collector_init(struct tracer *t, const struct collector_config *c,
		    pid_t start_child);
/* Ring buffer callback for `notes` and `events`. */
int collect_note(void *ctx, void *data, size_t size);
int collect_event(void *ctx, void *data, size_t size);
/* Writes the header of a stream that starts now. */
void image_begin(struct image *im, uint64_t time_ns);
/* Handles the notes queued by collect_note (after draining the rings). */
void collect_process_notes(void);
void collect_flush_events(void);
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
