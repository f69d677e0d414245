/* SPDX-License-Identifier: MIT */
/*
 * How long each step of the shim's start-up took, said on stderr with
 * KPROF_DEBUG=1 in one line ("start-up 412 us: resolve 31, clock 2, ...").
 * The steps are marked always (a vDSO clock read each, about 20 ns):
 * the configuration that says whether to print is read by one of them.
 */
#ifndef KPROF_PHASES_H
#define KPROF_PHASES_H

/* The step that ends now (a string literal: it is kept, not copied). */
void kp_phase(const char *step);
/* Says the steps marked since the first, under KPROF_DEBUG=1, and forgets them. */
void kp_phases_say(const char *what);

#endif
