// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel side of kbpf-trace: times every syscall of the traced processes
 * on the raw syscall tracepoints and aggregates in the kernel; follows
 * fork, exec and exit on the sched tracepoints and tells user space about
 * them through the `notes` ring buffer; with --events, streams each call
 * through the `events` ring buffer.
 *
 * Every program exists twice: tp_btf (BTF-typed arguments, cheapest) and
 * raw_tp (the fallback where tp_btf cannot attach). User space enables one
 * set with bpf_program__set_autoload() before load. Both read kernel
 * structures through BPF_CORE_READ, so the shared logic is one function.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "histogram.h"
#include "kbpf_trace.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space between open and load. */
const volatile bool cfg_follow = false;	    /* add fork children */
const volatile bool cfg_per_thread = false; /* aggregate per tid */
const volatile bool cfg_events = false;	    /* per-call events */
const volatile bool cfg_stacks = false;	    /* user stacks per call */
const volatile bool cfg_find_vma = false;   /* bpf_find_vma (5.17) is there */
/* --comm: a process whose exec names it one of these is traced from then
 * on (cfg_n_comms of them; 0: none) */
const volatile __u32 cfg_n_comms = 0;
const volatile char cfg_comms[KBPF_COMMS_MAX][KBPF_COMM_LEN];
const volatile __u64 cfg_events_wakeup_bytes = 65536;
/* Bit nr: syscall nr's first argument is a descriptor (kp_syscall_fd_arg). */
const volatile __u64 cfg_fd_arg[KBPF_SYSCALL_MAX / 64];
/*
 * Bit nr: an EAGAIN of syscall nr is a would-block, a retry
 * (kp_syscall_would_block); any other EAGAIN (futex, clone) is an error.
 * The shim counts by the same list, so both producers agree.
 */
const volatile __u64 cfg_would_block[KBPF_SYSCALL_MAX / 64];

#define EAGAIN 11
#define EINTR 4
#define ERESTARTSYS 512
#define ERESTART_RESTARTBLOCK 516
#define MAX_ERRNO 4095
#define SIGNAL_GROUP_EXIT 0x00000004
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFIFO 0010000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_IFBLK 0060000
#define S_IFLNK 0120000
/*
 * inode->i_flags of anonymous inodes (eventfd, epoll, timerfd, pidfd...)
 * since 6.15, where some carry S_IFREG inside the kernel and fstat()
 * hides it; older kernels leave the bit unused and the mode typeless.
 */
#define S_ANON_INODE (1 << 19)

#if defined(__TARGET_ARCH_x86)
#define NR_READ 0
#define NR_WRITE 1
#define NR_READV 19
#define NR_WRITEV 20
#define NR_EXECVE 59
#define NR_EXECVEAT 322
#elif defined(__TARGET_ARCH_arm64)
#define NR_READ 63
#define NR_WRITE 64
#define NR_READV 65
#define NR_WRITEV 66
#define NR_EXECVE 221
#define NR_EXECVEAT 281
#else
#error "kbpf-trace: unsupported architecture"
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct kbpf_proc);
} traced SEC(".maps");

/*
 * A traced thread's call in flight (created at its first traced call),
 * with what sys_exit needs of its process as sys_enter found it: only an
 * exec changes that during a call, so sys_exit looks the process up again
 * for execve and execveat alone (a hash lookup less per call).
 */
struct inflight {
	__u64 start_ns; /* 0: none */
	__u32 nr;
	__s32 fd;	/* first argument when it is a descriptor, else -1 */
	__u32 kind;	/* KP_KIND_* of that descriptor at sys_enter, or 0 */
	__u32 image;	/* the process's image at sys_enter */
	__u32 counted;	/* 0: before the traced program's start (KBPF_PROC_BEFORE_START) */
	__u32 pad;
	__u64 off_at;	/* sched_switch: off CPU since then (0: on CPU) */
	__u64 off_ns;	/* time off CPU during this call so far */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct kbpf_agg_key);
	__type(value, struct kbpf_agg_value);
} aggs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct kbpf_errno_key);
	__type(value, __u64);
} errnos SEC(".maps");

