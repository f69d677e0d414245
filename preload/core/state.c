/* SPDX-License-Identifier: MIT */
/*
 * The shim's process-wide and per-thread state (raw.h), defined at the
 * bottom so that every layer may read it and none has to call up to reach
 * it: whether the shim traces (set by lifecycle/ and symbols/start.c),
 * the per-thread flags, which hook mode runs (rewrite/setup.c), the
 * counters of the shim's own calls (bumped by kp_raw, written by
 * sink/own_calls.c), what ends a call past the deadline, and what a call made during
 * start-up waits on (account.h).
 */
#include "account.h"

volatile int kp_state = KP_UNINIT;
__thread unsigned kp_tls_flags;
bool kp_rw_active;
uint64_t kp_own_calls[KP_SYSCALL_MAX];
uint64_t kp_own_startup_ns;
void (*kp_on_deadline)(void);
void (*kp_wait_start)(void);
void (*kp_on_attach)(void);
