/* SPDX-License-Identifier: MIT */
/*
 * From kernel data to records: sums the per-CPU aggregation maps into
 * cumulative `aggregate` records, turns lifecycle notes into `fork`,
 * `exec`, `exit` records and new streams (events.c batches the ring
 * buffer's events into `events` records), and reports every loss as a
 * `drop` record.
 *
 * Notes are queued by the ring buffer callback and handled after the
 * rings are drained, so that the events of an image that ends are all in
 * hand (submitted before its note) when its last records are written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "histogram.h"
#include "kbpf_trace.h"
#include "syscalls.h"
#include "tracer.h"

#define COVERAGE "every syscall of the traced processes, from the kernel side"

_Static_assert(KBPF_HIST_BUCKETS == KP_HIST_BUCKETS, "histogram size");
_Static_assert(KBPF_SYSCALL_MAX == KP_SYSCALL_MAX, "syscall table size");

static struct tracer *tr;
static struct collector_config cfg;
static pid_t start_child;
static int start_child_status = -1;
static int ncpus;
static struct utsname uts;

static void on_listener_lost(struct sink *dead, const char *reason);


/* Notes waiting for the rings to be drained. */
static struct kbpf_note_exec *queue;
static size_t n_queued, cap_queued;

void collector_init(struct tracer *t, const struct collector_config *c,
		    pid_t child)
{
	tr = t;
	cfg = *c;
	start_child = child;
	ncpus = libbpf_num_possible_cpus();
	uname(&uts);
	output_on_listener_lost(on_listener_lost);
	events_init(t, cfg.events);
	if (cfg.stacks)
		stacks_init(t);

}

int collect_start_child_status(void)
{
	return start_child_status;
}

/* What a connection to a listener would lose if its batch failed. */
void collect_pending_add(struct image *im, uint64_t records, uint64_t events)
{
	struct sink *s = im->sink;
	if (!s || !s->is_socket)
		return;
	if (im->pending_flush != s->flushes) {
		/* a flush since the last record: those arrived */
		im->pending_flush = s->flushes;
		im->pending_records = im->pending_events = 0;
	}
	im->pending_records += records;
	im->pending_events += events;
}

struct kp_rec_common collect_common_now(struct image *im, uint64_t time_ns)
{
	collect_pending_add(im, 1, 0);
	struct kp_rec_common c = {
		.seq = ++im->seq,
		.pid = im->tgid,
		.stream = im->stream,
		.time_ns = time_ns ? time_ns : now_ns(CLOCK_MONOTONIC),
	};
	return c;
}

/*
 * Losses by reason over the whole run, said on stderr at its end: a trace
 * with drop records never ends silently.
 */
#define LOSS_REASONS 8
static struct loss_tally {
	char reason[128];
	uint64_t records, events, bytes, images;
	uint32_t last_tgid, last_image;
	bool others;	/* the last one: other reasons added to it */
} losses[LOSS_REASONS];

static void write_drop_record(struct image *im, const struct kp_rec_drop *d)
{
	kp_rec_drop(&im->sink->w, d);
	struct loss_tally *t = NULL;
	for (int i = 0; i < LOSS_REASONS && !t; i++)
		if (!losses[i].reason[0] || strcmp(losses[i].reason, d->reason) == 0)
			t = &losses[i];
	if (!t) {
		t = &losses[LOSS_REASONS - 1];
		t->others = true;
	}
	if (!t->reason[0])
		snprintf(t->reason, sizeof(t->reason), "%s", d->reason);
	t->records += d->records;
	t->events += d->events;
	t->bytes += d->bytes;
	if (t->images == 0 || t->last_tgid != im->tgid || t->last_image != im->image) {
		t->images++;
		t->last_tgid = im->tgid;
		t->last_image = im->image;
	}
}