/*
 * Where a call goes when its aggs or errnos entry cannot be made: the
 * per-CPU maps allocate at the first call of each (image, syscall), and
 * in a burst of new images (a loop of execs) the kernel's atomic per-CPU
 * reserve runs dry: -ENOMEM, 11-73 calls of 150,000 lost in 2,000 execs
 * on a 2-vCPU guest. These are preallocated (never -ENOMEM), shared by
 * the CPUs (atomic adds), and user space adds them to the same keys.
 * Their keys are listed with KBPF_KEY_SPILL. Sizes: loader.c (--map-entries).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kbpf_agg_key);
	__type(value, struct kbpf_agg_value);
} aggs_spill SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct kbpf_errno_key);
	__type(value, __u64);
} errnos_spill SEC(".maps");

/* Fork, exec and exit notes: an exec note is ~1.8 KB, so 8 MB hold
 * ~4,500 of them while user space is slow (1 MB lost exit notes in a
 * loop of 2,000 execs; every lost one costs a scan of the maps later). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

/* --events: each CPU gathers a batch here; one reserve per batch. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kbpf_event_batch);
} staging SEC(".maps");

/* Too large for the BPF stack: the initial value of a new aggs entry. */
static const struct kbpf_agg_value zero_value;

static __always_inline bool is_pipe_rw(__u32 nr)
{
	return nr == NR_READ || nr == NR_WRITE || nr == NR_READV ||
	       nr == NR_WRITEV;
}

/* The kind of a file by its inode, as fstat() would tell it apart. */
static __always_inline __u32 inode_kind(struct inode *inode)
{
	if (!inode || (BPF_CORE_READ(inode, i_flags) & S_ANON_INODE))
		return KP_KIND_OTHER;
	switch (BPF_CORE_READ(inode, i_mode) & S_IFMT) {
	case S_IFIFO:
		return KP_KIND_PIPE;
	case S_IFSOCK:
		return KP_KIND_SOCKET;
	case S_IFREG:
	case S_IFDIR:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFLNK:
		return KP_KIND_FILE;
	default:
		return KP_KIND_OTHER;
	}
}

/* task->files->fdt->fd[fd]: a descriptor that is not open is "other". */
static __always_inline __u32 fd_kind(struct task_struct *task, int fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file *file = NULL;

	if (fd < 0 || !fdt || (unsigned)fd >= BPF_CORE_READ(fdt, max_fds))
		return KP_KIND_OTHER;
	struct file **fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return KP_KIND_OTHER;
	return inode_kind(BPF_CORE_READ(file, f_inode));
}

static __always_inline void on_enter(struct pt_regs *regs, long id)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/* Untraced processes pay this one lookup. */
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (!p)
		return;
	if (id < 0 || id >= KBPF_SYSCALL_MAX)
		return;

	struct task_struct *task = bpf_get_current_task_btf();
	struct inflight *f = bpf_task_storage_get(&inflight, task, 0,
						  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!f) {
		__sync_fetch_and_add(&p->lost_calls, 1);
		return;
	}
	/* The thread's last call never ended here: its sys_exit program
	 * did not run, or could not reach this storage (the kernel refuses
	 * it to a program that would recurse). Not counted, so said. */
	if (f->start_ns && f->counted)
		__sync_fetch_and_add(&p->lost_calls, 1);
	f->nr = id;
	f->image = p->image;
	f->counted = !(p->flags & KBPF_PROC_BEFORE_START);
	/* Only descriptor calls pay for the walk to the inode. */
	if (cfg_fd_arg[(id >> 6) & (KBPF_SYSCALL_MAX / 64 - 1)] & (1ull << (id & 63))) {
		int fd = (int)PT_REGS_PARM1_CORE_SYSCALL(regs);
		f->fd = fd;
		f->kind = fd_kind(task, fd);
	} else {
		f->fd = -1;
		f->kind = 0;
	}
	f->off_at = 0;
	f->off_ns = 0;
	f->start_ns = bpf_ktime_get_ns();
}

