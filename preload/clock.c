/*
 * The shim's clock. Hooks read raw ticks (kp_ticks) and convert deltas to
 * ns when accounting. Ticks are the TSC when the kernel says user space may
 * convert it (perf_event_mmap_page.cap_user_time: a TSC clocksource), with
 * the kernel's own mult/shift; otherwise CLOCK_MONOTONIC ns from the vDSO
 * (e.g. under kvm-clock). No busy-wait calibration at init.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "kprof.h"

struct kp_clock kp_clock;

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

uint64_t kp_ns_to_ticks(uint64_t ns)
{
	if (!kp_clock.use_tsc)
		return ns;
	/* ticks = ns * 2^shift / mult, without overflow for ns < ~584 years */
	unsigned __int128 t = ((unsigned __int128)ns << kp_clock.shift) / kp_clock.mult;
	return (uint64_t)t;
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

int kp_clock_init(void)
{
	uint32_t mult = 0, shift = 0;
	kp_clock.use_tsc = false;
	if (read_perf_params(&mult, &shift) == 0) {
		struct kp_clock c = { .use_tsc = true, .mult = mult, .shift = shift };
		c.tick0 = kp_rdtsc();
		c.mono0_ns = kp_mono_ns();
		/*
		 * Sanity check against CLOCK_MONOTONIC over the time the rest of
		 * init took (no busy wait): the two must agree within 1 ms + 2%.
		 */
		uint64_t t1 = kp_rdtsc();
		uint64_t m1 = kp_mono_ns();
		kp_clock = c;
		uint64_t conv = kp_ticks_to_ns(t1 - c.tick0);
		uint64_t real = m1 - c.mono0_ns;
		uint64_t diff = conv > real ? conv - real : real - conv;
		if (t1 < c.tick0 || diff > 1000000 + real / 50)
			kp_clock.use_tsc = false;
	}
	if (!kp_clock.use_tsc) {
		kp_clock.tick0 = 0;
		kp_clock.mono0_ns = 0;
	}
	return 0;
}