static void say_losses(void)
{
	for (int i = 0; i < LOSS_REASONS && losses[i].reason[0]; i++) {
		const struct loss_tally *t = &losses[i];
		fprintf(stderr, TOOL ": the trace is incomplete: lost %llu calls, %llu records",
			(unsigned long long)t->events, (unsigned long long)t->records);
		if (t->bytes)
			fprintf(stderr, " (%llu bytes)", (unsigned long long)t->bytes);
		fprintf(stderr, " in %llu process image%s: %s%s\n",
			(unsigned long long)t->images, t->images == 1 ? "" : "s",
			t->others ? "(and others) " : "", t->reason);
	}
}

/* A drop record for whatever the image's file lost since the last one. */
static void report_sink_loss(struct image *im)
{
	struct sink *s = im->sink;
	if (!s || !s->lost_records)
		return;
	struct kp_rec_drop d = {
		.c = collect_common_now(im, 0),
		.records = s->lost_records,
		.bytes = s->lost_bytes,
		.reason = s->lost_reason,
	};
	s->lost_records = s->lost_bytes = 0;
	write_drop_record(im, &d);
}

static void write_header(struct image *im)
{
	struct kp_rec_header h = {
		.c = collect_common_now(im, im->start_ns),
		.producer = "bpf",
		.ppid = im->ppid,
		.origin = im->origin,
		.parent_stream = im->parent_stream,
		.exe = im->exe ? im->exe : "",
		.comm = im->comm[0] ? im->comm : NULL,
		.argv = (const char *const *)im->argv,
		.argc = im->argc,
		.host = uts.nodename,
		.kernel = uts.release,
		.arch = kp_host_arch(),
		.monotonic_ns = im->clock_monotonic_ns,
		.realtime_ns = im->clock_realtime_ns,
		.hook_mode = NULL,
		.coverage = COVERAGE,
		.events = cfg.events,
		.interval_ms = cfg.interval_ms,
	};
	kp_rec_header(&im->sink->w, &h);
}

/* A thread's name now, from /proc; "" once the thread is gone. */
static void proc_comm(uint32_t tgid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", (unsigned)tgid, (unsigned)tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", (unsigned)tgid);
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	n = n > 0 ? n : 0;
	if (n && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
}

/* The name of thread tid of im: at its exit (the note), or now. */
static const char *thread_name(struct image *im, uint32_t tid, char *buf, size_t size)
{
	for (unsigned i = 0; i < im->n_names; i++)
		if (im->names[i].tid == tid)
			return im->names[i].name;
	proc_comm(im->tgid, tid, buf, size);
	return buf[0] ? buf : NULL;
}