/*
 * A thread killed while blocked in a pipe read or write returns from the
 * syscall (sys_exit fires with -ERESTARTSYS or -EINTR) before it dies;
 * with SIGNAL_GROUP_EXIT set the whole process is going away, which is
 * what the exit record's pending_pipe_* counters report.
 */
static __always_inline void check_pending_pipe(__u32 tgid, struct inflight *f, long ret)
{
	if (f->kind != KP_KIND_PIPE || !is_pipe_rw(f->nr) ||
	    !(ret == -EINTR || (ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK)))
		return;
	struct task_struct *task = bpf_get_current_task_btf();
	if (!(BPF_CORE_READ(task, signal, flags) & SIGNAL_GROUP_EXIT))
		return;
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (!p)
		return;
	if (f->nr == NR_READ || f->nr == NR_READV)
		__sync_fetch_and_add(&p->pending_pipe_readers, 1);
	else
		__sync_fetch_and_add(&p->pending_pipe_writers, 1);
}

/* A batch that could not go to the ring buffer: each call is a loss of its process. */
static __always_inline void count_lost(const struct kbpf_event *ev, __u32 n)
{
	for (__u32 i = 0; i < KBPF_EVENT_BATCH && i < n; i++) {
		__u32 tgid = ev[i].tgid;
		struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
		/* gone (exited, exec'd): user space reconciles with the image's
		 * final counts */
		if (p && p->image == ev[i].image)
			__sync_fetch_and_add(&p->lost_events, 1);
	}
}

/* Wake the reader only when a good part of the ring is waiting. */
static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= cfg_events_wakeup_bytes
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

/* One ring buffer record for the whole batch, n events long. */
static __always_inline void batch_submit(struct kbpf_event_batch *b)
{
	__u32 n = b->n;
	if (n > KBPF_EVENT_BATCH)
		n = KBPF_EVENT_BATCH;
	__u64 size = sizeof(*b) - (KBPF_EVENT_BATCH - n) * sizeof(struct kbpf_event);
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&events, b, size, wakeup_flags()))
		count_lost(b->ev, n);
	b->n = 0;
}

/* A call whose CPU's batch is being filled by a program it interrupted. */
static __always_inline void event_submit_one(const struct kbpf_event *e)
{
	struct {
		__u32 n, busy;
		struct kbpf_event ev;
	} one = { .n = 1, .ev = *e };
	if (bpf_ringbuf_output(&events, &one, sizeof(one), wakeup_flags()))
		count_lost(&one.ev, 1);
}

/*
 * The CPU's batch, marked busy (NULL: another program on this CPU is in
 * the middle of filling it, or it cannot be had). Taken before the call's
 * end time is read, so that user space's flush (flush_events) never
 * leaves behind an event that ended before it started.
 */
static __always_inline struct kbpf_event_batch *batch_begin(void)
{
	__u32 zero = 0;
	struct kbpf_event_batch *b = bpf_map_lookup_elem(&staging, &zero);
	if (!b || b->busy)
		return NULL;
	b->busy = 1;
	return b;
}

static __always_inline void batch_end(struct kbpf_event_batch *b)
{
	if (b)
		b->busy = 0;
}

#include "stacks.bpf.h"

/* A call the maps could not keep: a loss of its process (a rare path). */
static __always_inline void lost_call(__u32 tgid)
{
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (p)
		__sync_fetch_and_add(&p->lost_calls, 1);
}

/*
 * The call created the entry KBPF_KEY(nr, error) of the tgid's image: one
 * more in kbpf_proc's list (a slot per entry: created once, NOEXIST).
 */
