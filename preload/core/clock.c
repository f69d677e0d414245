/* SPDX-License-Identifier: MIT */
/*
 * The shim's clock. Hooks read raw ticks and convert differences to ns when
 * accounting (account.h). Ticks are the TSC when the kernel says user space
 * may convert it (perf_event_mmap_page.cap_user_time: a TSC clocksource),
 * with the kernel's own mult/shift. Otherwise a process starts on
 * CLOCK_MONOTONIC (vDSO) and calibrates the TSC lazily: at the periodic
 * flush points it pairs (rdtsc, CLOCK_MONOTONIC) readings at least 100 ms
 * apart, and switches to the TSC once the rates of two consecutive
 * intervals agree within 10 ppm and CPUID says the TSC is invariant. After
 * the switch each check compares a fresh pair with the calibration; one
 * that disagrees (a snapshot restore, a migration, a TSC jump) puts the
 * process on CLOCK_MONOTONIC for good. There is no busy wait: gcc starts
 * cc1 thousands of times, and a process that ends within 200 ms never pays
 * for a calibration. A child image gets the calibration through
 * KPROF_EXEC_CLOCK and uses it only if a fresh pair of its own agrees.
 * KPROF_CLOCK=monotonic|tsc|auto overrules (tsc: auto, but say on stderr
 * when the TSC cannot be had).
 */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "base.h"
#include "clock.h"

struct kp_clock kp_clock;

#define STEP_NS 100000000ULL	     /* calibration samples at least this apart */
#define VERIFY_NS 1000000000ULL	     /* checks of a calibrated TSC */
#define TOLERANCE 100000	     /* 1/TOLERANCE = 10 ppm */
#define SLACK_NS 1000		     /* beyond the pairs' widths, per check */
#define MAX_DISAGREEMENTS 8	     /* calibration attempts before giving up */
#define HANDOFF_MAX_AGE_NS 10000000000ULL
#define HANDOFF_VAR "KPROF_EXEC_CLOCK="

enum { POLICY_AUTO, POLICY_TSC, POLICY_MONOTONIC };
enum {
	CAL_OFF,      /* CLOCK_MONOTONIC for good */
	CAL_SAMPLING, /* CLOCK_MONOTONIC, pairing samples */
	CAL_TSC,      /* calibrated TSC, verified at each check */
	CAL_KERNEL,   /* TSC with the kernel's mult/shift */
};

/* A TSC reading (midpoint of two) and CLOCK_MONOTONIC read between them. */
struct pair {
	uint64_t tsc;
	uint64_t mono_ns;
	uint64_t width; /* TSC ticks between the two reads; UINT64_MAX: failed */
};

/* Written only under the flush lock (or at init, or in a fork child). */
static struct {
	int policy;
	const char *bad_policy; /* KPROF_CLOCK value not understood */
	bool quiet;		/* an ancestor already warned for KPROF_CLOCK=tsc */
	bool warned;
	int state;
	bool invariant_checked;
	struct pair sample[2];
	unsigned samples;
	unsigned disagreements;
	struct pair anchor;   /* the calibration's pair (tick0, mono0_ns) */
	struct pair verified; /* last pair that agreed */
	uint64_t next_check_ns;
	bool have_parent;
	bool parent_kernel; /* the parent's conversion was the kernel's */
	bool no_kernel;	    /* the kernel gives no conversion here (or the parent's said so) */
	uint64_t parent[5]; /* mult, tick0, mono0, tsc, mono of the parent */
} cal = { .next_check_ns = UINT64_MAX };

/* Tests only (KPROF_TEST_TSC_JUMP_MS): pairs see the TSC jump once calibrated. */
static uint64_t test_jump_ns;

uint64_t kp_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t kp_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- messages: KPROF_DEBUG=1, or always for KPROF_CLOCK=tsc failures ---- */

struct msg {
	char buf[320];
	size_t len;
};

static void msg_str(struct msg *m, const char *s)
{
	size_t n = strlen(s);
	if (n > sizeof(m->buf) - 1 - m->len)
		n = sizeof(m->buf) - 1 - m->len;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = 0;
}

