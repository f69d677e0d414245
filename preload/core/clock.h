/* SPDX-License-Identifier: MIT */
/*
 * The shim's clock (core/clock.c): what a tick is, reading one on the hot
 * path, converting ticks to ns, the TSC's calibration and checks, and the
 * deadline at which the periodic work (flush, clock check) is due.
 */
#ifndef KPROF_CORE_CLOCK_H
#define KPROF_CORE_CLOCK_H

#include "raw.h"


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

/* The next deadline (periodic flush or clock check), in ticks, and its
 * reset from now; at the deadline, whether the periodic records are due. */
extern volatile uint64_t kp_deadline;
void kp_reset_deadline(void);
bool kp_flush_due(void);

#endif
