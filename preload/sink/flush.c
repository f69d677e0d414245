/* SPDX-License-Identifier: MIT */
/*
 * Turning the counters into records. One thread at a time flushes (a
 * trylock: a periodic flush that finds another in progress is skipped);
 * the flusher encodes every thread block's cumulative aggregate into one
 * buffer and hands it to the output. Exited threads are written once with
 * exited=true and their block is recycled. A batch that cannot be written
 * is counted and reported in a `drop` record once writing works again.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>

#include "sink.h"
#include "record_writer.h"
#include "../core/stack.h"

#define BATCH_BUF_BYTES (256u << 10)

/* in the library's zero pages: only what a batch touches costs memory */
static char batch_buf[BATCH_BUF_BYTES];
static struct kp_writer writer;

static struct {
	uint64_t records;
	uint64_t events;
	uint64_t bytes;
	int err;
	bool said; /* on stderr, once per image */
} lost;

void kp_flush_after_fork(void)
{
	kp_flush_lock_reset();
	memset(&lost, 0, sizeof(lost));
}

/* set by lifecycle/entry_check.c, the layer above (sink.h) */
__thread const char *kp_child_why;
__thread char kp_child_path[256];

void kp_note_fork(pid_t child, const char *how)
{
	uint32_t i = __atomic_fetch_add(&kp_proc.pending_forks, 1, __ATOMIC_ACQ_REL);
	if (i >= KP_MAX_PENDING_FORKS) {
		__atomic_fetch_add(&kp_proc.lost_forks, 1, __ATOMIC_RELAXED);
		return;
	}
	kp_proc.pending_fork_how[i] = how;
	kp_proc.pending_fork_why[i] = kp_child_why;
	if (kp_child_why)
		memcpy(kp_proc.pending_fork_path[i], kp_child_path, sizeof(kp_child_path));
	kp_child_why = NULL;
	__atomic_store_n(&kp_proc.pending_fork_child[i], (uint32_t)child, __ATOMIC_RELEASE);
}

static struct kp_rec_common common(void)
{
	struct kp_rec_common c = {
		.pid = kp_proc.pid,
		.stream = kp_proc.stream,
		.time_ns = kp_mono_ns(),
		.seq = ++kp_proc.seq,
	};
	return c;
}

static void write_header(struct kp_writer *w)
{
	struct kp_rec_header h = {
		.c = common(),
		.producer = "preload",
		.ppid = kp_proc.ppid,
		.origin = kp_proc.origin,
		.parent_stream = kp_proc.parent_stream,
		.exe = kp_proc.exe,
		.comm = kp_proc.comm[0] ? kp_proc.comm : NULL,
		.argv = kp_proc.argv,
		.argc = kp_proc.argc,
		.host = kp_proc.host,
		.kernel = kp_proc.kernel,
		.arch = kp_host_arch(),
		.monotonic_ns = kp_proc.start_mono_ns,
		.realtime_ns = kp_proc.start_real_ns,
		.hook_mode = kp_proc.hook_mode,
		.clock_source = kp_clock_source(),
		.coverage = kp_proc.coverage ? kp_proc.coverage : "",
		.events = kp_config.events,
		.interval_ms = kp_config.interval_ms,
		.untraced_parent_pid = kp_proc.untraced_parent_pid,
		.untraced_parent_exe = kp_proc.untraced_parent_exe,
		.untraced_parent_why = kp_proc.untraced_parent_why,
		.runtime = kp_proc.runtime,
		.site_cache_note = kp_proc.site_cache_note,
	};
	h.c.time_ns = kp_proc.start_mono_ns;
	kp_rec_header(w, &h);
}

