/*
 * The shim's own syscalls: every kp_raw() while the shim is active (the
 * trace's open, fstat and writes, /proc reads, the rewriting of code) and,
 * in rewrite mode, the calls its helpers make through libc (libelf,
 * capstone). They are the program's neither in symbol nor in rewrite
 * mode, but a kernel-side tracer sees them: the `own` record lists them so
 * that `kanalyze --coverage --after-start` can set them aside. Kept apart
 * from flush.c because the counter is bumped from kprof.h's kp_raw().
 */
#include <string.h>

#include "kprof.h"
#include "record_writer.h"

uint64_t kp_own_calls[KP_SYSCALL_MAX];

/*
 * In a final batch (nothing comes after it) the calls that will carry the
 * batch are counted ahead: one write per batch, short writes aside, or with
 * an output process one futex wake and one wait (output_proc.c); after an
 * exec record the exec hook's prctl and set_tid_address.
 */
void kp_own_write(struct kp_writer *w, bool final, bool exec)
{
	bool remote = kp_outproc_pid() != 0;
	uint32_t nr[KP_SYSCALL_MAX];
	uint64_t count[KP_SYSCALL_MAX];
	unsigned n = 0;
	for (unsigned i = 0; i < KP_SYSCALL_MAX; i++) {
		uint64_t c = __atomic_load_n(&kp_own_calls[i], __ATOMIC_RELAXED);
		if (final && !remote && i == SYS_write)
			c++;
		if (final && remote && i == SYS_futex)
			c += 2;
		if (exec && remote && (i == SYS_prctl || i == SYS_set_tid_address))
			c++;
		if (c) {
			nr[n] = i;
			count[n++] = c;
		}
	}
	if (!n)
		return;
	struct kp_rec_common c = {
		.pid = kp_proc.pid,
		.stream = kp_proc.stream,
		.time_ns = kp_mono_ns(),
		.seq = ++kp_proc.seq,
	};
	kp_rec_own(w, &c, nr, count, n);
}

/* A fork child's stream starts with none of its parent's. */
void kp_own_reset(void)
{
	memset(kp_own_calls, 0, sizeof(kp_own_calls));
}
