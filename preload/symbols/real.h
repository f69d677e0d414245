/* SPDX-License-Identifier: MIT */
/*
 * The real functions behind the hooks (real.c), as tables generated from
 * hooks.def: only the files that call through them include this, so that
 * a change to hooks.def rebuilds the hooks and not the whole shim.
 */
#ifndef KPROF_PRELOAD_REAL_H
#define KPROF_PRELOAD_REAL_H

#include "symbols.h"

enum { RES_INT, RES_PTR, RES_ERRNO, RES_NONE };
/* hooks.def's last column: may the hook make the syscall itself? */
enum kp_raw_path {
	RAW_NO,		/* never: the arguments are not the syscall's */
	RAW_ARGS,	/* while the real function is not known yet (start-up) */
	RAW_DIRECT,	/* also instead of libc's own wrapper, which is nothing but it */
};

struct kp_real {
#define KP_HOOK(rtype, name, nr, params, args, kind, raw) rtype(*name) params;
#define KP_HAND(rtype, name, nr, params) rtype(*name) params;
#include "hooks.def"
#undef KP_HOOK
#undef KP_HAND
};
extern struct kp_real kp_real;
/* Per RAW_DIRECT hook: kp_real's function is libc's own, so the hook may
 * make the syscall itself (hooks.def). */
struct kp_direct {
#define KP_HOOK(rtype, name, nr, params, args, kind, raw) bool name;
#define KP_HAND(rtype, name, nr, params)
#include "hooks.def"
#undef KP_HOOK
#undef KP_HAND
};
extern struct kp_direct kp_direct;

#endif