static void put_slot(struct kp_writer *w, const struct kp_slot *s, uint64_t count,
		     bool global)
{
	struct kp_rec_syscall r = {
		.nr = s->nr,
		.n_errno = KP_ERRNO_PAIRS + 1,
		.errno_value = NULL,
		.errno_count = s->errno_count,
		.hist32 = s->hist,
	};
#define COUNTER(name, merge) r.name = s->name;
	KP_SC_COUNTERS(COUNTER)
#undef COUNTER
	r.count = count; /* the caller's snapshot of it */
	if (r.min_ns == UINT64_MAX) /* none yet */
		r.min_ns = 0;
	uint64_t site_addr[KP_SITES + 1], site_count[KP_SITES + 1],
		site_time[KP_SITES + 1];
	unsigned n_sites = 0;
	for (unsigned i = 0; !global && i <= KP_SITES; i++) {
		uint64_t n = __atomic_load_n(&s->site_count[i], __ATOMIC_RELAXED);
		if (!n)
			continue;
		site_addr[n_sites] = i < KP_SITES ? s->site_addr[i] : 0;
		site_count[n_sites] = n;
		site_time[n_sites++] = s->site_time_ns[i];
	}
	r.n_sites = n_sites;
	r.site_addr = site_addr;
	r.site_count = site_count;
	r.site_time_ns = site_time;
	r.kinds = s->kinds; /* left out when no call had a descriptor */
	uint32_t values[KP_ERRNO_PAIRS + 1];
	memcpy(values, s->errno_value, sizeof(s->errno_value));
	values[KP_ERRNO_PAIRS] = 0; /* errno 0: failures beyond the tracked errnos */
	r.errno_value = values;
	if (global && r.min_ns == 1 && r.max_ns == 0)
		r.min_ns = 0;
	kp_rec_syscall(w, &r);
}

