/* SPDX-License-Identifier: MIT */
/*
 * Internal interfaces of libkprof.so, the LD_PRELOAD syscall profiler.
 * Everything here is hidden (-fvisibility=hidden); only the hooks are
 * exported (libkprof.map). The hot path is the inline pair
 * kp_call_begin()/kp_call_end() used by every hook.
 */
#ifndef KPROF_PRELOAD_H
#define KPROF_PRELOAD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include "arch_syscalls.h"
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <time.h>
#include <dirent.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

#include "histogram.h"
#include "syscalls.h"
#include "fd_kinds.h"

#define KP_EXPORT __attribute__((visibility("default")))
#define KP_COMMA ,
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define kp_barrier() __asm__ __volatile__("" ::: "memory")

/* ---- raw syscalls (raw.c): the shim's own I/O never goes through libc ---- */

static inline long kp_raw_syscall6(long nr, long a1, long a2, long a3, long a4,
				   long a5, long a6)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10),
			       "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ __volatile__("svc 0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
			       "r"(x5)
			     : "memory");
	return x0;
#else
#error "kprof: no raw syscall for this architecture"
#endif
}

#define KP_RAW_A(...) KP_RAW_A_(0, ##__VA_ARGS__, 0, 0, 0, 0, 0, 0)
#define KP_RAW_A_(d, a1, a2, a3, a4, a5, a6, ...)                              \
	(long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5), (long)(a6)
/* kp_raw(SYS_x, args...): -errno on failure, errno untouched. */
/* The shim's own calls, counted for the `own` record (own_calls.c). */
#define kp_raw(nr, ...) kp_own_syscall6((nr), KP_RAW_A(__VA_ARGS__))
#define kp_raw0(nr) kp_own_syscall6((nr), 0, 0, 0, 0, 0, 0)

/* v in decimal in buf, returned from where it starts; no libc (usable in
 * hooks and in the output process). */
