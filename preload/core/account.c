/* SPDX-License-Identifier: MIT */
/*
 * Per-thread accounting blocks. A thread gets a 64 KiB block on its first
 * hooked call (a recycled one, or rarely a fresh mmap) and finds it through
 * the initial-exec TLS pointer kp_self: the hot path takes no lock and
 * makes no call. Every block ever made stays on one lock-free list that the
 * flusher walks; a thread's exit (pthread key destructor) marks its block
 * EXITED, and the flusher writes it one last time and frees it for reuse.
 * What cannot go to the thread's block (a signal handler interrupting the
 * bookkeeping, a full slot table, a call after the thread's key destructor)
 * goes to the process-wide table kp_global_slots with atomic operations.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "account.h"
#include "base.h"
#include "stack.h"

__thread struct kp_thread *kp_self;

struct kp_slot kp_global_slots[KP_SYSCALL_MAX];
uint64_t kp_global_touched[KP_SYSCALL_MAX / 64];

/*
 * A global slot about to be written, marked in kp_global_touched: the
 * table is 512 slots of several hundred bytes, and a fork child that
 * cleared or a flush that read all of it touched every page (about 85
 * page faults per fork child, on a 2-vCPU KVM guest 200 us).
 */
static struct kp_slot *global_slot(unsigned nr)
{
	uint64_t bit = 1ULL << (nr % 64);
	if (!(__atomic_load_n(&kp_global_touched[nr / 64], __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(&kp_global_touched[nr / 64], bit, __ATOMIC_RELEASE);
	return &kp_global_slots[nr];
}
bool kp_events_enabled;

static struct kp_thread *all_blocks;
static uint32_t next_serial = 1;
static pthread_key_t thread_key;

struct kp_thread *kp_threads_first(void)
{
	return __atomic_load_n(&all_blocks, __ATOMIC_ACQUIRE);
}

static size_t block_bytes(void)
{
	size_t n = KP_BLOCK_SIZE;
	if (kp_events_enabled)
		n += (sizeof(struct kp_ring) + 4095) & ~(size_t)4095;
	return n;
}

/*
 * Zeroes a block's counters. Never its link or its state: a zero state is
 * FREE, and a thread could claim the block halfway through the memset,
 * then share it with the next claimer (two threads' calls under one).
 */
static void block_reset(struct kp_thread *t)
{
	struct kp_ring *ring = t->ring;
	size_t from = offsetof(struct kp_thread, serial);
	/* only the used part: the rest is still zero */
	size_t used = offsetof(struct kp_thread, slots) + t->nslots * sizeof(struct kp_slot);
	_Static_assert(offsetof(struct kp_thread, next) < offsetof(struct kp_thread, serial) &&
			       offsetof(struct kp_thread, state) < offsetof(struct kp_thread, serial),
		       "block_reset keeps next and state");
	memset((char *)t + from, 0, used - from);
	t->ring = ring;
	if (ring) {
		ring->head = ring->tail = 0;
		ring->dropped = 0;
	}
}

static struct kp_thread *block_claim(void)
{
	for (struct kp_thread *t = kp_threads_first(); t; t = t->next) {
		uint32_t expect = KP_BLOCK_FREE;
		if (__atomic_load_n(&t->state, __ATOMIC_RELAXED) == KP_BLOCK_FREE &&
		    __atomic_compare_exchange_n(&t->state, &expect, KP_BLOCK_CLAIMED, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return t;
	}
	/* the thread's shim stack (stack.h) lies under its block, above a
	 * guard page: a block and its stack are reused together */
	size_t bytes = KP_STACK_GUARD + KP_STACK_SIZE + block_bytes();
	long p = kp_raw(SYS_mmap, 0, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096)
		return NULL;
	kp_raw(SYS_mprotect, p, KP_STACK_GUARD, PROT_NONE);
	struct kp_thread *t = (struct kp_thread *)(p + KP_STACK_GUARD + KP_STACK_SIZE);
	t->state = KP_BLOCK_CLAIMED;
	if (kp_events_enabled)
		t->ring = (struct kp_ring *)((char *)t + KP_BLOCK_SIZE);
	struct kp_thread *head = kp_threads_first();
	do {
		t->next = head;
	} while (!__atomic_compare_exchange_n(&all_blocks, &head, t, true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	return t;
}

struct kp_thread *kp_thread_attach(void)
{
	if (kp_tls_foreign())
		return NULL; /* no pthread key, no block: see kp_call_begin_slow */
	kp_tls_flags |= KP_TLS_ATTACHING;
	struct kp_thread *t = block_claim();
	if (t) {
		t->tid = (uint32_t)kp_raw0(SYS_gettid);
		t->name[0] = 0;
		t->serial = __atomic_fetch_add(&next_serial, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&t->state, KP_BLOCK_LIVE, __ATOMIC_RELEASE);
		/* key < 32: setspecific stores into the static array, no malloc */
		pthread_setspecific(thread_key, t);
		kp_self = t;
		kp_stack_attach((uint64_t)(uintptr_t)t - KP_STACK_SIZE, (uint64_t)(uintptr_t)t);
		if (kp_on_attach)
			kp_on_attach();
	}
	kp_tls_flags &= ~KP_TLS_ATTACHING;
	return t;
}

void kp_thread_named(const char *name)
{
	struct kp_thread *t = kp_self;
	if (!t || !name)
		return;
	/* the kernel read these bytes for the call that just succeeded */
	char buf[sizeof(t->name)];
	size_t n = 0;
	for (; n < sizeof(buf) - 1 && name[n]; n++)
		buf[n] = name[n];
	buf[n] = 0;
	/* a flush reading it meanwhile may see a mix: a name, never a crash */
	memcpy(t->name, buf, sizeof(buf));
}

/* The thread is going: its block is written once more, then reused. */
void kp_thread_leave(struct kp_thread *t)
{
	kp_self = NULL;
	kp_tls_flags |= KP_TLS_EXITING;
	kp_stack_detach();
	t->cur_nr = 0;
}

void kp_thread_end(struct kp_thread *t)
{
	kp_thread_leave(t);
	/* from here on the flusher may hand the block, and the stack under
	 * it, to a new thread: this thread is not running on it (the
	 * destructor runs on the thread's own stack) */
	__atomic_store_n(&t->state, KP_BLOCK_EXITED, __ATOMIC_RELEASE);
}

static void thread_key_destructor(void *p)
{
	/* rewrite mode sees the thread's last calls (the stack's madvise,
	 * exit): its exit syscall ends the block (rewrite/hook.c) */
	if (kp_rw_active)
		return;
	kp_thread_end(p);
}

int kp_thread_key_init(void)
{
	int err = pthread_key_create(&thread_key, thread_key_destructor);
	if (err)
		return -err;
	if (thread_key >= 32)
		return -EMFILE;
	return 0;
}

void kp_thread_recycle(struct kp_thread *t)
{
	block_reset(t);
	__atomic_store_n(&t->state, KP_BLOCK_FREE, __ATOMIC_RELEASE);
}

/*
 * In the child of fork(): only the forking thread exists. Its counters
 * restart from zero in the new stream; every other block is free again.
 */
void kp_threads_after_fork(void)
{
	struct kp_thread *self = kp_self;
	for (struct kp_thread *t = kp_threads_first(); t; t = t->next) {
		if (t == self || t->state == KP_BLOCK_FREE)
			continue;
		kp_thread_recycle(t);
	}
	for (unsigned w = 0; w < KP_SYSCALL_MAX / 64; w++) {
		for (uint64_t bits = kp_global_touched[w]; bits; bits &= bits - 1)
			memset(&kp_global_slots[w * 64 + (unsigned)__builtin_ctzll(bits)], 0,
			       sizeof(struct kp_slot));
		kp_global_touched[w] = 0;
	}
	next_serial = 1;
	if (self) {
		long cur_fd = self->cur_fd;
		uint32_t cur_nr = self->cur_nr;
		block_reset(self);
		self->cur_fd = cur_fd;
		self->cur_nr = cur_nr;
		self->serial = next_serial++;
		self->tid = 0; /* the child's pid, learnt at the first flush */
		self->state = KP_BLOCK_LIVE;
	}
}

/*
 * Whether this thread runs on a thread pointer that is not glibc's: a
 * clone child given a TLS of its own (CLONE_SETTLS) that no pthread set
 * up. Chromium's sandbox chroots from a CLONE_VM|CLONE_VFORK|CLONE_SETTLS
 * child whose TLS is a zeroed buffer on the parent's stack: there our
 * TLS variables read as a new thread's, and attaching a block
 * (pthread_setspecific through the TCB's self pointer, 0) died of
 * SIGSEGV in every hook mode. glibc's TCB starts with pointers to itself
 * (x86_64's tcbhead_t: tcb, dtv, self); a zeroed one has none. Such a
 * thread's calls pass through uncounted, as a vfork child's do.
 */
bool kp_tls_foreign(void)
{
#if defined(__x86_64__)
	uintptr_t self;
	__asm__ volatile("movq %%fs:0x10, %0" : "=r"(self));
	return self == 0;
#else
	return false;
#endif
}

bool kp_call_begin_slow(struct kp_call *c, unsigned nr, long arg0)
{
	unsigned flags = kp_tls_flags;
	if (flags & (KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT))
		return false;
	if (kp_tls_foreign())
		return false;
	if (kp_state != KP_ACTIVE) {
		/* start-up in progress on another thread (rewrite mode patches
		 * code before the shim goes active): wait for it to end */
		if (kp_wait_start)
			kp_wait_start();
		if (kp_state != KP_ACTIVE || (kp_tls_flags & KP_TLS_IN_INIT))
			return false;
	}
	struct kp_thread *t = NULL;
	if (!(flags & (KP_TLS_EXITING | KP_TLS_ATTACHING)))
		t = kp_thread_attach();
	if (!t) {
		/* counted in the process-wide table */
		c->t = NULL;
		c->nr = nr;
		kp_call_fd(c, nr, arg0);
		kp_call_stamp(c);
		return true;
	}
	kp_call_enter(c, t, nr, arg0);
	return true;
}

struct kp_slot *kp_slot_new(struct kp_thread *t, unsigned nr)
{
	uint32_t n = t->nslots;
	if (n >= KP_SLOTS)
		return NULL;
	struct kp_slot *s = &t->slots[n];
	s->nr = nr;
	s->min_ns = UINT64_MAX;
	__atomic_store_n(&t->nslots, n + 1, __ATOMIC_RELEASE);
	t->index[nr] = (uint8_t)(n + 1);
	return s;
}

uint64_t kp_would_block_bits[KP_SYSCALL_MAX / 64];

void kp_account_slot(struct kp_thread *t, struct kp_slot *s, uint64_t ns,
		     bool failed, int err)
{
	(void)t;
	(void)ns;
	if (!failed)
		return;
	if (kp_is_retry(s->nr, err))
		s->retries++;
	else
		s->errors++;
	for (unsigned i = 0; i < KP_ERRNO_PAIRS; i++) {
		if (s->errno_value[i] == (uint32_t)err) {
			s->errno_count[i]++;
			return;
		}
		if (s->errno_value[i] == 0) {
			s->errno_value[i] = (uint32_t)err;
			s->errno_count[i]++;
			return;
		}
	}
	s->errno_count[KP_ERRNO_PAIRS]++;
}

static void atomic_min(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
	while ((cur == 0 || v < cur) &&
	       !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* Global table: min_ns 0 means "none yet" (a 0 ns call stays 0). */
void kp_account_global(unsigned nr, uint64_t ns, bool failed, int err)
{
	if (nr >= KP_SYSCALL_MAX)
		return;
	struct kp_slot *s = global_slot(nr);
	__atomic_fetch_add(&s->time_ns, ns, __ATOMIC_RELAXED);
	atomic_min(&s->min_ns, ns ? ns : 1);
	atomic_max(&s->max_ns, ns);
	__atomic_fetch_add(&s->hist[kp_hist_bucket(ns)], 1, __ATOMIC_RELAXED);
	if (failed) {
		__atomic_fetch_add(kp_is_retry(nr, err) ? &s->retries : &s->errors, 1,
				   __ATOMIC_RELAXED);
		unsigned i;
		for (i = 0; i < KP_ERRNO_PAIRS; i++) {
			uint32_t v = __atomic_load_n(&s->errno_value[i], __ATOMIC_ACQUIRE);
			if (v == 0) {
				uint32_t expect = 0;
				if (__atomic_compare_exchange_n(&s->errno_value[i], &expect,
								(uint32_t)err, false,
								__ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE))
					break;
				v = expect;
			}
			if (v == (uint32_t)err)
				break;
		}
		__atomic_fetch_add(&s->errno_count[i], 1, __ATOMIC_RELAXED);
	}
	/* count last: the flusher skips a slot whose count is still 0 */
	__atomic_fetch_add(&s->count, 1, __ATOMIC_RELEASE);
}

static void kind_global(unsigned nr, unsigned fd_kind, uint64_t ns, bool failed,
			int err)
{
	uint64_t *k = global_slot(nr)->kinds[fd_kind - 1];
	__atomic_fetch_add(&k[KP_KIND_COUNT], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&k[KP_KIND_TIME_NS], ns, __ATOMIC_RELAXED);
	if (failed)
		__atomic_fetch_add(&k[kp_is_retry(nr, err) ? KP_KIND_RETRIES : KP_KIND_ERRORS], 1,
				   __ATOMIC_RELAXED);
}

void kp_account_global_call(const struct kp_call *c, uint64_t ns, bool failed,
			    int err)
{
	if (c->nr >= KP_SYSCALL_MAX)
		return;
	/* before the count: the flusher skips a slot whose count is still 0 */
	if (c->fd_kind)
		kind_global(c->nr, c->fd_kind, ns, failed, err);
	kp_account_global(c->nr, ns, failed, err);
}

void kp_account_untimed(unsigned nr, bool failed, int err, bool count_it)
{
	kp_account_untimed_kind(nr, KP_KIND_NONE, failed, err, count_it);
}

void kp_account_untimed_kind(unsigned nr, unsigned fd_kind, bool failed, int err,
			     bool count_it)
{
	struct kp_thread *t = kp_self;
	if (!t && kp_state == KP_ACTIVE &&
	    !(kp_tls_flags & (KP_TLS_EXITING | KP_TLS_ATTACHING | KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT)))
		t = kp_thread_attach();
	if (nr >= KP_SYSCALL_MAX)
		return;
	if (!t || t->busy) {
		if (count_it) {
			if (fd_kind)
				kind_global(nr, fd_kind, 0, failed, err);
			kp_account_global(nr, 0, failed, err);
		} else if (failed) {
			struct kp_slot *g = global_slot(nr);
			__atomic_fetch_add(kp_is_retry(nr, err) ? &g->retries : &g->errors, 1,
					   __ATOMIC_RELAXED);
		}
		return;
	}
	t->busy = 1;
	kp_barrier();
	unsigned idx = t->index[nr];
	struct kp_slot *s = idx ? &t->slots[idx - 1] : kp_slot_new(t, nr);
	if (s) {
		if (count_it) {
			s->count++;
			s->min_ns = 0;
			s->hist[0]++;
			if (fd_kind)
				kp_kind_add(s->kinds[fd_kind - 1], nr, 0, failed, err);
		}
		kp_account_slot(t, s, 0, failed, err);
	}
	kp_barrier();
	t->busy = 0;
	if (!s && count_it) {
		if (fd_kind)
			kind_global(nr, fd_kind, 0, failed, err);
		kp_account_global(nr, 0, failed, err);
	}
}

/* Records one call in the thread's event ring; full ring: flush it or drop. */
void kp_event_add(struct kp_thread *t, unsigned nr, uint64_t start_ns, uint64_t ns,
		  int64_t ret, long fd, unsigned kind)
{
	struct kp_ring *r = t->ring;
	uint64_t head = r->head;
	if (head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= KP_RING_EVENTS) {
		/* the flush takes the count with an exchange */
		__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	struct kp_event *e = &r->ev[head % KP_RING_EVENTS];
	e->start_ns = start_ns;
	e->duration_ns = ns;
	e->nr = (uint16_t)nr;
	e->ret = ret;
	e->kind = (uint8_t)kind;
	e->fd = kind ? (int32_t)fd : -1;
	__atomic_store_n(&r->head, head + 1, __ATOMIC_RELEASE);
	if (head + 1 - r->tail >= KP_RING_EVENTS)
		__atomic_store_n(&kp_deadline, 0, __ATOMIC_RELAXED);
}

/* Counted, not timed: the clock changed under the call. */
void kp_call_end_untimed(struct kp_call *c, bool failed, int err)
{
	kp_call_abandon(c);
	if (c->nr < KP_SYSCALL_MAX)
		kp_account_untimed_kind(c->nr, c->fd_kind, failed, err, true);
}