static size_t format_u64(char *out, uint64_t v)
{
	char tmp[24];
	size_t n = 0, len = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		out[len++] = tmp[--n];
	out[len] = 0;
	return len;
}

/* v / 10^decimals with that many decimals. */
static void msg_fixed(struct msg *m, uint64_t v, unsigned decimals)
{
	uint64_t scale = 1;
	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	char num[24];
	format_u64(num, v / scale);
	msg_str(m, num);
	if (!decimals)
		return;
	char frac[24];
	size_t n = format_u64(frac, v % scale);
	msg_str(m, ".");
	for (size_t i = n; i < decimals; i++)
		msg_str(m, "0");
	msg_str(m, frac);
}

static void say(const struct msg *m)
{
	kp_debug(m->buf);
}

/* The TSC cannot be used: once on stderr if the user asked for it. */
static void refuse(const struct msg *m)
{
	if (cal.policy == POLICY_TSC && !cal.quiet && !cal.warned) {
		cal.warned = true;
		kp_write_stderr("kprof: KPROF_CLOCK=tsc: ");
		kp_write_stderr(m->buf + strlen("clock: "));
		kp_write_stderr("\n");
		return;
	}
	say(m);
}

/* ---- pairs and rates ---- */

static inline uint64_t rdtsc_ordered(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("lfence" ::: "memory");
#endif
	return kp_rdtsc();
}

/* The narrowest of up to four tries (an interrupt widens one). */
static struct pair take_pair(void)
{
	struct pair best = { 0, 0, UINT64_MAX };
	for (int i = 0; i < 4; i++) {
		uint64_t a = rdtsc_ordered();
		uint64_t m = kp_mono_ns();
		uint64_t b = rdtsc_ordered();
		if (b < a || b - a >= best.width)
			continue;
		best.tsc = a + (b - a) / 2;
		best.mono_ns = m;
		best.width = b - a;
		if (best.width < 128) /* ~60 ns here: the vDSO's pages are warm */
			break;
	}
	if (unlikely(test_jump_ns) && cal.state == CAL_TSC && best.width != UINT64_MAX)
		best.tsc += (uint64_t)(((unsigned __int128)test_jump_ns << KP_TSC_SHIFT) /
				       kp_clock.mult);
	return best;
}

static uint64_t tsc_ns(uint64_t ticks, uint64_t mult)
{
	return (uint64_t)(((unsigned __int128)ticks * mult) >> KP_TSC_SHIFT);
}

/*
 * Does pair b agree with pair a under the conversion mult: the ns the
 * TSC says passed against CLOCK_MONOTONIC's, within 10 ppm plus the pairs'
 * widths and SLACK_NS? Returns the difference in ns (>= 0) or -1 if not.
 */
static int64_t agreement(const struct pair *a, const struct pair *b,
			 uint64_t mult)
{
	if (b->tsc < a->tsc || b->mono_ns < a->mono_ns)
		return -1;
	uint64_t by_tsc = tsc_ns(b->tsc - a->tsc, mult);
	uint64_t by_mono = b->mono_ns - a->mono_ns;
	uint64_t diff = by_tsc > by_mono ? by_tsc - by_mono : by_mono - by_tsc;
	uint64_t allowed = by_mono / TOLERANCE + SLACK_NS +
			   tsc_ns(a->width / 2 + b->width / 2, mult);
	return diff <= allowed ? (int64_t)diff : -1;
}

static bool tsc_invariant(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return false;
	return d & (1u << 8);
#else
	return false;
#endif
}

static void schedule(uint64_t at_ns)
{
	cal.next_check_ns = at_ns;
}

/* Hot-path readers see the new kind only after mult..mono0_ns. */
static void set_kind(unsigned kind)
{
	/* no flush check on ticks of one kind against a deadline of the other */
	kp_deadline = UINT64_MAX;
	__atomic_store_n(&kp_clock.kind, kind, __ATOMIC_RELEASE);
}

static void give_up(const struct msg *m)
{
	cal.state = CAL_OFF;
	schedule(UINT64_MAX);
	if (kp_clock_kind() != KP_CLOCK_MONO)
		set_kind(KP_CLOCK_MONO);
	refuse(m);
}