static __always_inline void key_created(__u32 tgid, __u32 image, __u32 nr, __u32 error,
					__u32 spill)
{
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (!p)
		return;
	__u32 slot = __sync_fetch_and_add(&p->n_keys, 1);
	if (cfg_per_thread || image != p->image) {
		/* not one of the list's keys: user space scans */
		p->n_keys = KBPF_KEYS_LISTED + 1;
		return;
	}
	if (slot < KBPF_KEYS_LISTED)
		p->keys[slot] = KBPF_KEY(nr, error) | spill;
}

/* n more in *p: a plain add in a per-CPU value, atomic in a shared one */
static __always_inline void add_u64(__u64 *p, __u64 n, bool shared)
{
	if (shared)
		__sync_fetch_and_add(p, n);
	else
		*p += n;
}

/* *p = min(*p, n) (0: none yet), or max: a few tries against other CPUs */
static __always_inline void bound_u64(__u64 *p, __u64 n, bool is_min, bool shared)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *p;
		if (is_min ? old != 0 && old <= n : old >= n)
			return;
		if (!shared) {
			*p = n;
			return;
		}
		if (__sync_val_compare_and_swap(p, old, n) == old)
			return;
	}
}

/*
 * The aggs entry of key, made at its first call: in the per-CPU map, else
 * (no memory) in the shared spill map (*shared), else NULL.
 */
static __always_inline struct kbpf_agg_value *agg_entry(const struct kbpf_agg_key *key,
							bool *shared)
{
	*shared = false;
	struct kbpf_agg_value *v = bpf_map_lookup_elem(&aggs, key);
	if (v)
		return v;
	if (bpf_map_update_elem(&aggs, key, &zero_value, BPF_NOEXIST) == 0)
		key_created(key->tgid, key->image, key->nr, 0, 0);
	v = bpf_map_lookup_elem(&aggs, key);
	if (v)
		return v;
	*shared = true;
	v = bpf_map_lookup_elem(&aggs_spill, key);
	if (v)
		return v;
	if (bpf_map_update_elem(&aggs_spill, key, &zero_value, BPF_NOEXIST) == 0)
		key_created(key->tgid, key->image, key->nr, 0, KBPF_KEY_SPILL);
	return bpf_map_lookup_elem(&aggs_spill, key);
}

/* One more failed call with error in the errnos entry: false if none. */
static __always_inline bool errno_add(const struct kbpf_errno_key *ekey)
{
	__u64 one = 1;
	__u64 *n = bpf_map_lookup_elem(&errnos, ekey);
	if (n) {
		(*n)++;
		return true;
	}
	if (bpf_map_update_elem(&errnos, ekey, &one, BPF_NOEXIST) == 0) {
		key_created(ekey->agg.tgid, ekey->agg.image, ekey->agg.nr, ekey->error, 0);
		return true;
	}
	n = bpf_map_lookup_elem(&errnos, ekey);
	if (n) { /* made by another CPU meanwhile */
		(*n)++;
		return true;
	}
	n = bpf_map_lookup_elem(&errnos_spill, ekey);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return true;
	}
	if (bpf_map_update_elem(&errnos_spill, ekey, &one, BPF_NOEXIST) == 0) {
		key_created(ekey->agg.tgid, ekey->agg.image, ekey->agg.nr, ekey->error,
			    KBPF_KEY_SPILL);
		return true;
	}
	n = bpf_map_lookup_elem(&errnos_spill, ekey);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return true;
	}
	return false;
}