static inline const char *kp_u64_dec(char buf[24], uint64_t v)
{
	char *p = buf + 23;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

/* /proc/PID/stat into buf (NUL-terminated): its length, or -errno (base.c). */
long kp_read_proc_stat(uint64_t pid, char *buf, size_t cap);

/* ---- clock (clock.c) ---- */

/*
 * What a tick is. A process starts on KP_CLOCK_MONO (ticks are
 * CLOCK_MONOTONIC ns) unless the kernel hands out TSC conversion
 * parameters; clock.c may switch it to KP_CLOCK_TSC once the TSC is
 * calibrated, and back to KP_CLOCK_MONO for good if the TSC stops agreeing.
 * mult/tick0/mono0_ns are written before kind becomes KP_CLOCK_TSC
 * and never change after that, so a reader that saw KP_CLOCK_TSC may use
 * them. A call records the kind its start was read on (struct kp_call).
 */
enum { KP_CLOCK_MONO = 0, KP_CLOCK_TSC = 1 };

/* TSC ticks -> ns: (ticks * mult) >> KP_TSC_SHIFT, a constant shift. */
#define KP_TSC_SHIFT 32

struct kp_clock {
	uint32_t kind;	   /* KP_CLOCK_MONO or KP_CLOCK_TSC; kp_clock_kind() */
	/* per kind: ticks an empty timed window lasts (the two clock reads
	 * and what lies between them in kp_call_stamp/kp_call_end), taken out
	 * of every call's time (kp_clock_window_calibrate) */
	uint64_t window[2];
	uint64_t mult;	   /* ns per tick << KP_TSC_SHIFT */
	uint64_t tick0;	   /* a TSC value ... */
	uint64_t mono0_ns; /* ... and CLOCK_MONOTONIC at the same moment */
};
extern struct kp_clock kp_clock;

static inline uint64_t kp_rdtsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

uint64_t kp_mono_ns(void);
uint64_t kp_real_ns(void);

static inline unsigned kp_clock_kind(void)
{
	return __atomic_load_n(&kp_clock.kind, __ATOMIC_ACQUIRE);
}

static inline uint64_t kp_ticks_of(unsigned kind)
{
	if (likely(kind == KP_CLOCK_TSC))
		return kp_rdtsc();
	return kp_mono_ns();
}

/* A TSC difference in ns; a TSC that went backwards gives 0. */
static inline uint64_t kp_tsc_to_ns(uint64_t d)
{
	if (unlikely((int64_t)d < 0))
		return 0;
	return (uint64_t)(((unsigned __int128)d * kp_clock.mult) >> KP_TSC_SHIFT);
}

/* ns between two ticks read on the same kind of clock. */
static inline uint64_t kp_ticks_delta_ns(unsigned kind, uint64_t t0, uint64_t t1)
{
	if (likely(kind == KP_CLOCK_TSC))
		return kp_tsc_to_ns(t1 - t0);
	return t1 - t0;
}

/* CLOCK_MONOTONIC ns of a tick read on clock kind. */
static inline uint64_t kp_ticks_to_mono(unsigned kind, uint64_t t)
{
	if (kind != KP_CLOCK_TSC)
		return t;
	if (t >= kp_clock.tick0)
		return kp_clock.mono0_ns + kp_tsc_to_ns(t - kp_clock.tick0);
	uint64_t back = kp_tsc_to_ns(kp_clock.tick0 - t);
	return back < kp_clock.mono0_ns ? kp_clock.mono0_ns - back : 0;
}

/* Slow paths only (deadlines): ticks of the current kind. */
static inline uint64_t kp_ticks(void)
{
	return kp_ticks_of(kp_clock_kind());
}
/* Ticks of the current kind at CLOCK_MONOTONIC time mono_ns. */
uint64_t kp_mono_to_ticks(uint64_t mono_ns);

/*
 * A call that began on one kind of clock and ended on the other: its ns
 * when they can be told (began on CLOCK_MONOTONIC, ended on the TSC);
 * false when not (began on a TSC that was then found to disagree).
 */
bool kp_clock_span_ns(unsigned kind0, uint64_t t0, unsigned kind1,
		      uint64_t t1, uint64_t *ns);
int kp_clock_init(void);
/* Measures kp_clock.window: the shortest of 32 empty windows per kind. */
void kp_clock_window_calibrate(void);
/* At the periodic flush point (flush lock held): calibrate or verify. */
void kp_clock_check(void);
/* CLOCK_MONOTONIC ns of the next kp_clock_check() wanted, UINT64_MAX: none. */
uint64_t kp_clock_check_due_ns(void);
/* The header's clock_source: what times the calls now. */
const char *kp_clock_source(void);
/* KPROF_CLOCK= and the KPROF_EXEC_CLOCK= hand-off, from read_config. */
void kp_clock_config(const char *policy);
void kp_clock_inherit(const char *value);
/*
 * KPROF_EXEC_CLOCK=... for a child image into buf, after checking the TSC
 * against a fresh pair; false: nothing to pass. Reads only (vfork child).
 */
bool kp_clock_handoff(char *buf, size_t cap);
#define KP_CLOCK_HANDOFF_MAX 192

/* ---- real functions (real.c; their table in real.h, from hooks.def) ---- */

/* Looks up every real function once (kp_ensure_init). */
void kp_resolve_all(void);

/* ---- per-thread state (thread_state.c) ---- */

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
	uint64_t count;
	uint64_t time_ns;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t retries;
	uint64_t errors;
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
	uint8_t index[KP_SYSCALL_MAX]; /* nr -> slot + 1 */
	struct kp_slot slots[];
};

#define KP_SLOTS                                                               \
	((KP_BLOCK_SIZE - sizeof(struct kp_thread)) / sizeof(struct kp_slot))

/* TLS flags that send a hook on the slow path. */
enum {
	KP_TLS_IN_INIT = 1,	  /* resolving real functions on this thread */
	KP_TLS_ATTACHING = 2,	  /* getting this thread's block */
	KP_TLS_EXITING = 4,	  /* after the pthread key destructor */
	KP_TLS_VFORK_CHILD = 8,	  /* between vfork and exec in the child */
	KP_TLS_FLUSHING = 16,	  /* this thread holds the flush lock */
};

extern __thread struct kp_thread *kp_self;
extern __thread unsigned kp_tls_flags;

enum { KP_UNINIT, KP_ACTIVE, KP_PASSIVE };
extern volatile int kp_state;

/*
 * The syscalls the shim makes for itself (trace output, /proc reads,
 * rewriting code), per number, from the first line of its start-up on:
 * written as the `own` record so that a comparison with a kernel-side
 * trace accounts for every one of them (own_calls.c). Not counted: a
 * vfork child's (another process, same memory) and those made once the
 * shim went passive (its output process writing a dead program's batch).
 */
extern uint64_t kp_own_calls[KP_SYSCALL_MAX];
/* CLOCK_MONOTONIC ns when the shim's start-up began in this image (a
 * fork child: the fork); the process's calls before it are the loader's. */