static void give_up_str(const char *why)
{
	struct msg m = { .len = 0 };
	msg_str(&m, "clock: ");
	msg_str(&m, why);
	give_up(&m);
}

/* ---- calibration at the flush points ---- */

static void switch_to_tsc(const struct pair *s0, const struct pair *s1,
			  const struct pair *s2, uint64_t diff_ppb)
{
	uint64_t ticks = s2->tsc - s0->tsc, ns = s2->mono_ns - s0->mono_ns;
	kp_clock.mult = (uint64_t)(((unsigned __int128)ns << KP_TSC_SHIFT) / ticks);
	kp_clock.tick0 = s2->tsc;
	kp_clock.mono0_ns = s2->mono_ns;
	cal.anchor = *s2;
	cal.verified = *s2;
	cal.state = CAL_TSC;
	set_kind(KP_CLOCK_TSC);
	schedule(s2->mono_ns + VERIFY_NS);

	struct msg m = { .len = 0 };
	msg_str(&m, "clock: TSC calibrated against CLOCK_MONOTONIC: ");
	msg_fixed(&m, (uint64_t)(((unsigned __int128)ticks * 1000000) / ns), 3);
	msg_str(&m, " MHz; rates over ");
	msg_fixed(&m, (s1->mono_ns - s0->mono_ns) / 1000000, 0);
	msg_str(&m, " and ");
	msg_fixed(&m, (s2->mono_ns - s1->mono_ns) / 1000000, 0);
	msg_str(&m, " ms agree within ");
	msg_fixed(&m, diff_ppb / 100, 1);
	msg_str(&m, " ppm; timing with the TSC");
	say(&m);
}

/*
 * Relative difference of the two intervals' rates in parts per billion,
 * plus what the pairs' widths could hide; UINT64_MAX if a TSC went back.
 */
static uint64_t rate_difference_ppb(const struct pair *s0, const struct pair *s1,
				    const struct pair *s2)
{
	if (s1->tsc <= s0->tsc || s2->tsc <= s1->tsc)
		return UINT64_MAX;
	double t01 = (double)(s1->tsc - s0->tsc), m01 = (double)(s1->mono_ns - s0->mono_ns);
	double t12 = (double)(s2->tsc - s1->tsc), m12 = (double)(s2->mono_ns - s1->mono_ns);
	double r01 = t01 / m01, r12 = t12 / m12;
	double rel = r12 > r01 ? r12 / r01 - 1 : r01 / r12 - 1;
	/* each midpoint is within width/2 of the TSC at the CLOCK_MONOTONIC read */
	rel += ((double)s0->width + (double)s1->width) / (2.0 * t01) +
	       ((double)s1->width + (double)s2->width) / (2.0 * t12);
	return rel < 1.0 ? (uint64_t)(rel * 1e9) : 1000000000ULL;
}

static void sampling_check(struct pair p)
{
	/* CPUID costs a VM exit (~7 us here): only processes that live on */
	if (cal.samples > 0 && !cal.invariant_checked) {
		cal.invariant_checked = true;
		if (!tsc_invariant()) {
			give_up_str("CPUID says the TSC is not invariant; CLOCK_MONOTONIC for good");
			return;
		}
	}
	if (cal.samples == 0) {
		cal.sample[0] = p;
		cal.samples = 1;
		schedule(p.mono_ns + STEP_NS);
		return;
	}
	struct pair *last = &cal.sample[cal.samples - 1];
	if (p.mono_ns < last->mono_ns + STEP_NS) {
		schedule(last->mono_ns + STEP_NS);
		return;
	}
	if (cal.samples == 1) {
		cal.sample[1] = p;
		cal.samples = 2;
		schedule(p.mono_ns + STEP_NS);
		return;
	}
	uint64_t ppb = rate_difference_ppb(&cal.sample[0], &cal.sample[1], &p);
	if (ppb <= 1000000000ULL / TOLERANCE) {
		switch_to_tsc(&cal.sample[0], &cal.sample[1], &p, ppb);
		return;
	}
	struct msg m = { .len = 0 };
	msg_str(&m, "clock: TSC rate disagrees with CLOCK_MONOTONIC's between two intervals (");
	if (ppb == UINT64_MAX)
		msg_str(&m, "the TSC went backwards");
	else {
		msg_fixed(&m, ppb / 100, 1);
		msg_str(&m, " ppm");
	}
	msg_str(&m, ")");
	if (++cal.disagreements >= MAX_DISAGREEMENTS) {
		msg_str(&m, " too often; CLOCK_MONOTONIC for good");
		give_up(&m);
		return;
	}
	msg_str(&m, "; sampling again");
	say(&m);
	if (ppb == UINT64_MAX) {
		cal.sample[0] = p;
		cal.samples = 1;
	} else {
		cal.sample[0] = cal.sample[1];
		cal.sample[1] = p;
	}
	schedule(p.mono_ns + STEP_NS);
}