static __always_inline void account(void *ctx, struct pt_regs *regs,
				    __u32 image, __u32 tgid,
				    __u32 tid, const struct inflight *f,
				    __u64 start_ns, __u64 duration_ns, long ret,
				    struct kbpf_event_batch *batch)
{
	__u32 nr = f->nr;
	struct kbpf_agg_key key = {
		.tgid = tgid,
		.tid = cfg_per_thread ? tid : 0,
		.image = image,
		.nr = nr,
	};
	bool shared;
	struct kbpf_agg_value *v = agg_entry(&key, &shared);
	if (!v) {
		lost_call(tgid);
		return;
	}
	/* A per-CPU value has no other writer: plain updates suffice. */
	add_u64(&v->count, 1, shared);
	add_u64(&v->time_ns, duration_ns, shared);
	add_u64(&v->off_cpu_ns, f->off_ns < duration_ns ? f->off_ns : duration_ns, shared);
	bound_u64(&v->min_ns, duration_ns, true, shared);
	bound_u64(&v->max_ns, duration_ns, false, shared);
	unsigned bucket = kp_hist_bucket(duration_ns);
	if (bucket >= KBPF_HIST_BUCKETS)
		bucket = KBPF_HIST_BUCKETS - 1;
	add_u64(&v->hist[bucket], 1, shared);
	bool failed = ret < 0 && ret >= -MAX_ERRNO;
	bool retry = ret == -EAGAIN &&
		     (cfg_would_block[(nr >> 6) & (KBPF_SYSCALL_MAX / 64 - 1)] &
		      (1ull << (nr & 63)));
	__u32 kind = f->kind;
	if (kind >= KP_KIND_FILE && kind <= KP_KINDS) {
		__u64 *k = v->kinds[kind - 1];
		add_u64(&k[0], 1, shared);
		add_u64(&k[1], duration_ns, shared);
		if (failed)
			add_u64(&k[retry ? 2 : 3], 1, shared);
	}

	if (failed) {
		add_u64(retry ? &v->retries : &v->errors, 1, shared);
		struct kbpf_errno_key ekey = { .agg = key, .error = -ret };
		if (!errno_add(&ekey))
			lost_call(tgid);
	}

	if (cfg_stacks)
		account_stack(ctx, regs, &key, duration_ns);

	if (cfg_events) {
		struct kbpf_event one_batch[1];
		struct kbpf_event *e = batch ? &batch->ev[batch->n & (KBPF_EVENT_BATCH - 1)]
					     : &one_batch[0];
		e->tgid = tgid;
		e->tid = tid;
		e->image = image;
		e->nr = nr;
		e->start_ns = start_ns;
		e->duration_ns = duration_ns;
		e->ret = ret;
		e->fd = f->fd;
		e->kind = kind;
		if (batch) {
			if (++batch->n >= KBPF_EVENT_BATCH)
				batch_submit(batch);
		} else {
			event_submit_one(e);
		}
	}
}

static __always_inline void on_exit(void *ctx, struct pt_regs *regs, long ret)
{
	/* Untraced threads have no storage: one cheap pointer check. */
	struct inflight *f = bpf_task_storage_get(&inflight,
						  bpf_get_current_task_btf(), 0, 0);
	if (!f || !f->start_ns)
		return;
	struct kbpf_event_batch *batch = cfg_events ? batch_begin() : NULL;
	__u64 now = bpf_ktime_get_ns();
	__u64 start_ns = f->start_ns;
	f->start_ns = 0;

	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u32 image = f->image;
	bool counted = f->counted;
	/*
	 * A successful execve returns in the new image (the exec handler
	 * bumped `image` and cleared KBPF_PROC_BEFORE_START), where it is
	 * counted: for these two the process is looked up again.
	 */
	if (f->nr == NR_EXECVE || f->nr == NR_EXECVEAT) {
		struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
		counted = p && !(p->flags & KBPF_PROC_BEFORE_START);
		image = p ? p->image : 0;
	}
	if (counted) {
		account(ctx, regs, image, tgid, (__u32)pid_tgid, f, start_ns,
			now - start_ns, ret, batch);
		check_pending_pipe(tgid, f, ret);
	}
	batch_end(batch);
}