extern uint64_t kp_own_startup_ns;
static inline bool kp_own_counting(void)
{
	return kp_state != KP_PASSIVE && !(kp_tls_flags & KP_TLS_VFORK_CHILD);
}
static inline long kp_own_syscall6(long nr, long a1, long a2, long a3, long a4,
				   long a5, long a6)
{
	if ((unsigned long)nr < KP_SYSCALL_MAX && kp_own_counting())
		__atomic_fetch_add(&kp_own_calls[nr], 1, __ATOMIC_RELAXED);
	return kp_raw_syscall6(nr, a1, a2, a3, a4, a5, a6);
}
/* The `own` record, when there is something in it (flush.c). */
struct kp_writer;
void kp_own_write(struct kp_writer *w, bool final, bool exec);
void kp_own_reset(void);
/* The stream starts now: the calls so far were the start-up's. */
void kp_own_mark_start(void);
extern volatile uint64_t kp_deadline; /* in ticks */

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
void kp_flush_periodic(void);
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

/*
 * Rewrite mode (rewrite.h): the syscall-level hook accounts every call, so
 * a symbol hook passes its call through uncounted (keeping its other
 * duties) and leaves its caller's address in kp_caller_site for the call
 * sites of the syscalls it leads to.
 */
extern bool kp_rw_active;
extern __thread uint64_t kp_caller_site;

static inline void kp_call_abandon(struct kp_call *c);

/*
 * The symbol hooks' start of a call made from site (KP_CALLER() in the
 * exported hook; a hook handed a call passes its caller's): false when it
 * passes through.
 */
static inline bool kp_call_begin(struct kp_call *c, unsigned nr, long arg0, uint64_t site)
{
	if (unlikely(kp_rw_active))
		return false;
	if (!kp_call_start(c, nr, arg0))
		return false;
	/* the start may have waited for init, which chose rewrite mode */
	if (unlikely(kp_rw_active)) {
		kp_call_abandon(c);
		return false;
	}
	c->site = site;
	return true;
}

/*
 * In an exported hook, for a pass-through: `return KP_PASS(rtype, call);`.
 * KP_PASS_AT gives the site: a hook handed a call by another (syscall()
 * hands SYS_close to close) passes that one's caller on.
 */
#define KP_PASS_AT(rtype, call, site)                                          \
	({                                                                     \
		rtype kp_pr_;                                                  \
		if (kp_rw_active) {                                            \
			uint64_t kp_ps_ = kp_caller_site;                      \
			kp_caller_site = (site);                               \
			kp_pr_ = call;                                         \
			kp_caller_site = kp_ps_;                               \
		} else {                                                       \
			kp_pr_ = call;                                         \
		}                                                              \
		kp_pr_;                                                        \
	})
#define KP_PASS(rtype, call) KP_PASS_AT(rtype, call, KP_CALLER())

/* The hand-written hooks that syscall() hands its calls to, with its caller. */
int kp_close_at(int fd, uint64_t site);
int kp_close_range_at(unsigned first, unsigned last, int flags, uint64_t site);
int kp_dup2_at(int oldfd, int newfd, uint64_t site);
int kp_dup3_at(int oldfd, int newfd, int flags, uint64_t site);

/* Counted, not timed: the clock changed under the call (clock.c). */
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
	if (unlikely(t1 >= kp_deadline))
		kp_flush_periodic();
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

/* ---- process state (base.c), filled by init (init.c) ---- */

#define KP_PATH_MAX 4096
#define KP_MAX_PENDING_FORKS 64

struct kp_config {
	char out[KP_PATH_MAX];
	char fallback_dir[KP_PATH_MAX]; /* for unix: when nobody listens */
	uint64_t interval_ms;
	bool events;
	bool gzip;
	bool debug;
	/* KPROF_EXEC_SITES: the parent's site cache, for a child image whose
	 * environment names no home (rewrite_scan.c) */
	char exec_sites[KP_PATH_MAX];
};

struct kp_proc {
	uint64_t pid; /* 0: not known yet (fork child, resolved at flush) */
	uint64_t ppid;
	uint64_t stream;
	uint64_t parent_stream;
	const char *origin;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	bool header_written;
	bool maps_written;
	uint64_t seq; /* records numbered so far in this stream */
	int64_t exit_status;
	bool have_exit_status;
	bool final_done;
	char exe[KP_PATH_MAX];
	char cmdline[8192];
	const char *argv[256];
	unsigned argc;
	char host[65];
	char kernel[65];
	uint32_t pending_fork_child[KP_MAX_PENDING_FORKS];
	const char *pending_fork_how[KP_MAX_PENDING_FORKS];
	uint32_t pending_forks;
	uint32_t lost_forks;
	bool shared_vm; /* a clone(CLONE_VM) child without CLONE_VFORK was made */
};
extern struct kp_config kp_config;
extern struct kp_proc kp_proc;