static void note_thread_name(struct image *im, uint32_t tid, const char *comm)
{
	if (im->n_names == im->cap_names) {
		unsigned cap = im->cap_names ? 2 * im->cap_names : 8;
		void *p = realloc(im->names, cap * sizeof(*im->names));
		if (!p)
			return;
		im->names = p;
		im->cap_names = cap;
	}
	struct thread_name *t = &im->names[im->n_names++];
	t->tid = tid;
	memcpy(t->name, comm, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = 0;
}

void image_begin(struct image *im, uint64_t time_ns)
{
	if (!im->exe)
		image_fill_from_proc(im);
	if (!im->comm[0])
		proc_comm(im->tgid, 0, im->comm, sizeof(im->comm));
	im->sink = output_sink(im->exe, (pid_t)im->tgid);
	if (!im->sink)
		return;
	im->clock_monotonic_ns = now_ns(CLOCK_MONOTONIC);
	im->clock_realtime_ns = now_ns(CLOCK_REALTIME);
	im->start_ns = time_ns ? time_ns : im->clock_monotonic_ns;
	write_header(im);
	sink_flush(im->sink);
	info(1, "stream %016llx: pid %u (%s), origin %s\n",
	     (unsigned long long)im->stream, im->tgid, im->exe ? im->exe : "?",
	     im->origin);
}

/* An image whose note was lost: it still gets a stream. */
struct image *collect_image_lazy(uint32_t tgid, uint32_t image)
{
	struct image *im = image_find(tgid, image);
	if (im)
		return im;
	im = image_new(tgid, image);
	if (!im)
		return NULL;
	im->origin = image == 1 ? "fork" : "exec";
	image_fill_from_proc(im);
	image_begin(im, 0);
	return im;
}

/* ------------------------------------------------------------ aggregates */

static bool tid_in(const uint32_t *set, unsigned n, uint32_t tid)
{
	for (unsigned i = 0; i < n; i++)
		if (set[i] == tid)
			return true;
	return false;
}

static void tid_add(uint32_t **set, unsigned *n, unsigned *cap, uint32_t tid)
{
	if (tid_in(*set, *n, tid))
		return;
	if (*n == *cap) {
		unsigned ncap = *cap ? 2 * *cap : 16;
		uint32_t *ns = realloc(*set, ncap * sizeof(**set));
		if (!ns)
			return;
		*set = ns;
		*cap = ncap;
	}
	(*set)[(*n)++] = tid;
}

/* Errno and stack counters in aggregation key order, with cursors. */
struct side_data {
	const struct errno_entry *ev;
	size_t n_ev, e;
	const struct stack_entry *st;
	size_t n_st, s;
};

/*
 * One `aggregate` record per (image, thread) group of entries [i, j).
 */
static void write_group(struct image *im, const struct agg_entry *a, size_t i,
			size_t j, struct side_data *sd, bool final,
			bool process_exited)
{
	const struct errno_entry *ev = sd->ev;
	size_t n_ev = sd->n_ev, *e = &sd->e;
	uint32_t tid = a[i].key.tid;
	bool exited = cfg.per_thread ? tid_in(im->exited_tids, im->n_exited, tid)
				     : process_exited;
	if (cfg.per_thread && tid_in(im->done_tids, im->n_done, tid))
		return;
	struct kp_rec_common c = collect_common_now(im, 0);
	char buf[16];
	const char *name = cfg.per_thread ? thread_name(im, tid, buf, sizeof(buf)) : NULL;
	kp_rec_aggregate_begin(&im->sink->w, &c, tid, tid, name, exited || process_exited,
			       final, (unsigned)(j - i));
	for (size_t k = i; k < j; k++) {
		uint32_t err_value[64];
		uint64_t err_count[64];
		unsigned n_err = 0;
		while (*e < n_ev && aggs_cmp_key(&ev[*e].key.agg, &a[k].key) < 0)
			(*e)++;
		while (*e < n_ev && aggs_cmp_key(&ev[*e].key.agg, &a[k].key) == 0) {
			if (n_err < 64) {
				err_value[n_err] = ev[*e].key.error;
				err_count[n_err] = ev[*e].count;
				n_err++;
			}
			(*e)++;
		}
		struct kp_rec_syscall s = {
			.nr = a[k].key.nr,
			.n_errno = n_err,
			.errno_value = err_value,
			.errno_count = err_count,
			.hist64 = (const uint64_t *)a[k].v.hist,
			.kinds = (const uint64_t (*)[KP_KIND_COUNTERS])a[k].v.kinds,
			.has_off_cpu_ns = tr->tp_btf,
		};
#define COUNTER(name, merge) s.name = a[k].v.name;
		KP_SC_COUNTERS(COUNTER)
		KP_SC_OPTIONAL(COUNTER)
#undef COUNTER
		if (cfg.stacks) {
			while (sd->s < sd->n_st && aggs_cmp_key(&sd->st[sd->s].key.agg, &a[k].key) < 0)
				sd->s++;
			size_t first = sd->s;
			while (sd->s < sd->n_st && aggs_cmp_key(&sd->st[sd->s].key.agg, &a[k].key) == 0)
				sd->s++;
			bool unknown = false;
			s.n_stacks = stacks_build(im->tgid, sd->st + first, sd->s - first,
						  s.count, s.time_ns, &s.stacks, &unknown);
		}
		kp_rec_syscall(&im->sink->w, &s);
	}
	if (cfg.per_thread && exited)
		tid_add(&im->done_tids, &im->n_done, &im->cap_done, tid);
}

/*
 * Cumulative aggregates of one image (final) or of every live image, then
 * for a final one the map entries are deleted: nothing adds to them.
 */
/*
 * --stacks: before an image's aggregates, its `maps` record when its
 * mappings changed; a frame no mapping covers makes /proc/PID/maps be read
 * again first (a library loaded before tracing or a lost mmap2 record).
 */
static void stacks_prepare(struct image *im, const struct side_data *sd)
{
	size_t s = sd->s;
	while (s < sd->n_st && (sd->st[s].key.agg.tgid < im->tgid ||
				(sd->st[s].key.agg.tgid == im->tgid &&
				 sd->st[s].key.agg.image < im->image)))
		s++;
	size_t first = s;
	while (s < sd->n_st && sd->st[s].key.agg.tgid == im->tgid &&
	       sd->st[s].key.agg.image == im->image)
		s++;
	bool unknown = false;
	const struct kp_rec_stack *unused;
	if (s > first)
		stacks_build(im->tgid, sd->st + first, s - first, 0, 0, &unused, &unknown);
	if (unknown && proc_exists((pid_t)im->tgid))
		mappings_read_proc(im->tgid);
	if (stacks_maps_changed(im)) {
		struct kp_rec_common c = collect_common_now(im, 0);
		stacks_write_maps(im, &c);
	}
}

/*
 * With only NULL: every image's entries; those of an image not known yet
 * are left alone unless lazy: its fork or exec note may still be on its
 * way (user space reading notes behind the kernel), and an image made
 * from /proc now has no name when the process is gone (then its note
 * finds it made and leaves it nameless). At the end (lazy) they are
 * images whose notes were lost.
 */
static void write_aggregates_of(struct image *only, bool final, bool exited, bool lazy)
{
	struct agg_entry *a = NULL;
	struct side_data sd = { 0 };
	struct errno_entry *ev = NULL;
	struct stack_entry *st = NULL;
	size_t n_a = 0, n_ev = 0, n_st = 0;
	bool wrote_only = false;
	const struct image *last_maps = NULL;

	if (aggs_read(tr, ncpus, only, &a, &n_a) || errnos_read(tr, ncpus, only, &ev, &n_ev) ||
	    (cfg.stacks && stacks_read(only ? only->tgid : 0, only ? only->image : 0,
				       &st, &n_st)))
		fprintf(stderr, TOOL ": out of memory reading the aggregates\n");
	sd.ev = ev;
	sd.n_ev = n_ev;
	sd.st = st;
	sd.n_st = n_st;
	for (size_t i = 0; i < n_a;) {
		size_t j = i;
		while (j < n_a && a[j].key.tgid == a[i].key.tgid &&
		       a[j].key.image == a[i].key.image && a[j].key.tid == a[i].key.tid)
			j++;
		struct image *im = only ? only :
				lazy ? collect_image_lazy(a[i].key.tgid, a[i].key.image) :
				       image_find(a[i].key.tgid, a[i].key.image);
		if (im && im->sink && !im->ended) {
			report_sink_loss(im);
			if (cfg.stacks && im != last_maps) {
				stacks_prepare(im, &sd);
				last_maps = im;
			}
			write_group(im, a, i, j, &sd, final, exited);
			wrote_only = true;
		}
		i = j;
	}
	if (only && !wrote_only && only->sink) {
		/* Not one call: the stream still gets its final aggregate. */
		struct kp_rec_common c = collect_common_now(only, 0);
		kp_rec_aggregate_begin(&only->sink->w, &c, 0, 0, NULL, exited, final, 0);
	}
	if (only && final) {
		only->calls_final = 0;
		for (size_t i = 0; i < n_a; i++)
			only->calls_final += a[i].v.count;
		aggs_delete(tr, a, n_a, ev, n_ev);
		if (cfg.stacks)
			stacks_delete(st, n_st);
	}
	free(a);
	free(ev);
	free(st);
}

static void write_aggregates(struct image *only, bool final, bool exited)
{
	write_aggregates_of(only, final, exited, false);
}

/* ----------------------------------------------------------------- drops */

static void write_drop(struct image *im, uint64_t records, uint64_t events,
		       const char *reason)
{
	struct kp_rec_drop d = {
		.c = collect_common_now(im, 0),
		.records = records,
		.events = events,
		.reason = reason,
	};
	write_drop_record(im, &d);
	info(1, "pid %u: lost %llu records, %llu calls: %s\n", im->tgid,
	     (unsigned long long)records, (unsigned long long)events, reason);
}

/* Reports the growth of the tgid's loss counters since the last report. */
static void report_kernel_losses(struct image *im, uint64_t lost_events,
				 uint64_t lost_calls, uint64_t lost_notes)
{
	if (!im->sink)
		return;
	if (lost_events > im->lost_events) {
		write_drop(im, 0, lost_events - im->lost_events, "ring buffer full");
		im->events_dropped += lost_events - im->lost_events;
	}
	if (lost_calls > im->lost_calls)
		write_drop(im, 0, lost_calls - im->lost_calls,
			   "calls not counted: aggregation maps full, or task storage refused");
	if (lost_notes > im->lost_notes)
		write_drop(im, lost_notes - im->lost_notes, 0,
			   "notification ring buffer full");
	im->lost_events = lost_events > im->lost_events ? lost_events : im->lost_events;
	im->lost_calls = lost_calls > im->lost_calls ? lost_calls : im->lost_calls;
	im->lost_notes = lost_notes > im->lost_notes ? lost_notes : im->lost_notes;
}

static void report_from_map(struct image *im)
{
	struct kbpf_proc p;
	uint32_t key = im->tgid;
	if (bpf_map_lookup_elem(tr->traced_fd, &key, &p) == 0)
		report_kernel_losses(im, p.lost_events, p.lost_calls, p.lost_notes);
}

/*
 * At an image's end every call it made is either an event written or a
 * reported drop; events the kernel could not charge to a live process
 * (its batch failed after it exited) are reported here.
 */
static void reconcile_events(struct image *im)
{
	if (!cfg.events || !im->sink)
		return;
	/*
	 * A thread exit_group killed ends its last call (a futex wait, say)
	 * at its own exit, which can run on another CPU after the exit note
	 * (a preempted vCPU): the final aggregates count it, its event was
	 * staged after the flush before them. Flushed again, it is written.
	 */
	uint64_t before = im->events_written;
	for (int i = 0; i < 5 && im->calls_final > im->events_written + im->events_dropped; i++) {
		if (i) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
		collect_flush_events();
	}
	if (im->events_written > before)
		info(1, "pid %u: %llu events staged after its exit note, written late\n",
		     im->tgid, (unsigned long long)(im->events_written - before));
	uint64_t accounted = im->events_written + im->events_dropped;
	if (im->calls_final > accounted) {
		write_drop(im, 0, im->calls_final - accounted, "ring buffer full");
		im->events_dropped += im->calls_final - accounted;
	}
}

/* ------------------------------------------------------------- lifecycle */

static void image_end(struct image *im)
{
	if (im->sink)
		sink_flush(im->sink);
	im->ended = true;
	image_free(im);
}

static void copy_identity(struct image *to, const struct image *from)
{
	if (from->exe)
		to->exe = strdup(from->exe);
	if (from->argc) {
		to->argv = calloc(from->argc + 1, sizeof(*to->argv));
		if (to->argv) {
			for (unsigned i = 0; i < from->argc; i++)
				to->argv[i] = strdup(from->argv[i]);
			to->argc = from->argc;
		}
	}
}

static const char *how_name(uint32_t nr)
{
	const char *name = nr == (uint32_t)-1 ? NULL : kp_syscall_name(NULL, nr);
	return name ? name : "clone";
}

static void on_fork_note(const struct kbpf_note *n)
{
	if (cfg.stacks)
		mappings_fork(n->tgid, n->child, n->time_ns);
	struct image *parent = collect_image_lazy(n->tgid, n->image);
	if (parent && parent->sink) {
		struct kp_rec_common c = collect_common_now(parent, n->time_ns);
		kp_rec_fork(&parent->sink->w, &c, n->child, how_name(n->how_nr));
		sink_flush(parent->sink);
	}
	if (image_find(n->child, 1))
		return;
	struct image *child = image_new(n->child, 1);
	if (!child)
		return;
	child->origin = "fork";
	child->ppid = n->tgid;
	if (parent) {
		child->parent_stream = parent->stream;
		copy_identity(child, parent);
	} else {
		image_fill_from_proc(child);
	}
	image_begin(child, n->time_ns);
}

static void end_image(struct image *im, bool exited)
{
	/*
	 * A listener that went away since the last batch is noticed now,
	 * not when the image's final records (which nothing can write
	 * again: the kernel's counters are deleted) go down with it.
	 */
	if (im->sink && im->sink->is_socket) {
		sink_flush(im->sink);
		if (im->sink->is_socket)
			sink_check(im->sink);
	}
	collect_flush_events();
	write_aggregates(im, true, exited);
}

/* The entries the image's calls created, as its exit or exec note lists them. */
static void take_keys(struct image *im, const struct kbpf_note *n)
{
	im->keys_listed = n->n_keys <= KBPF_KEYS_LISTED;
	im->n_keys = im->keys_listed ? n->n_keys : 0;
	memcpy(im->keys, n->keys, im->n_keys * sizeof(im->keys[0]));
}

static void on_exec_note(const struct kbpf_note_exec *x)
{
	const struct kbpf_note *n = &x->note;
	struct image *old = n->origin_start ? NULL : image_find(n->tgid, n->image);
	uint64_t parent_stream = 0;
	struct image saved = { 0 };
	char *old_exe = NULL;

	if (old) {
		take_keys(old, n);
		end_image(old, false);
		report_from_map(old);
		reconcile_events(old);
		if (old->sink) {
			struct kp_rec_common c = collect_common_now(old, n->time_ns);
			kp_rec_exec(&old->sink->w, &c, x->filename);
		}
		parent_stream = old->stream;
		if (old->exe)
			old_exe = strdup(old->exe);
		saved = *old;
		image_end(old);
	}
	if (cfg.stacks)
		mappings_exec(n->tgid);
	struct image *im = image_find(n->tgid, n->image + 1);
	if (im || !(im = image_new(n->tgid, n->image + 1))) {
		free(old_exe); /* created lazily already, or no memory */
		return;
	}
	im->origin = n->origin_start ? "start" : "exec";
	im->parent_stream = parent_stream;
	im->ppid = n->ppid;
	im->lost_events = saved.lost_events;
	im->lost_calls = saved.lost_calls;
	im->lost_notes = saved.lost_notes;
	/*
	 * FORMAT's exe is /proc/PID/exe: the resolved path of the file. An
	 * execve("/proc/self/exe") runs the executable of the image that
	 * exec'd, known here even when the new image has exited before its
	 * /proc could be read (t_bpf_tree saw the bare name then).
	 */
	char self_exe[40];
	snprintf(self_exe, sizeof(self_exe), "/proc/%u/exe", (unsigned)n->tgid);
	if (old_exe && (strcmp(x->filename, "/proc/self/exe") == 0 ||
			strcmp(x->filename, self_exe) == 0)) {
		im->exe = old_exe;
		old_exe = NULL;
	} else if (x->filename[0] == '/' && strncmp(x->filename, "/proc/", 6) != 0) {
		im->exe = realpath(x->filename, NULL);
	}
	free(old_exe);
	if (!im->exe)
		image_fill_from_proc(im);
	if (!im->exe)
		im->exe = strndup(x->filename, sizeof(x->filename));
	memcpy(im->comm, n->comm, sizeof(im->comm));
	im->comm[sizeof(im->comm) - 1] = 0;
	if (x->args_len)
		image_set_argv_from_block(im, x->args,
					  x->args_len < KBPF_ARGS_MAX ? x->args_len
								      : KBPF_ARGS_MAX);
	image_begin(im, n->time_ns);
}

static void write_exit(struct image *im, uint64_t time_ns, int64_t status,
		       uint64_t signal, const uint64_t fds[4], uint64_t readers,
		       uint64_t writers, bool detached)
{
	if (!im->sink)
		return;
	struct kp_rec_exit e = {
		.c = collect_common_now(im, time_ns),
		.status = status,
		.signal = signal,
		.fds_file = fds[0],
		.fds_pipe = fds[1],
		.fds_socket = fds[2],
		.fds_other = fds[3],
		.pending_pipe_readers = readers,
		.pending_pipe_writers = writers,
	};
	if (detached)
		kp_rec_exit_detached(&im->sink->w, &e);
	else
		kp_rec_exit(&im->sink->w, &e);
}

static void on_exit_note(const struct kbpf_note *n)
{
	int signal = n->exit_code & 0x7f;
	int64_t status = signal ? -1 : (n->exit_code >> 8) & 0xff;

	if (start_child && n->tgid == (uint32_t)start_child && start_child_status < 0)
		start_child_status = n->exit_code;
	struct image *im = image_find(n->tgid, n->image);
	if (!im)
		return;
	take_keys(im, n);
	end_image(im, true);
	report_kernel_losses(im, n->lost_events, n->lost_calls, n->lost_notes);
	reconcile_events(im);
	uint64_t fds[4] = { n->fds[0], n->fds[1], n->fds[2], n->fds[3] };
	if (!n->fds_known)
		memset(fds, 0, sizeof(fds));
	write_exit(im, n->time_ns, status, (uint64_t)signal, fds,
		   n->pending_pipe_readers, n->pending_pipe_writers, false);
	info(1, "pid %u exited (status %lld, signal %d)\n", n->tgid,
	     (long long)status, signal);
	image_end(im);
}

int collect_note(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size < sizeof(struct kbpf_note))
		return 0;
	if (n_queued == cap_queued) {
		size_t ncap = cap_queued ? 2 * cap_queued : 64;
		struct kbpf_note_exec *nq = realloc(queue, ncap * sizeof(*queue));
		if (!nq)
			return -ENOMEM;
		queue = nq;
		cap_queued = ncap;
	}
	memset(&queue[n_queued], 0, sizeof(queue[0]));
	memcpy(&queue[n_queued], data,
	       size < sizeof(queue[0]) ? size : sizeof(queue[0]));
	n_queued++;
	return 0;
}

