/* SPDX-License-Identifier: MIT */
/*
 * Per-thread accounting and the hot path (core/account.c): a thread's
 * block of syscall slots, the call being timed (struct kp_call), and the
 * inline pair kp_call_start()/kp_call_end() that every hook mode times a
 * call with. When a call ends past the deadline, kp_call_end() calls
 * kp_on_deadline, which the sink sets to its periodic flush: the layers
 * above plug in here, nothing here calls up.
 */
#ifndef KPROF_CORE_ACCOUNT_H
#define KPROF_CORE_ACCOUNT_H

#include "clock.h"
#include "fd_kinds.h"
#include "histogram.h"
#include "stack.h"

/* ---- per-thread state (account.c) ---- */

#define KP_ERRNO_PAIRS 6
#define KP_BLOCK_SIZE 65536
#define KP_RING_EVENTS 2048
/* Call sites kept per syscall and thread: the first KP_SITES distinct
 * return addresses, then everything else under "other". Rewrite mode
 * sees libc's inner sites too: Node's main thread reaches 10 for read and
 * 9 for close, and its hot close site came 7th. 12 keeps 53 slots (distinct
 * syscalls) per thread block; more syscalls than that are still counted,
 * in the process's totals. */
#define KP_SITES 12

struct kp_slot {
	KP_SC_COUNTERS(KP_SC_U64) /* record_schema.h */
	uint32_t nr;
	uint32_t errno_value[KP_ERRNO_PAIRS];
	uint64_t errno_count[KP_ERRNO_PAIRS + 1]; /* last: any other errno */
	uint32_t hist[KP_HIST_BUCKETS];
	uint64_t site_addr[KP_SITES];
	uint64_t site_count[KP_SITES + 1]; /* last: other sites, unknown site */
	uint64_t site_time_ns[KP_SITES + 1];
	/* calls on a descriptor by its kind (KP_KIND_FILE - 1, ...):
	 * count, time_ns, retries, errors (record_writer.h) */
	uint64_t kinds[KP_KINDS][KP_KIND_COUNTERS];
};

struct kp_event {
	uint64_t start_ns;
	uint64_t duration_ns;
	int64_t ret;
	uint16_t nr;
	uint8_t kind; /* KP_KIND_*, KP_KIND_NONE: no descriptor argument */
	uint8_t spare;
	int32_t fd;
};

/* Single producer (the owner thread), consumers serialized by the flush lock. */
struct kp_ring {
	uint64_t head;
	uint64_t tail;
	uint64_t dropped;
	struct kp_event ev[KP_RING_EVENTS];
};

enum { KP_BLOCK_FREE, KP_BLOCK_CLAIMED, KP_BLOCK_LIVE, KP_BLOCK_EXITED };

struct kp_thread {
	struct kp_thread *next; /* every block ever made; never unlinked */
	uint32_t state;
	uint32_t serial;
	uint32_t tid;		/* 0: the fork child's first thread (= pid) */
	volatile uint32_t busy;
	uint32_t nslots;
	volatile uint32_t cur_nr; /* syscall nr + 1 while inside a call */
	volatile long cur_fd;
	struct kp_ring *ring;	/* NULL unless KPROF_EVENTS=1 */
	/* the name the thread gave itself (prctl PR_SET_NAME, which glibc's
	 * pthread_setname_np makes for the calling thread); "": none seen */
	char name[16];
	uint8_t index[KP_SYSCALL_MAX]; /* nr -> slot + 1 */
	struct kp_slot slots[];
};
_Static_assert(__builtin_offsetof(struct kp_thread, state) == KP_THREAD_STATE_OFFSET &&
		       KP_BLOCK_EXITED == KP_THREAD_EXITED,
	       "entry.S ends a block by these");

#define KP_SLOTS                                                               \
	((KP_BLOCK_SIZE - sizeof(struct kp_thread)) / sizeof(struct kp_slot))

/* The calling thread named itself name (a successful PR_SET_NAME): as the
 * kernel keeps it, 15 bytes at most. */
void kp_thread_named(const char *name);

extern __thread struct kp_thread *kp_self;

struct kp_call {
	struct kp_thread *t; /* NULL: account into the global table */
	uint64_t t0;
	uint32_t nr;
	uint32_t prev_nr;
	long prev_fd;
	uint64_t site; /* return address of the hooked function, 0: unknown */
	unsigned clock; /* KP_CLOCK_* that t0 was read on */
	unsigned fd_kind; /* KP_KIND_* of the descriptor argument, or NONE */
	long fd;	  /* the descriptor argument (arg0) */
};