static __always_inline struct kbpf_note *note_reserve(struct kbpf_proc *p,
						      __u32 size)
{
	struct kbpf_note *n = bpf_ringbuf_reserve(&notes, size, 0);
	if (!n) {
		__sync_fetch_and_add(&p->lost_notes, 1);
		return NULL;
	}
	__builtin_memset(n, 0, sizeof(*n));
	n->time_ns = bpf_ktime_get_ns();
	return n;
}

static __always_inline void on_fork(struct task_struct *parent,
				    struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);

	if (ptgid == ctgid || !cfg_follow)
		return; /* a thread: covered by its tgid */
	struct kbpf_proc *pp = bpf_map_lookup_elem(&traced, &ptgid);
	if (!pp || (pp->flags & KBPF_PROC_BEFORE_START))
		return;
	/* Before the child runs: not one of its syscalls is missed. */
	struct kbpf_proc cp = { .image = 1 };
	if (bpf_map_update_elem(&traced, &ctgid, &cp, BPF_ANY)) {
		__sync_fetch_and_add(&pp->lost_notes, 1);
		return;
	}
	struct kbpf_note *n = note_reserve(pp, sizeof(*n));
	if (!n)
		return;
	n->kind = KBPF_NOTE_FORK;
	n->tgid = ptgid;
	n->tid = BPF_CORE_READ(parent, pid);
	n->image = pp->image;
	n->child = ctgid;
	n->how_nr = (__u32)-1;
	struct inflight *f = bpf_task_storage_get(&inflight,
						  bpf_get_current_task_btf(), 0, 0);
	if (f && f->start_ns)
		n->how_nr = f->nr;
	bpf_ringbuf_submit(n, 0);
}

/* Whether the task's (new) comm is one of --comm's names. */
static __always_inline bool comm_wanted(struct task_struct *task)
{
	char comm[KBPF_COMM_LEN];
	if (bpf_probe_read_kernel_str(comm, sizeof(comm), task->comm) <= 0)
		return false;
	for (__u32 i = 0; i < KBPF_COMMS_MAX; i++) {
		if (i >= cfg_n_comms)
			return false;
		bool same = true;
		for (int k = 0; k < KBPF_COMM_LEN; k++) {
			if (comm[k] != cfg_comms[i][k]) {
				same = false;
				break;
			}
			if (!comm[k])
				break;
		}
		if (same)
			return true;
	}
	return false;
}

static __always_inline void on_exec(struct task_struct *task,
				    struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (!p && cfg_n_comms && comm_wanted(task)) {
		/* a process of a traced name: from this exec on, as the
		 * first image of a tree (user space's "start") */
		struct kbpf_proc np = { .image = 0, .flags = KBPF_PROC_BEFORE_START };
		bpf_map_update_elem(&traced, &tgid, &np, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&traced, &tgid);
	}
	if (!p)
		return;
	__u32 old_image = p->image;
	bool start = p->flags & KBPF_PROC_BEFORE_START;
	/* Other threads are gone (de_thread): nobody else updates p. */
	p->flags &= ~KBPF_PROC_BEFORE_START;
	p->image = old_image + 1;

	struct kbpf_note_exec *e = (void *)note_reserve(p, sizeof(*e));
	if (e) {
		e->note.n_keys = p->n_keys;
		__builtin_memcpy(e->note.keys, p->keys, sizeof(e->note.keys));
	}
	p->n_keys = 0; /* the new image's entries from here on */
	if (!e)
		return;
	e->note.kind = KBPF_NOTE_EXEC;
	e->note.tgid = tgid;
	e->note.tid = BPF_CORE_READ(task, pid);
	e->note.image = old_image;
	e->note.ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->note.origin_start = start;
	/* the kernel named the thread after the new file already */
	bpf_probe_read_kernel_str(e->note.comm, sizeof(e->note.comm), task->comm);
	e->filename[0] = 0;
	bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
				  BPF_CORE_READ(bprm, filename));
	/* The new image's argv strings, as the kernel just laid them out. */
	unsigned long arg_start = BPF_CORE_READ(task, mm, arg_start);
	unsigned long arg_end = BPF_CORE_READ(task, mm, arg_end);
	__u32 len = arg_end > arg_start ? arg_end - arg_start : 0;
	if (len > KBPF_ARGS_MAX - 1)
		len = KBPF_ARGS_MAX - 1;
	len &= KBPF_ARGS_MAX - 1; /* a bound the verifier sees */
	e->args_len = 0;
	if (len && !bpf_probe_read_user(e->args, len, (void *)arg_start))
		e->args_len = len;
	bpf_ringbuf_submit(e, 0);
}