static void verify_check(struct pair p)
{
	if (!cal.invariant_checked) {
		/* an inherited calibration: the parent's CPUID said so */
		cal.invariant_checked = true;
		if (!tsc_invariant()) {
			give_up_str("CPUID says the TSC is not invariant; CLOCK_MONOTONIC for good");
			return;
		}
	}
	const struct pair *ref = &cal.verified;
	int64_t d = agreement(ref, &p, kp_clock.mult);
	if (d >= 0) {
		ref = &cal.anchor;
		d = agreement(ref, &p, kp_clock.mult);
	}
	if (d >= 0) {
		cal.verified = p;
		schedule(p.mono_ns + VERIFY_NS);
		return;
	}
	struct msg m = { .len = 0 };
	uint64_t by_tsc = p.tsc >= ref->tsc ? tsc_ns(p.tsc - ref->tsc, kp_clock.mult) : 0;
	uint64_t by_mono = p.mono_ns - ref->mono_ns;
	msg_str(&m, "clock: the TSC disagrees with CLOCK_MONOTONIC (");
	if (p.tsc < ref->tsc) {
		msg_str(&m, "it went backwards");
	} else {
		msg_fixed(&m, by_tsc > by_mono ? by_tsc - by_mono : by_mono - by_tsc, 0);
		msg_str(&m, " ns apart");
	}
	msg_str(&m, " over ");
	msg_fixed(&m, by_mono / 1000000, 0);
	msg_str(&m, " ms: a TSC jump, snapshot restore or migration?); CLOCK_MONOTONIC for good");
	give_up(&m);
}

void kp_clock_check(void)
{
	if (cal.state != CAL_SAMPLING && cal.state != CAL_TSC)
		return;
	struct pair p = take_pair();
	if (p.width == UINT64_MAX || p.mono_ns < cal.next_check_ns)
		return;
	if (cal.state == CAL_SAMPLING)
		sampling_check(p);
	else
		verify_check(p);
}

uint64_t kp_clock_check_due_ns(void)
{
	return cal.state == CAL_SAMPLING || cal.state == CAL_TSC ? cal.next_check_ns : UINT64_MAX;
}

bool kp_clock_span_ns(unsigned kind0, uint64_t t0, unsigned kind1, uint64_t t1,
		      uint64_t *ns)
{
	if (kind0 != KP_CLOCK_MONO || kind1 != KP_CLOCK_TSC)
		return false; /* began on a TSC found wrong since */
	uint64_t mono1 = kp_ticks_to_mono(KP_CLOCK_TSC, t1);
	*ns = mono1 > t0 ? mono1 - t0 : 0;
	return true;
}

uint64_t kp_mono_to_ticks(uint64_t mono_ns)
{
	if (kp_clock_kind() != KP_CLOCK_TSC)
		return mono_ns;
	unsigned __int128 d;
	if (mono_ns >= kp_clock.mono0_ns) {
		d = ((unsigned __int128)(mono_ns - kp_clock.mono0_ns) << KP_TSC_SHIFT) / kp_clock.mult;
		return kp_clock.tick0 + (uint64_t)d;
	}
	d = ((unsigned __int128)(kp_clock.mono0_ns - mono_ns) << KP_TSC_SHIFT) / kp_clock.mult;
	return kp_clock.tick0 > (uint64_t)d ? kp_clock.tick0 - (uint64_t)d : 0;
}

