/* SPDX-License-Identifier: MIT */
/*
 * The flush lock: one flush (flush.c) or move of the trace's descriptor
 * (output.c) at a time, across the program's threads. A spin with short
 * sleeps, no futex: it is taken from hooks, signal handlers included, and
 * a flush holds it for one batch.
 */
#include <time.h>

#include "sink.h"

static int flush_lock;

bool kp_flush_lock(bool wait)
{
	for (unsigned spins = 0;; spins++) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&flush_lock, &expect, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
		if (!wait || spins > 20000)
			return false;
		struct timespec ts = { 0, 50000 };
		kp_raw(SYS_nanosleep, &ts, NULL);
	}
}

bool kp_flush_lock_wait(void)
{
	if (kp_tls_flags & KP_TLS_FLUSHING)
		return false;
	return kp_flush_lock(true);
}

void kp_flush_unlock(void)
{
	__atomic_store_n(&flush_lock, 0, __ATOMIC_RELEASE);
}

bool kp_flush_locked(void)
{
	return __atomic_load_n(&flush_lock, __ATOMIC_ACQUIRE) != 0;
}

/* A fork child: whoever held it lives on in the parent only. */
void kp_flush_lock_reset(void)
{
	flush_lock = 0;
}
