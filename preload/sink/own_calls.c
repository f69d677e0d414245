/* SPDX-License-Identifier: MIT */
/*
 * The shim's own syscalls: every kp_raw() from the first line of its
 * start-up on (the trace's open, fstat and writes, /proc reads, the site
 * cache, the rewriting of code) and, in rewrite mode, the calls it makes
 * through libc while starting or rescanning. They are the program's
 * neither in symbol nor in rewrite mode, but a kernel-side tracer sees
 * them: the `own` record lists them, with the moment the start-up began,
 * so that `kanalyze --coverage --after-start` accounts for every call of
 * the process. Kept apart from flush.c because the counter (core/state.c) is
 * bumped from core/raw.h's kp_raw().
 */
#include <string.h>

#include "sink.h"
#include "record_writer.h"

/* kp_own_calls when the stream started: the start-up's share */
static uint64_t at_start[KP_SYSCALL_MAX];

void kp_own_mark_start(void)
{
	for (unsigned i = 0; i < KP_SYSCALL_MAX; i++)
		at_start[i] = __atomic_load_n(&kp_own_calls[i], __ATOMIC_RELAXED);
}

/*
 * In a final batch (nothing comes after it) the calls that will carry the
 * batch are counted ahead: one write per batch, short writes aside, or with
 * an output process one futex wake and one wait (output_proc.c); after an
 * exec record the exec hook's prctl and set_tid_address.
 */
unsigned (*kp_own_dispatch)(struct kp_rec_site_calls *out, unsigned cap, uint64_t *calls);

/* the busiest sites of the dispatch path that a record names */
#define KP_DISPATCH_SITES 64

void kp_own_write(struct kp_writer *w, bool final, bool exec)
{
	bool remote = kp_outproc_pid() != 0;
	uint32_t nr[KP_SYSCALL_MAX], startup_nr[KP_SYSCALL_MAX];
	uint64_t count[KP_SYSCALL_MAX], startup[KP_SYSCALL_MAX];
	unsigned n = 0, n_startup = 0;
	for (unsigned i = 0; i < KP_SYSCALL_MAX; i++) {
		uint64_t c = __atomic_load_n(&kp_own_calls[i], __ATOMIC_RELAXED);
		if (final && !remote && i == SYS_write)
			c++;
		if (final && remote && i == SYS_futex)
			c += 2;
		if (exec && remote && (i == SYS_prctl || i == SYS_set_tid_address))
			c++;
		/* written from here (kp_output_exec_local): the close before the exec */
		if (exec && i == SYS_close && kp_output_local())
			c++;
		if (c) {
			nr[n] = i;
			count[n++] = c;
		}
		if (at_start[i]) {
			startup_nr[n_startup] = i;
			startup[n_startup++] = at_start[i];
		}
	}
	struct kp_rec_common c = {
		.pid = kp_proc.pid,
		.stream = kp_proc.stream,
		.time_ns = kp_mono_ns(),
		.seq = ++kp_proc.seq,
	};
	struct kp_rec_own own = {
		.startup_ns = kp_own_startup_ns,
		.nr = nr, .count = count, .n = n,
		.startup_nr = startup_nr, .startup = startup, .n_startup = n_startup,
	};
	struct kp_rec_site_calls sites[KP_DISPATCH_SITES];
	if (kp_own_dispatch) {
		own.dispatch = true;
		own.n_dispatch_sites = kp_own_dispatch(sites, KP_DISPATCH_SITES, &own.dispatch_calls);
		own.dispatch_sites = sites;
	}
	kp_rec_own(w, &c, &own);
}

/* A fork child's stream starts with none of its parent's. */
void kp_own_reset(void)
{
	memset(kp_own_calls, 0, sizeof(kp_own_calls));
	memset(at_start, 0, sizeof(at_start));
}