const char *kp_clock_source(void)
{
	switch (cal.state) {
	case CAL_KERNEL: return "tsc-kernel";
	case CAL_TSC: return "tsc-calibrated";
	case CAL_SAMPLING: return "monotonic-calibrating";
	default: return "monotonic";
	}
}

/* ---- configuration and the hand-off to child images ---- */

void kp_clock_config(const char *policy)
{
	if (strcmp(policy, "monotonic") == 0)
		cal.policy = POLICY_MONOTONIC;
	else if (strcmp(policy, "tsc") == 0)
		cal.policy = POLICY_TSC;
	else if (strcmp(policy, "auto") == 0 || !policy[0])
		cal.policy = POLICY_AUTO;
	else
		cal.bad_policy = policy;
}

void kp_clock_inherit(const char *value)
{
	if (strcmp(value, "quiet") == 0) {
		cal.quiet = true;
		return;
	}
	if (strcmp(value, "0") == 0) {
		/* the parent's kernel gave no conversion: ours is the same kernel */
		cal.no_kernel = true;
		return;
	}
	/* K:mult:tick0:mono0:tsc:mono (mult: ns per tick << KP_TSC_SHIFT; K: 1
	 * calibrated, 2 the kernel's conversion) */
	if ((value[0] != '1' && value[0] != '2') || value[1] != ':')
		return;
	cal.parent_kernel = value[0] == '2';
	const char *s = value + 2;
	for (int i = 0; i < 5; i++) {
		uint64_t v = 0;
		if (*s < '0' || *s > '9')
			return;
		for (; *s >= '0' && *s <= '9'; s++)
			v = v * 10 + (uint64_t)(*s - '0');
		if (*s != (i < 4 ? ':' : 0))
			return;
		s += i < 4;
		cal.parent[i] = v;
	}
	cal.have_parent = cal.parent[0] != 0;
}

bool kp_clock_handoff(char *buf, size_t cap)
{
	size_t len = strlen(HANDOFF_VAR);
	if (cap < KP_CLOCK_HANDOFF_MAX)
		return false;
	if (cal.state == CAL_OFF && cal.policy == POLICY_TSC && (cal.warned || cal.quiet)) {
		/* the children would fail the same way: one warning per tree */
		memcpy(buf, HANDOFF_VAR "quiet", len + 6);
		return true;
	}
	int state = __atomic_load_n(&cal.state, __ATOMIC_RELAXED);
	if (state == CAL_SAMPLING && cal.no_kernel) {
		/* not calibrated yet: at least spare the child the perf_event_open */
		memcpy(buf, HANDOFF_VAR "0", len + 2);
		return true;
	}
	if ((state != CAL_TSC && state != CAL_KERNEL) || kp_clock_kind() != KP_CLOCK_TSC)
		return false;
	/* Reads only: this may be a vfork child sharing the parent's memory. */
	struct pair p = take_pair();
	if (p.width == UINT64_MAX || agreement(&cal.anchor, &p, kp_clock.mult) < 0)
		return false;
	uint64_t v[5] = { kp_clock.mult, kp_clock.tick0, kp_clock.mono0_ns, p.tsc,
			  p.mono_ns };
	memcpy(buf, state == CAL_KERNEL ? HANDOFF_VAR "2" : HANDOFF_VAR "1", len + 1);
	len += 1;
	for (int i = 0; i < 5; i++) {
		buf[len++] = ':';
		len += format_u64(buf + len, v[i]);
	}
	return true;
}

/*
 * The parent's calibration, if one fresh pair agrees both with the pair the
 * parent took right before the exec (nothing jumped in between) and with
 * the calibration's own pair (the rate still holds).
 */