/* Counting open descriptors by kind, one bitmap word per bpf_loop step. */
struct fd_walk {
	__u64 fd_array;	 /* struct file ** */
	__u64 open_fds;	 /* unsigned long * */
	__u32 counts[4]; /* file, pipe, socket, other */
};

static long fd_walk_word(__u32 word, struct fd_walk *w)
{
	__u64 bits = 0;

	if (bpf_probe_read_kernel(&bits, sizeof(bits),
				  (void *)(w->open_fds + word * 8)))
		return 1;
	for (int b = 0; b < 64; b++) {
		if (!bits)
			break;
		if (!(bits & 1)) {
			bits >>= 1;
			continue;
		}
		bits >>= 1;
		struct file *file = NULL;
		bpf_probe_read_kernel(&file, sizeof(file),
				      (void *)(w->fd_array + (word * 64 + b) * 8));
		if (!file)
			continue;
		__u32 kind = inode_kind(BPF_CORE_READ(file, f_inode));
		if (kind >= KP_KIND_FILE && kind <= KP_KINDS)
			w->counts[kind - 1]++;
	}
	return 0;
}

static __always_inline void on_task_exit(void *ctx, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct kbpf_proc *p = bpf_map_lookup_elem(&traced, &tgid);
	if (!p)
		return;

	/* exit and exit_group never return: their call ends here. */
	struct inflight *f = bpf_task_storage_get(&inflight,
						  bpf_get_current_task_btf(), 0, 0);
	if (f && f->start_ns && !(p->flags & KBPF_PROC_BEFORE_START)) {
		struct kbpf_event_batch *batch = cfg_events ? batch_begin() : NULL;
		__u64 now = bpf_ktime_get_ns();
		account(ctx, NULL, p->image, tgid, (__u32)pid_tgid, f, f->start_ns,
			now - f->start_ns, 0, batch);
		batch_end(batch);
		f->start_ns = 0;
	}

	/* The tracepoint fires after signal->live was decremented. */
	bool group_dead = BPF_CORE_READ(task, signal, live.counter) == 0;
	if (!group_dead) {
		if (!cfg_per_thread)
			return;
		struct kbpf_note *n = note_reserve(p, sizeof(*n));
		if (!n)
			return;
		n->kind = KBPF_NOTE_THREAD_EXIT;
		n->tgid = tgid;
		n->tid = (__u32)pid_tgid;
		n->image = p->image;
		bpf_get_current_comm(n->comm, sizeof(n->comm));
		bpf_ringbuf_submit(n, 0);
		return;
	}

	struct kbpf_note *n = note_reserve(p, sizeof(*n));
	if (!n) {
		bpf_map_delete_elem(&traced, &tgid);
		return;
	}
	n->kind = KBPF_NOTE_EXIT;
	n->tgid = tgid;
	n->tid = (__u32)pid_tgid;
	n->image = p->image;
	n->pending_pipe_readers = p->pending_pipe_readers;
	n->pending_pipe_writers = p->pending_pipe_writers;
	n->lost_events = p->lost_events;
	n->lost_calls = p->lost_calls;
	n->lost_notes = p->lost_notes;
	n->n_keys = p->n_keys;
	__builtin_memcpy(n->keys, p->keys, sizeof(n->keys));
	if (BPF_CORE_READ(task, signal, flags) & SIGNAL_GROUP_EXIT)
		n->exit_code = BPF_CORE_READ(task, signal, group_exit_code);
	else
		n->exit_code = BPF_CORE_READ(task, exit_code);

	/* exit_files() runs after this tracepoint: the table is intact. */
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	if (fdt) {
		struct fd_walk w = {
			.fd_array = (__u64)BPF_CORE_READ(fdt, fd),
			.open_fds = (__u64)BPF_CORE_READ(fdt, open_fds),
		};
		__u32 words = BPF_CORE_READ(fdt, max_fds) / 64;
		if (words > (1 << 14))
			words = 1 << 14;
		if (bpf_loop(words, fd_walk_word, &w, 0) >= 0) {
			n->fds_known = 1;
			for (int i = 0; i < 4; i++)
				n->fds[i] = w.counts[i];
		}
	}
	bpf_ringbuf_submit(n, 0);
	bpf_map_delete_elem(&traced, &tgid);
}