void kp_ensure_init(void);
uint64_t kp_new_stream_id(uint64_t mix);
/* base.c: KPROF_DEBUG=1 messages, stderr, /proc reads */
void kp_debug(const char *msg);
void kp_write_stderr(const char *s);
int kp_read_pids(uint64_t *pid, uint64_t *ppid);
/* base.c: a whole small file (raw syscalls), its length or -errno; one
 * line of it, without the newline, "" if unreadable. */
ssize_t kp_read_file(const char *path, char *buf, size_t cap);
void kp_read_line_file(const char *path, char *dst, size_t cap);
/* clock.c: the next deadline (periodic flush or clock check) from now;
 * at the deadline, whether the periodic records are due */
void kp_reset_deadline(void);
bool kp_flush_due(void);
void kp_after_fork_child(void);
/* Set in a fork child whose stream rewrite mode's hook already started. */
extern bool kp_fork_reset_done;
bool kp_foreign_process(void);
/* child_env.c: what a child image's environment needs to stay traced. */
void kp_child_env_init(const char *cwd);
char *const *kp_child_env(char *const envp[], char **arr, size_t cap,
			  char *scratch, size_t scratch_cap, const char *marker);
bool kp_flush_lock_wait(void);
void kp_flush_unlock(void);

/* ---- thread blocks (thread_state.c) ---- */

struct kp_thread *kp_thread_attach(void);
/* This thread is exiting (its pthread key destructor, or its exit syscall). */
void kp_thread_end(struct kp_thread *t);
int kp_thread_key_init(void);
void kp_threads_after_fork(void);
/* Iterates every block in the process. */
struct kp_thread *kp_threads_first(void);
void kp_thread_recycle(struct kp_thread *t);
extern struct kp_slot kp_global_slots[KP_SYSCALL_MAX];

/* ---- flushing (flush.c) ---- */

/* KP_FLUSH_MAPS: a periodic batch now, with a `maps` record (dlclose). */
/* KP_FLUSH_START: the header alone, at start-up (kp_flush_start). */
/* KP_FLUSH_DEATH: by the output process, the program dead (kp_flush_after_death). */
enum kp_flush_kind { KP_FLUSH_PERIODIC, KP_FLUSH_EXIT, KP_FLUSH_EXEC, KP_FLUSH_MAPS,
		     KP_FLUSH_START, KP_FLUSH_DEATH };
void kp_flush(enum kp_flush_kind kind, const char *exec_path);
void kp_flush_after_fork(void);
void kp_flush_start(void);
/* In the output process, the program having died without its final batch. */
void kp_flush_after_death(int pid);
void kp_note_fork(pid_t child, const char *how);
/* Final flush for a process ending with status (exit paths). */
void kp_finish(int64_t status, bool have_status);

/* ---- mappings snapshot (maps.c) ---- */
struct kp_writer;
/* A `maps` record of the executable file mappings, with build-ids. */
int kp_maps_write(struct kp_writer *w, uint64_t pid, uint64_t stream,
		  uint64_t *seq);

/* ---- output (output.c) ---- */

int kp_output_open(void);
int kp_output_begin_batch(void);
int kp_output_write(void *ctx, const char *buf, size_t len);
int kp_output_end_batch(bool finish);
void kp_output_abort_batch(void);
void kp_output_after_fork(void);
bool kp_output_is_ours(int fd);
void kp_output_forget_stale(int fd);
int kp_output_fd(void);
/* Moves our descriptor away when the program wants its number. */
void kp_output_move_away(void);
void kp_output_exec_failed(void);
/* After the exec record: the output process goes if the execve succeeds. */
void kp_output_before_exec(void);
/* The trace file's path (or KPROF_OUT), for messages. */
const char *kp_output_path(void);
bool kp_output_refused(void);
/* The program died (output process only): can its stream be finished here? */
bool kp_output_after_death(bool mid_batch);

/* ---- the output process, where the trace descriptor lives (output_proc.c) ---- */

int kp_outproc_start(void);
/* Its pid; 0 when there is none (never started, stopped, or gone). */
int kp_outproc_pid(void);
/* Runs fn(arg) there; -ESRCH without one, -EPIPE when it went away. */
int kp_outproc_call(int (*fn)(void *), void *arg);
void kp_outproc_stop(void);
bool kp_outproc_exec_arm(void);
void kp_outproc_exec_failed(void);
void kp_outproc_after_fork(void);
void kp_outproc_reap_later(int pid);
void kp_outproc_reap(void);
/* In the output process: the dead program's wait status, -1 unknown. */
int kp_outproc_exit_code(void);

/* ---- process hooks (hooks_process.c) ---- */
char **kp_env_with_marker(char *const envp[], char **buf, size_t cap);

#endif