static bool adopt_parent(void)
{
	uint64_t mult = cal.parent[0];
	struct pair anchor = { cal.parent[1], cal.parent[2], 0 };
	struct pair recent = { cal.parent[3], cal.parent[4], 0 };
	struct pair p = take_pair();
	struct msg m = { .len = 0 };
	if (p.width == UINT64_MAX || p.mono_ns < recent.mono_ns ||
	    p.mono_ns - recent.mono_ns > HANDOFF_MAX_AGE_NS ||
	    agreement(&recent, &p, mult) < 0 || agreement(&anchor, &p, mult) < 0) {
		msg_str(&m, "clock: the parent's TSC calibration disagrees with a fresh pair; calibrating again");
		say(&m);
		return false;
	}
	kp_clock.mult = mult;
	kp_clock.tick0 = anchor.tsc;
	kp_clock.mono0_ns = anchor.mono_ns;
	cal.anchor = anchor;
	cal.verified = p;
	__atomic_store_n(&kp_clock.kind, KP_CLOCK_TSC, __ATOMIC_RELEASE);
	if (cal.parent_kernel) {
		/* the kernel's conversion, as the parent read it: no checks */
		cal.state = CAL_KERNEL;
		kp_debug("clock: TSC with the kernel's conversion, as the parent image read it");
		return true;
	}
	cal.state = CAL_TSC;
	schedule(p.mono_ns + VERIFY_NS);
	msg_str(&m, "clock: the parent's TSC calibration agrees with a fresh pair; timing with the TSC");
	say(&m);
	return true;
}

static int read_perf_params(uint32_t *mult, uint32_t *shift)
{
#if defined(__x86_64__)
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	long fd = kp_raw(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return (int)fd;
	long p = kp_raw(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED, fd, 0);
	int err = -ENOTSUP;
	if (p < 0 && p > -4096) {
		err = (int)p;
	} else {
		volatile struct perf_event_mmap_page *pg = (void *)p;
		uint32_t seq;
		do {
			seq = pg->lock;
			kp_barrier();
			if (pg->cap_user_time && pg->time_mult && pg->time_shift < 32) {
				*mult = pg->time_mult;
				*shift = pg->time_shift;
				err = 0;
			}
			kp_barrier();
		} while (pg->lock != seq || (seq & 1));
		kp_raw(SYS_munmap, p, 4096);
	}
	kp_raw(SYS_close, fd);
	return err;
#else
	(void)mult;
	(void)shift;
	return -ENOTSUP;
#endif
}

/* The kernel's TSC conversion, sanity-checked over the time init took. */
static bool use_kernel_tsc(void)
{
	uint32_t mult = 0, shift = 0;
	if (read_perf_params(&mult, &shift) != 0)
		return false;
	/* the kernel's shift is < 32: the same conversion with KP_TSC_SHIFT */
	uint64_t mult64 = (uint64_t)mult << (KP_TSC_SHIFT - shift);
	struct pair a = take_pair();
	kp_clock.mult = mult64;
	kp_clock.tick0 = a.tsc;
	kp_clock.mono0_ns = a.mono_ns;
	struct pair b = take_pair();
	uint64_t conv = tsc_ns(b.tsc - a.tsc, mult64);
	uint64_t real = b.mono_ns - a.mono_ns;
	uint64_t diff = conv > real ? conv - real : real - conv;
	if (a.width == UINT64_MAX || b.width == UINT64_MAX || b.tsc < a.tsc ||
	    diff > 1000000 + real / 50)
		return false;
	cal.state = CAL_KERNEL;
	__atomic_store_n(&kp_clock.kind, KP_CLOCK_TSC, __ATOMIC_RELEASE);
	kp_debug("clock: TSC with the kernel's conversion (perf cap_user_time)");
	return true;
}

/*
 * A call's time is read between two clock reads (kp_call_stamp and
 * kp_call_end), and the reads themselves take time inside that window:
 * an rdtsc is not done when the next instruction starts, clock_gettime
 * is a vDSO call. strace -c subtracts a calibrated overhead the same way.
 * The window is measured empty, the same reads in the same order, and its
 * shortest duration (no preemption, caches warm) is what every call's
 * time is reduced by; a call shorter than that counts 0 ns.
 */
static uint64_t empty_window(unsigned kind)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 32; i++) {
		uint64_t t0 = kp_ticks_of(kind);
		kp_barrier();
		(void)kp_clock_kind();
		uint64_t t1 = kp_ticks_of(kind);
		if (t1 >= t0 && t1 - t0 < best)
			best = t1 - t0;
	}
	return best == UINT64_MAX ? 0 : best;
}