/*
 * Switches of a thread in a traced call that the storage did not show:
 * the kernel refused it to this program (its recursion guard) when the
 * thread left or came back. A thread in a call leaves the CPU before it
 * comes back and comes back before it leaves again, so the other half
 * of the pair finds the gap. Those calls' time off CPU is short; user
 * space says how many.
 */
__u64 switches_unseen = 0;

/*
 * A traced thread in a syscall leaves the CPU (it blocks, or is
 * preempted) and comes back: the time between is the call's time off
 * CPU. Threads that are in no traced call have no storage or start_ns 0,
 * so every other switch costs two storage lookups. tp_btf only: task
 * storage needs the task pointers BTF gives (the raw_tp set does without).
 */
static __always_inline void on_switch(struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;
	struct inflight *f = bpf_task_storage_get(&inflight, prev, 0, 0);
	if (f && f->start_ns) {
		if (f->off_at) /* its coming back was not seen */
			__sync_fetch_and_add(&switches_unseen, 1);
		now = bpf_ktime_get_ns();
		f->off_at = now;
	}
	f = bpf_task_storage_get(&inflight, next, 0, 0);
	if (f && f->start_ns) {
		if (!f->off_at) { /* its leaving was not seen */
			__sync_fetch_and_add(&switches_unseen, 1);
			return;
		}
		if (!now)
			now = bpf_ktime_get_ns();
		if (now > f->off_at)
			f->off_ns += now - f->off_at;
		f->off_at = 0;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	on_switch(prev, next);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_btf, struct pt_regs *regs, long id)
{
	on_enter(regs, id);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_btf, struct pt_regs *regs, long ret)
{
	on_exit(ctx, regs, ret);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *task, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	on_exec(task, bprm);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *task)
{
	on_task_exit(ctx, task);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_raw, struct pt_regs *regs, long id)
{
	on_enter(regs, id);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_raw, struct pt_regs *regs, long ret)
{
	on_exit(ctx, regs, ret);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *task, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	on_exec(task, bprm);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *task)
{
	on_task_exit(ctx, task);
	return 0;
}

/*
 * Not attached: user space runs it on each CPU (BPF_F_TEST_RUN_ON_CPU) to
 * hand over that CPU's partial batch, at each interval and whenever it
 * needs every event up to now. Returns 1 when a program it interrupted on
 * that CPU is filling the batch: user space tries again.
 */
SEC("raw_tp")
int flush_events(void *ctx)
{
	__u32 zero = 0;
	struct kbpf_event_batch *b = bpf_map_lookup_elem(&staging, &zero);
	if (!b)
		return 0;
	if (b->busy)
		return 1;
	if (b->n)
		batch_submit(b);
	return 0;
}