static void write_thread(struct kp_writer *w, struct kp_thread *t, bool exited,
			 bool final)
{
	uint16_t used[KP_SLOTS];
	uint64_t counts[KP_SLOTS];
	unsigned n = 0;
	uint32_t nslots = __atomic_load_n(&t->nslots, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < nslots && i < KP_SLOTS; i++) {
		uint64_t c = __atomic_load_n(&t->slots[i].count, __ATOMIC_RELAXED);
		if (c) {
			used[n] = (uint16_t)i;
			counts[n++] = c;
		}
	}
	struct kp_rec_common c = common();
	uint64_t tid = t->tid ? t->tid : kp_proc.pid;
	/* a copy: the thread may rename itself meanwhile */
	char name[sizeof(t->name)];
	memcpy(name, t->name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	kp_rec_aggregate_begin(w, &c, t->serial, tid, name[0] ? name : NULL, exited, final, n);
	for (unsigned i = 0; i < n; i++)
		put_slot(w, &t->slots[used[i]], counts[i], false);
}

static void write_global(struct kp_writer *w, bool final)
{
	uint16_t used[KP_SYSCALL_MAX];
	uint64_t counts[KP_SYSCALL_MAX];
	unsigned n = 0;
	/* only the slots ever written: reading all would touch every page */
	for (unsigned wd = 0; wd < KP_SYSCALL_MAX / 64; wd++) {
		uint64_t bits = __atomic_load_n(&kp_global_touched[wd], __ATOMIC_ACQUIRE);
		for (; bits; bits &= bits - 1) {
			unsigned nr = wd * 64 + (unsigned)__builtin_ctzll(bits);
			uint64_t c = __atomic_load_n(&kp_global_slots[nr].count, __ATOMIC_ACQUIRE);
			if (c) {
				used[n] = (uint16_t)nr;
				counts[n++] = c;
			}
		}
	}
	if (!n)
		return;
	struct kp_rec_common c = common();
	kp_rec_aggregate_begin(w, &c, 0, 0, NULL, false, final, n);
	for (unsigned i = 0; i < n; i++) {
		kp_global_slots[used[i]].nr = used[i];
		put_slot(w, &kp_global_slots[used[i]], counts[i], true);
	}
}

static void write_events(struct kp_writer *w, struct kp_thread *t)
{
	struct kp_ring *r = t->ring;
	if (!r)
		return;
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->tail;
	if (head == tail)
		return;
	struct kp_rec_common c = common();
	kp_rec_events_begin(w, &c, t->tid ? t->tid : kp_proc.pid, (unsigned)(head - tail));
	for (uint64_t i = tail; i < head; i++) {
		const struct kp_event *e = &r->ev[i % KP_RING_EVENTS];
		if (e->kind)
			kp_rec_event_fd(w, e->start_ns, e->duration_ns, e->nr, e->ret,
					e->fd, e->kind);
		else
			kp_rec_event(w, e->start_ns, e->duration_ns, e->nr, e->ret);
	}
	__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
}

static void write_forks(struct kp_writer *w)
{
	uint32_t n = __atomic_load_n(&kp_proc.pending_forks, __ATOMIC_ACQUIRE);
	if (n > KP_MAX_PENDING_FORKS)
		n = KP_MAX_PENDING_FORKS;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t child = __atomic_load_n(&kp_proc.pending_fork_child[i], __ATOMIC_ACQUIRE);
		if (!child)
			continue; /* still being noted by another thread: next time */
		struct kp_rec_common c = common();
		kp_rec_fork_note(w, &c, child, kp_proc.pending_fork_how[i],
				 kp_proc.pending_fork_why[i] ? kp_proc.pending_fork_path[i] : NULL,
				 kp_proc.pending_fork_why[i]);
		kp_proc.pending_fork_child[i] = 0;
	}
	/* Nothing pending and no note in progress: start the array over. */
	uint32_t expect = n;
	bool all_done = true;
	for (uint32_t i = 0; i < n; i++)
		all_done &= kp_proc.pending_fork_child[i] == 0;
	if (all_done)
		__atomic_compare_exchange_n(&kp_proc.pending_forks, &expect, 0, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	uint32_t lf = __atomic_exchange_n(&kp_proc.lost_forks, 0, __ATOMIC_RELAXED);
	lost.records += lf;
}

static bool is_pipe(long fd)
{
	struct stat st;
	return fd >= 0 && kp_raw(SYS_fstat, fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

static bool is_read_nr(unsigned nr)
{
	return nr == SYS_read || nr == SYS_readv || nr == SYS_pread64 ||
	       nr == SYS_preadv || nr == SYS_preadv2;
}

static bool is_write_nr(unsigned nr)
{
	return nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 ||
	       nr == SYS_pwritev || nr == SYS_pwritev2;
}

static void count_fd(void *ctx, int fd, unsigned kind)
{
	struct kp_rec_exit *e = ctx;
	if (kp_output_is_ours(fd))
		return;
	switch (kind) {
	case KP_KIND_FILE: e->fds_file++; break;
	case KP_KIND_PIPE: e->fds_pipe++; break;
	case KP_KIND_SOCKET: e->fds_socket++; break;
	default: e->fds_other++; break;
	}
}

/* Descriptors open at exit, by kind (core/fd_kinds.c: the inode's file type;
 * ours excluded). */
static void count_fds(struct kp_rec_exit *e)
{
	kp_fd_scan(count_fd, e);
}

/*
 * The wait status of a dead process that its parent has not reaped yet
 * (/proc/PID/stat, field 52, exit_code); -1 when it is gone or unreadable.
 */
static int dead_wait_status(int pid)
{
	char buf[1024];
	if (kp_read_proc_stat((uint64_t)pid, buf, sizeof(buf)) < 0)
		return -1;
	const char *p = strrchr(buf, ')'); /* comm may hold spaces */
	for (int field = 2; p && field < 52; field++)
		p = strchr(p + 1, ' ');
	if (!p || p[1] < '0' || p[1] > '9')
		return -1;
	int v = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v;
}

/* after_death: in the output process, the program dead (no TLS, no fd scan). */
static void write_exit(struct kp_writer *w, int64_t status, bool after_death, int pid)
{
	struct kp_rec_exit e = { .c = common(), .status = status, .after_death = after_death };
	if (after_death) {
		/*
		 * Its descriptors died with it. What it died of: from its
		 * pidfd once it is reaped (6.15+), from /proc while it is a
		 * zombie; a moment may pass before either can tell.
		 */
		int ws = -1;
		for (int tries = 0; ws < 0 && tries < 50; tries++) {
			ws = kp_outproc_exit_code();
			if (ws < 0)
				ws = dead_wait_status(pid);
			struct timespec ts = { 0, 1000000 };
			if (ws < 0)
				kp_raw(SYS_nanosleep, &ts, NULL);
		}
		if (ws >= 0 && WIFEXITED(ws))
			e.status = WEXITSTATUS(ws);
		else if (ws >= 0 && WIFSIGNALED(ws))
			e.signal = (uint64_t)WTERMSIG(ws);
	} else {
		count_fds(&e);
	}
	/* the calls other threads are in: the exit ends them unreturned */
	uint32_t busy_nr[64];
	uint64_t busy_count[64];
	unsigned n_busy = 0;
	for (struct kp_thread *t = kp_threads_first(); t; t = t->next) {
		if ((!after_death && t == kp_self) ||
		    __atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != KP_BLOCK_LIVE)
			continue;
		uint32_t cur = t->cur_nr;
		long fd = t->cur_fd;
		if (!cur)
			continue;
		unsigned k = 0;
		while (k < n_busy && busy_nr[k] != cur - 1)
			k++;
		if (k == n_busy && n_busy < 64) {
			busy_nr[n_busy] = cur - 1;
			busy_count[n_busy++] = 0;
		}
		if (k < n_busy)
			busy_count[k]++;
		bool pipe = after_death ? (unsigned long)fd < KP_FD_TABLE &&
						  kp_fd_kinds[fd] == KP_KIND_PIPE
					: is_pipe(fd);
		if (is_read_nr(cur - 1) && pipe)
			e.pending_pipe_readers++;
		else if (is_write_nr(cur - 1) && pipe)
			e.pending_pipe_writers++;
	}
	e.n_in_progress = n_busy;
	e.in_progress_nr = busy_nr;
	e.in_progress = busy_count;
	kp_rec_exit(w, &e);
}

static const char *errno_text(int err)
{
	switch (err) {
	case ENOSPC: return "write failed: No space left on device";
	case EDQUOT: return "write failed: Disk quota exceeded";
	case EIO: return "write failed: Input/output error";
	case EPIPE: return "write failed: Broken pipe";
	case EBADF: return "write failed: trace descriptor lost";
	case EFBIG: return "write failed: File too large";
	case ENOMEM: return "out of memory";
	case ECHILD: return "the output process was killed or stopped (by the program?)";
	case EACCES: return "cannot open trace file: Permission denied";
	case ENOENT: return "cannot open trace file: No such file or directory";
	case EEXIST: return "cannot open trace file: File exists";
	default: return "write failed";
	}
}

/* A message for stderr, built whole: one write, one line. */
struct msg_buf {
	char text[KP_PATH_MAX + 256];
	size_t len;
};

static void msg_add(struct msg_buf *m, const char *s)
{
	while (*s && m->len + 1 < sizeof(m->text))
		m->text[m->len++] = *s++;
	m->text[m->len] = 0;
}

static void msg_u64(struct msg_buf *m, uint64_t v)
{
	char num[24];
	msg_add(m, kp_u64_dec(num, v));
}

/*
 * A loss is said on the program's stderr: once when writing first fails,
 * and at the end if the image ends with records still unwritten (no later
 * batch carried a `drop` record for them).
 */
static void say_loss(bool final)
{
	if (kp_output_refused())
		return; /* "not tracing into ...": said, and meant */
	if (lost.err == -ECHILD)
		return; /* the program's own doing: said in the trace (drop) only */
	struct msg_buf m = { .len = 0 };
	if (!lost.said) {
		lost.said = true;
		msg_add(&m, "kprof: cannot write the trace of pid ");
		msg_u64(&m, kp_proc.pid);
		msg_add(&m, " to ");
		msg_add(&m, kp_output_path());
		msg_add(&m, " (");
		msg_add(&m, errno_text(-lost.err));
		msg_add(&m, "): records are dropped until it can, and counted\n");
	}
	if (final) {
		msg_add(&m, "kprof: the trace of pid ");
		msg_u64(&m, kp_proc.pid);
		msg_add(&m, " is incomplete: ");
		msg_u64(&m, lost.records);
		msg_add(&m, " records");
		if (lost.bytes) {
			msg_add(&m, " (");
			msg_u64(&m, lost.bytes);
			msg_add(&m, " bytes)");
		}
		msg_add(&m, " lost at its end\n");
	}
	if (m.len)
		kp_write_stderr(m.text);
}

#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define RING_EVENTS_TEXT TEXT(KP_RING_EVENTS)

/* Calls whose event found their thread's ring full, since the last batch. */
static uint64_t ring_drops(void)
{
	uint64_t n = 0;
	for (struct kp_thread *t = kp_threads_first(); t; t = t->next) {
		uint32_t state = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
		if (t->ring && (state == KP_BLOCK_LIVE || state == KP_BLOCK_EXITED))
			n += __atomic_exchange_n(&t->ring->dropped, 0, __ATOMIC_RELAXED);
	}
	return n;
}

static int dead_pid;
static const char *passive_why;
static uint64_t batch_seq0; /* kp_proc.seq when the latest batch began */

static void do_flush(enum kp_flush_kind kind, const char *exec_path)
{
	bool final = kind == KP_FLUSH_EXIT || kind == KP_FLUSH_EXEC || kind == KP_FLUSH_DEATH ||
		     kind == KP_FLUSH_PASSIVE;
	batch_seq0 = kp_proc.seq;
	if (!kp_proc.pid)
		kp_learn_pids();
	struct kp_writer *w = &writer;
	kp_writer_init(w, batch_buf, BATCH_BUF_BYTES, kp_output_write, NULL);
	if (kind == KP_FLUSH_START)
		kp_outproc_reap_at_start();
	int err = kp_output_begin_batch();
	if (err) {
		/* count what this batch would have held; nothing recycled */
		lost.err = err;
		lost.records++;
		say_loss(final);
		return;
	}
	if (!kp_proc.header_written)
		write_header(w);
	if (lost.records || lost.events || lost.bytes) {
		struct kp_rec_drop d = {
			.c = common(),
			.records = lost.records,
			.events = lost.events,
			.bytes = lost.bytes,
			.reason = errno_text(-lost.err),
		};
		kp_rec_drop(w, &d);
	}
	/* taken before the threads' events are written, so that a call
	 * dropped now is said in this batch, not cleared unsaid after it */
	uint64_t ring_full = kind == KP_FLUSH_START ? 0 : ring_drops();
	if (ring_full) {
		struct kp_rec_drop d = {
			.c = common(),
			.events = ring_full,
			.reason = "event ring full: a thread made more calls between two "
				  "flushes than its ring holds (" RING_EVENTS_TEXT ")",
		};
		kp_rec_drop(w, &d);
	}
	if (kind == KP_FLUSH_PASSIVE) {
		/* nothing lost yet, but nothing more to come: said where
		 * kanalyze reports losses */
		struct kp_rec_drop d = { .c = common(), .reason = passive_why };
		kp_rec_drop(w, &d);
	}
	struct kp_thread *recycle[64];
	unsigned n_recycle = 0;
	if (kind == KP_FLUSH_START)
		goto own; /* the header, before the program's first call */
	write_forks(w);
	if (!kp_proc.maps_written || final || kind == KP_FLUSH_MAPS)
		kp_proc.maps_written = kp_maps_write(w, kp_proc.pid, kp_proc.stream,
						     &kp_proc.seq) == 0;
	for (struct kp_thread *t = kp_threads_first(); t; t = t->next) {
		uint32_t state = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
		if (state != KP_BLOCK_LIVE && state != KP_BLOCK_EXITED)
			continue;
		write_events(w, t);
		write_thread(w, t, state == KP_BLOCK_EXITED, final);
		if (state == KP_BLOCK_EXITED && n_recycle < 64)
			recycle[n_recycle++] = t;
	}
	write_global(w, final);
	if (kind == KP_FLUSH_EXIT || kind == KP_FLUSH_DEATH)
		write_exit(w, kp_proc.exit_status, kind == KP_FLUSH_DEATH, dead_pid);
	else if (kind == KP_FLUSH_EXEC) {
		struct kp_rec_common c = common();
		kp_rec_exec_note(w, &c, exec_path ? exec_path : "", kp_proc.exec_not_entered);
	}
own:
	/* last: the exit record's /proc reads are in it */
	/* after a death nothing more of the program's pid is to come */
	kp_own_write(w, final && kind != KP_FLUSH_DEATH, kind == KP_FLUSH_EXEC);
	err = kp_writer_flush(w);
	if (!err)
		err = kp_output_end_batch(final);
	if (err) {
		kp_output_abort_batch();
		lost.records += w->records;
		lost.events += ring_full;
		lost.bytes += w->encoded;
		lost.err = err;
		say_loss(final);
	} else {
		kp_proc.header_written = true;
		lost.records = lost.events = lost.bytes = 0;
	}
	for (unsigned i = 0; i < n_recycle; i++)
		kp_thread_recycle(recycle[i]);
}


struct flush_call {
	enum kp_flush_kind kind;
	const char *exec_path;
};

/* kp_flush, on the shim stack: encoding and compressing take tens of KiB,
 * more than a goroutine's or a coroutine's stack holds (core/stack.h). */
static void flush_on_stack(void *arg)
{
	const struct flush_call *call = arg;
	enum kp_flush_kind kind = call->kind;
	const char *exec_path = call->exec_path;
	if (!kp_flush_lock(kind != KP_FLUSH_PERIODIC))
		return;
	kp_tls_flags |= KP_TLS_FLUSHING;
	int saved_errno = errno;
	/* the periodic deadline also serves the clock's calibration checks */
	bool due = kind != KP_FLUSH_PERIODIC || kp_flush_due();
	if (kind == KP_FLUSH_PERIODIC)
		kp_clock_check();
	kp_reset_deadline();
	if (kind == KP_FLUSH_EXEC)
		kp_output_exec_local();
	if (due)
		do_flush(kind, exec_path);
	if (kind == KP_FLUSH_EXEC)
		kp_output_before_exec();
	errno = saved_errno;
	kp_tls_flags &= ~KP_TLS_FLUSHING;
	kp_flush_unlock();
}

void kp_flush(enum kp_flush_kind kind, const char *exec_path)
{
	if (kp_state != KP_ACTIVE ||
	    (kp_tls_flags & (KP_TLS_FLUSHING | KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT)))
		return;
	/* a thread on a TLS of the program's (no errno there): not ours */
	if (kp_tls_foreign())
		return;
	struct flush_call call = { kind, exec_path };
	kp_stack_run(flush_on_stack, &call);
}

static void passive_on_stack(void *arg)
{
	const char *why = arg;
	if (!kp_flush_lock(true))
		return;
	unsigned saved = kp_tls_flags;
	kp_tls_flags |= KP_TLS_FLUSHING;
	int saved_errno = errno;
	passive_why = why;
	do_flush(KP_FLUSH_PASSIVE, NULL);
	__atomic_store_n(&kp_state, KP_PASSIVE, __ATOMIC_RELEASE);
	kp_output_close();
	kp_debug(why);
	errno = saved_errno;
	kp_tls_flags = saved;
	kp_flush_unlock();
}

void kp_flush_passive(const char *why)
{
	if (kp_state != KP_ACTIVE || (kp_tls_flags & (KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT)) ||
	    kp_tls_foreign() || kp_foreign_process())
		return;
	kp_stack_run(passive_on_stack, (void *)why);
}

void kp_flush_periodic(void)
{
	kp_flush(KP_FLUSH_PERIODIC, NULL);
}

void kp_flush_init(void)
{
	kp_on_deadline = kp_flush_periodic;
	kp_outproc_on_death = kp_flush_after_death;
}

void kp_finish(int64_t status, bool have_status)
{
	if (kp_state != KP_ACTIVE || kp_proc.final_done ||
	    (kp_tls_flags & KP_TLS_VFORK_CHILD) || kp_tls_foreign() || kp_foreign_process())
		return;
	kp_proc.final_done = true;
	kp_proc.exit_status = have_status ? status : -1;
	/* rewrite mode: the syscall hook counted the exit or exit_group */
	if (!kp_rw_active)
		kp_account_untimed(SYS_exit_group, false, 0, true);
	kp_flush(KP_FLUSH_EXIT, NULL);
}

/*
 * At start-up, once the hook mode is known: the header goes out before the
 * program's first call, so that an image killed before its first periodic
 * batch still shows its pid, argv and origin (and a reader can say that
 * its stream ended without an exit).
 */
void kp_flush_start(void)
{
	if (!kp_flush_lock(true))
		return;
	unsigned saved = kp_tls_flags;
	kp_tls_flags |= KP_TLS_FLUSHING;
	do_flush(KP_FLUSH_START, NULL);
	kp_tls_flags = saved;
	kp_flush_unlock();
}

/*
 * The output process, its program dead (a signal; an exit the shim did not
 * see): every thread of the program is gone, and the flush lock with any
 * batch it guarded, so this is the only writer left. The counters in the
 * shared memory hold every call up to the death: they go out as a final
 * batch whose exit record says after_death, with the status or signal the
 * kernel left in /proc. Nothing is done when the program's own final
 * batch went out, or when a gzip or socket batch died half way.
 */
void kp_flush_after_death(int pid)
{
	if (kp_state != KP_ACTIVE)
		return;
	bool mid_batch = kp_flush_locked();
	if (kp_proc.final_done && !mid_batch)
		return;
	if (!kp_output_after_death(mid_batch))
		return;
	/* the batch cut back is written again: with the same numbers */
	if (mid_batch)
		kp_proc.seq = batch_seq0;
	/* its syscalls are not the program's own any more */
	kp_state = KP_PASSIVE;
	kp_proc.exit_status = -1;
	dead_pid = pid;
	do_flush(KP_FLUSH_DEATH, NULL);
}