/*
 * The descriptor and its kind, before the call is timed: a descriptor the
 * table does not know costs one fstat here, once (fd_kinds.h).
 */
static inline void kp_call_fd(struct kp_call *c, unsigned nr, long arg0)
{
	c->fd = arg0;
	c->fd_kind = kp_fd_kind_at_call(nr, arg0);
}

/* Syscalls whose EAGAIN is a would-block (kp_syscall_would_block), filled
 * by setup() before the shim goes active. */
extern uint64_t kp_would_block_bits[KP_SYSCALL_MAX / 64];

/* A failed call is a retry, not an error: EAGAIN of a call that would have
 * blocked. futex's EAGAIN (the word had changed) and clone's (a limit) are
 * errors. Only on the failure path. */
static inline bool kp_is_retry(unsigned nr, int err)
{
	return (err == EAGAIN || err == EWOULDBLOCK) && nr < KP_SYSCALL_MAX &&
	       ((kp_would_block_bits[nr / 64] >> (nr % 64)) & 1);
}

static inline void kp_kind_add(uint64_t *k, unsigned nr, uint64_t ns, bool failed,
			       int err)
{
	k[KP_KIND_COUNT]++;
	k[KP_KIND_TIME_NS] += ns;
	if (unlikely(failed))
		k[kp_is_retry(nr, err) ? KP_KIND_RETRIES : KP_KIND_ERRORS]++;
}

/* The call's start: the kind of clock first, then a tick of that kind. */
static inline void kp_call_stamp(struct kp_call *c)
{
	unsigned kind = kp_clock_kind();
	c->clock = kind;
	c->t0 = kp_ticks_of(kind);
}

/* In the exported hook itself (not in a helper): who called the libc function. */
#define KP_CALLER() ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* Hot path: a linear look-up in a table of KP_SITES, no allocation. */
static inline void kp_site_add(struct kp_slot *s, uint64_t pc, uint64_t ns)
{
	unsigned i = KP_SITES;
	if (likely(pc)) {
		for (i = 0; i < KP_SITES; i++) {
			if (s->site_addr[i] == pc)
				break;
			if (s->site_addr[i] == 0) {
				s->site_addr[i] = pc;
				break;
			}
		}
	}
	s->site_count[i]++;
	s->site_time_ns[i] += ns;
}

/*
 * Returns false when the call must pass through unaccounted (shim passive,
 * vfork child, init in progress on this thread).
 */
bool kp_call_begin_slow(struct kp_call *c, unsigned nr, long arg0);
void kp_account_global(unsigned nr, uint64_t ns, bool failed, int err);
/* kp_account_global of a call, with its descriptor kind. */
void kp_account_global_call(const struct kp_call *c, uint64_t ns, bool failed,
			    int err);
void kp_account_slot(struct kp_thread *t, struct kp_slot *s, uint64_t ns,
		     bool failed, int err);
struct kp_slot *kp_slot_new(struct kp_thread *t, unsigned nr);
void kp_event_add(struct kp_thread *t, unsigned nr, uint64_t start_ns, uint64_t ns,
		  int64_t ret, long fd, unsigned kind);
extern bool kp_events_enabled;

/* The call becomes thread t's current one, and its clock starts. */
static inline void kp_call_enter(struct kp_call *c, struct kp_thread *t, unsigned nr,
				 long arg0)
{
	c->t = t;
	c->nr = nr;
	c->prev_nr = t->cur_nr;
	c->prev_fd = t->cur_fd;
	t->cur_fd = arg0;
	t->cur_nr = nr + 1;
	kp_call_fd(c, nr, arg0);
	kp_call_stamp(c);
}

/* Starts timing a call on this thread (both hook modes). */
static inline bool kp_call_start(struct kp_call *c, unsigned nr, long arg0)
{
	struct kp_thread *t = kp_self;
	c->site = 0;
	if (unlikely(!t))
		return kp_call_begin_slow(c, nr, arg0);
	kp_call_enter(c, t, nr, arg0);
	return true;
}
/* What ends a call past the deadline: the sink's periodic flush, set at
 * start-up (sink/flush.c's kp_flush_init); NULL until then. */
extern void (*kp_on_deadline)(void);

/* What a call that comes before the shim went active waits on: the end of
 * start-up (symbols/start.c's kp_ensure_init, set before rewrite mode
 * starts); NULL until then. */
extern void (*kp_wait_start)(void);