void kp_clock_window_calibrate(void)
{
	kp_clock.window[KP_CLOCK_MONO] = empty_window(KP_CLOCK_MONO);
#if defined(__x86_64__)
	kp_clock.window[KP_CLOCK_TSC] = empty_window(KP_CLOCK_TSC);
#endif
	if (!kp_config.debug)
		return;
	struct msg m = { .len = 0 };
	msg_str(&m, "clock: an empty timed window lasts ");
	msg_fixed(&m, kp_clock.window[KP_CLOCK_MONO], 0);
	msg_str(&m, " ns on CLOCK_MONOTONIC, ");
	msg_fixed(&m, kp_clock.window[KP_CLOCK_TSC], 0);
	msg_str(&m, " ticks with rdtsc; each call's time is that much shorter");
	say(&m);
}

int kp_clock_init(void)
{
	kp_clock_window_calibrate();
	kp_clock.kind = KP_CLOCK_MONO;
	cal.state = CAL_OFF;
	cal.next_check_ns = UINT64_MAX;
	const char *jump = getenv("KPROF_TEST_TSC_JUMP_MS");
	if (jump)
		test_jump_ns = strtoull(jump, NULL, 10) * 1000000ULL;
	if (cal.bad_policy) {
		struct msg m = { .len = 0 };
		msg_str(&m, "KPROF_CLOCK=");
		msg_str(&m, cal.bad_policy);
		msg_str(&m, " is not monotonic, tsc or auto; using auto");
		say(&m);
	}
	if (cal.policy == POLICY_MONOTONIC) {
		kp_debug("clock: CLOCK_MONOTONIC (KPROF_CLOCK=monotonic)");
		return 0;
	}
	/* the parent image's conversion (the kernel's or a calibration): no
	 * perf_event_open, which costs 10 us to 12 ms on a KVM guest */
	if (cal.have_parent && (cal.parent_kernel || cal.policy != POLICY_TSC) && adopt_parent())
		return 0;
	if (!cal.no_kernel && use_kernel_tsc())
		return 0;
	cal.no_kernel = true;
#if defined(__x86_64__)
	if (cal.policy == POLICY_TSC) {
		/* asked for: refuse now rather than after the first samples */
		cal.invariant_checked = true;
		if (!tsc_invariant()) {
			give_up_str("CPUID says the TSC is not invariant; CLOCK_MONOTONIC");
			return 0;
		}
	}
	if (cal.have_parent && !cal.parent_kernel && cal.policy == POLICY_TSC && adopt_parent())
		return 0;
	cal.state = CAL_SAMPLING;
	cal.samples = 0;
	sampling_check(take_pair());
	kp_debug("clock: CLOCK_MONOTONIC until the TSC is calibrated against it");
#else
	{
		struct msg m = { .len = 0 };
		msg_str(&m, "clock: no TSC on this architecture; CLOCK_MONOTONIC");
		refuse(&m);
	}
#endif
	return 0;
}

/* ---- deadlines: when kp_call_end leaves the hot path ---- */

volatile uint64_t kp_deadline = UINT64_MAX;
static uint64_t flush_due_ns = UINT64_MAX; /* CLOCK_MONOTONIC */

/*
 * kp_deadline (in ticks of the clock's current kind) is the earlier of the
 * next periodic flush and the clock's next calibration check.
 */
void kp_reset_deadline(void)
{
	uint64_t now_ns = kp_mono_ns();
	flush_due_ns = kp_config.interval_ms ? now_ns + kp_config.interval_ms * 1000000ULL
					     : UINT64_MAX;
	uint64_t due = kp_clock_check_due_ns();
	if (flush_due_ns < due)
		due = flush_due_ns;
	kp_deadline = due == UINT64_MAX ? UINT64_MAX : kp_mono_to_ticks(due);
}

/* At the deadline: is it time for the periodic records (or did a full event ring ask)? */
bool kp_flush_due(void)
{
	return kp_deadline == 0 || kp_mono_ns() >= flush_due_ns;
}