/*
 * The `--` child has not exec'd CMD yet. Not when it has ended: its exit
 * note can be lost (the notes ring was full), and then only the kernel
 * says that it is gone (a zombie until main reaps it after the loop).
 */
bool collect_start_pending(void)
{
	if (!start_child || start_child_status >= 0 || image_find(start_child, 1))
		return false;
	siginfo_t si = { 0 };
	return !(waitid(P_PID, (id_t)start_child, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		 si.si_pid == start_child);
}

void collect_process_notes(void)
{
	/* mappings made before the notes were written are known first */
	if (cfg.stacks && n_queued)
		mappings_drain();
	for (size_t i = 0; i < n_queued; i++) {
		const struct kbpf_note *n = &queue[i].note;
		switch (n->kind) {
		case KBPF_NOTE_FORK:
			on_fork_note(n);
			break;
		case KBPF_NOTE_EXEC:
			on_exec_note(&queue[i]);
			break;
		case KBPF_NOTE_EXIT:
			on_exit_note(n);
			break;
		case KBPF_NOTE_THREAD_EXIT: {
			struct image *im = image_find(n->tgid, n->image);
			if (im) {
				tid_add(&im->exited_tids, &im->n_exited,
					&im->cap_exited, n->tid);
				note_thread_name(im, n->tid, n->comm);
			}
			break;
		}
		}
	}
	n_queued = 0;
}

/* ----------------------------------------------------- listener lost */

static struct sink *lost_sink;
static const char *lost_reason;

/*
 * A stream that was going to the listener goes on in a file of the
 * fallback directory: its header again (same stream id, next seq: the
 * records before it went to the listener), and a drop record for what
 * the failed batch held. Cumulative aggregates make the next one whole.
 */
static void rehome(struct image *im, void *ctx)
{
	(void)ctx;
	if (im->sink != lost_sink)
		return;
	bool lost = im->pending_flush == lost_sink->flushes &&
		    im->pending_records;
	uint64_t records = lost ? im->pending_records : 0;
	uint64_t events = lost ? im->pending_events : 0;
	output_release(im->sink);
	im->sink = output_sink(im->exe, (pid_t)im->tgid);
	if (!im->sink)
		return;
	write_header(im);
	if (records) {
		struct kp_rec_drop d = {
			.c = collect_common_now(im, 0),
			.records = records,
			.events = events,
			.reason = lost_reason,
		};
		write_drop_record(im, &d);
	}
	sink_flush(im->sink);
	info(1, "pid %u: stream %016llx goes on in a file (%llu records lost)\n",
	     im->tgid, (unsigned long long)im->stream, (unsigned long long)records);
}

static void on_listener_lost(struct sink *dead, const char *reason)
{
	lost_sink = dead;
	lost_reason = reason;
	images_each(rehome, NULL);
	lost_sink = NULL;
}

/* --------------------------------------------------------------- periodic */

static void flush_image(struct image *im, void *ctx)
{
	(void)ctx;
	report_from_map(im);
	if (im->sink)
		sink_flush(im->sink);
}

void collect_interval(void)
{
	if (cfg.stacks)
		mappings_drain();
	collect_flush_events();
	write_aggregates(NULL, false, false);
	images_each(flush_image, NULL);
}

/*
 * An image whose tgid left the traced map (BPF removes it at exit) or
 * whose process is gone, still without its exit note after the rings were
 * drained twice: the note was lost. Its stream ends with status unknown.
 */
static void check_one(struct image *im, void *ctx)
{
	(void)ctx;
	struct kbpf_proc p;
	uint32_t key = im->tgid;
	bool in_map = bpf_map_lookup_elem(tr->traced_fd, &key, &p) == 0 &&
		      p.image == im->image;
	if (in_map && proc_exists((pid_t)im->tgid)) {
		im->suspect = false;
		return;
	}
	if (!im->suspect) {
		im->suspect = true;
		return;
	}
	uint64_t fds[4] = { 0 };
	end_image(im, true);
	reconcile_events(im);
	if (im->sink)
		write_drop(im, 1, 0, "exit notification lost");
	if (in_map)
		tracer_remove_pid(tr, (pid_t)im->tgid);
	write_exit(im, 0, -1, 0, fds, 0, 0, false);
	image_end(im);
}

void collect_check_liveness(void)
{
	images_each(check_one, NULL);
}

/* ------------------------------------------------------------------- end */

static void untrace(struct image *im, void *ctx)
{
	(void)ctx;
	report_from_map(im);
	tracer_remove_pid(tr, (pid_t)im->tgid);
}

static void finish_one(struct image *im, void *ctx)
{
	(void)ctx;
	uint64_t fds[4], readers, writers;
	pid_t pid = (pid_t)im->tgid;

	end_image(im, false);
	reconcile_events(im);
	proc_fds(pid, fds);
	proc_pending_pipes(pid, &readers, &writers);
	write_exit(im, 0, -1, 0, fds, readers, writers, true);
	info(1, "pid %u detached, still running\n", im->tgid);
	image_end(im);
}

/*
 * End of tracing with processes still running: untrace them first (no
 * call is counted after this), drain what the kernel already produced,
 * then write each one's final records.
 */
void collect_finish(void)
{
	images_each(untrace, NULL);
	if (start_child && start_child_status < 0)
		tracer_remove_pid(tr, start_child);
	ring_buffer__consume(tr->rings);
	if (cfg.stacks)
		mappings_drain();
	collect_process_notes();
	/* nothing traced is running any more: every event is in */
	if (cfg.events) {
		events_write_all();
	}
	/* entries of images whose notes were lost get their streams now */
	write_aggregates_of(NULL, false, false, true);
	images_each(finish_one, NULL);
	say_losses();
	uint64_t unseen = tracer_switches_unseen(tr);
	if (unseen)
		fprintf(stderr, TOOL ": time off CPU is short: %llu context switch%s of "
			"threads in traced calls not seen (the kernel refused the "
			"thread's storage to the switch program)\n",
			(unsigned long long)unseen, unseen == 1 ? "" : "es");
}