/* What a thread does once it has its block (at its first counted call):
 * patch mode arms Syscall User Dispatch for it (rewrite/dispatch.c);
 * NULL otherwise. */
extern void (*kp_on_attach)(void);

/* Counted, not timed: the clock changed under the call (core/account.c). */
void kp_call_end_untimed(struct kp_call *c, bool failed, int err);

/* ret: as the kernel returned it (-errno on failure), for event records. */
static inline void kp_call_end(struct kp_call *c, bool failed, int err,
			       int64_t ret)
{
	unsigned kind = kp_clock_kind();
	uint64_t t1 = kp_ticks_of(kind);
	struct kp_thread *t = c->t;
	uint64_t ns;
	if (likely(kind == c->clock)) {
		/* the time of the call, less the clock reads' own */
		uint64_t t0 = c->t0 + kp_clock.window[kind & 1];
		ns = likely(t1 > t0) ? kp_ticks_delta_ns(kind, t0, t1) : 0;
	}
	else if (!kp_clock_span_ns(c->clock, c->t0, kind, t1, &ns)) {
		kp_call_end_untimed(c, failed, err);
		return;
	}
	if (unlikely(!t || c->nr >= KP_SYSCALL_MAX)) {
		if (c->nr < KP_SYSCALL_MAX)
			kp_account_global_call(c, ns, failed, err);
		return;
	}
	t->cur_nr = c->prev_nr;
	t->cur_fd = c->prev_fd;
	if (unlikely(t->busy)) {
		kp_account_global_call(c, ns, failed, err);
		return;
	}
	t->busy = 1;
	kp_barrier();
	unsigned idx = t->index[c->nr];
	struct kp_slot *s = likely(idx) ? &t->slots[idx - 1] : kp_slot_new(t, c->nr);
	if (likely(s)) {
		s->count++;
		s->time_ns += ns;
		if (ns < s->min_ns)
			s->min_ns = ns;
		if (ns > s->max_ns)
			s->max_ns = ns;
		s->hist[kp_hist_bucket(ns)]++;
		kp_site_add(s, c->site, ns);
		if (c->fd_kind)
			kp_kind_add(s->kinds[c->fd_kind - 1], c->nr, ns, failed, err);
		if (unlikely(failed))
			kp_account_slot(t, s, ns, failed, err);
	}
	if (unlikely(t->ring))
		kp_event_add(t, c->nr, kp_ticks_to_mono(c->clock, c->t0), ns, ret,
			     c->fd, c->fd_kind);
	kp_barrier();
	t->busy = 0;
	if (unlikely(!s))
		kp_account_global_call(c, ns, failed, err);
	if (unlikely(t1 >= kp_deadline) && kp_on_deadline)
		kp_on_deadline();	/* a flush moves to the shim stack itself */
}

/* The call never returns here (fork child): undo what begin did. */
static inline void kp_call_abandon(struct kp_call *c)
{
	if (c->t) {
		c->t->cur_nr = c->prev_nr;
		c->t->cur_fd = c->prev_fd;
	}
}

/*
 * Accounts a call that cannot be timed (exec, exit_group: the image is gone
 * when they return); count_it false adds only the failure of a call that
 * was counted before it was made.
 */
void kp_account_untimed(unsigned nr, bool failed, int err, bool count_it);
/* The same for a call whose descriptor kind is known (KP_KIND_NONE: none). */
void kp_account_untimed_kind(unsigned nr, unsigned fd_kind, bool failed, int err,
			     bool count_it);

/* ---- thread blocks (account.c) ---- */

struct kp_thread *kp_thread_attach(void);
/* The thread's TLS is not glibc's (a clone child with CLONE_SETTLS and a
 * buffer of the program's): the shim keeps nothing per thread there. */
bool kp_tls_foreign(void);
/* This thread is exiting (its pthread key destructor, or its exit syscall). */
void kp_thread_end(struct kp_thread *t);
/* kp_thread_end less the block's EXITED state: for a caller still on the
 * shim stack under the block, which sets the state once it has left. */
void kp_thread_leave(struct kp_thread *t);
int kp_thread_key_init(void);
void kp_threads_after_fork(void);
/* Iterates every block in the process. */
struct kp_thread *kp_threads_first(void);
void kp_thread_recycle(struct kp_thread *t);
extern struct kp_slot kp_global_slots[KP_SYSCALL_MAX];
/* Bit nr set: kp_global_slots[nr] was written (the others are all zero). */
extern uint64_t kp_global_touched[KP_SYSCALL_MAX / 64];

#endif
