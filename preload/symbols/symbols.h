/* SPDX-License-Identifier: MIT */
/*
 * The symbol front end, the top of the shim: the exported hooks of libc's
 * functions (hooks.def; generic.c, fd_guard.c, process.c, variadic.c, ...),
 * the real functions behind them (real.c), and the shim's entry
 * (start.c): the constructor, and kp_ensure_init(), which the first hook
 * of a process image calls when it comes before the constructor. Start-up
 * runs lifecycle's setup and then starts rewrite mode (rewrite/), after
 * which these hooks pass their calls through to it with their caller.
 */
#ifndef KPROF_SYMBOLS_H
#define KPROF_SYMBOLS_H

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "../lifecycle/lifecycle.h"
#include "../patch/dispatch.h"
#include "../rewrite/rewrite.h"

/* Starts the shim in this process image once (start.c). */
void kp_ensure_init(void);
/* Looks up every real function once (real.c, from kp_ensure_init). */
void kp_resolve_all(void);
/* The fork child's reset (lifecycle) and rewrite mode's thread count. */
void kp_fork_child(void);

/*
 * The symbol hooks' start of a call made from site (KP_CALLER() in the
 * exported hook; a hook handed a call passes its caller's): false when it
 * passes through.
 */
static inline bool kp_call_begin(struct kp_call *c, unsigned nr, long arg0, uint64_t site)
{
	if (unlikely(kp_rw_active))
		return false;
	struct kp_thread *t = kp_self;
	if (likely(t)) {
		kp_call_enter(c, t, nr, arg0);
	} else {
		/* the first call of a thread, or of the process image */
		if (unlikely(kp_state == KP_UNINIT))
			kp_ensure_init();
		if (!kp_call_begin_slow(c, nr, arg0))
			return false;
		/* init may just have chosen rewrite mode */
		if (unlikely(kp_rw_active)) {
			kp_call_abandon(c);
			return false;
		}
	}
	c->site = site;
	return true;
}

/*
 * The start of a call that the hook makes itself, with the syscall
 * instruction of this library (RAW_DIRECT): in rewrite and patch mode too,
 * no mode rewrites that instruction, so the call is counted here, once,
 * as in symbol mode, instead of passing through libc's rewritten wrapper
 * (in-process, getppid +53 ns that way against +22). What rewrite mode
 * would not count (the shim's own work, a vfork child), a thread's first
 * call and a call that patch mode's dispatch watches pass through as
 * before.
 */
static inline bool kp_call_begin_direct(struct kp_call *c, unsigned nr, long arg0,
					uint64_t site)
{
	if (likely(!kp_rw_active))
		return kp_call_begin(c, nr, arg0, site);
	struct kp_thread *t = kp_self;
	if (unlikely(!t || (kp_tls_flags & (KP_TLS_IN_INIT | KP_TLS_VFORK_CHILD)) ||
		     (kp_sud_on && kp_sud_watches(nr))))
		return false;
	kp_call_enter(c, t, nr, arg0);
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

/* The end of a counted call of a libc function that returns -1 and errno
 * on failure: accounted, errno kept. */
static inline long kp_finish_int(struct kp_call *c, long r)
{
	int e = errno;
	kp_call_end(c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	errno = e;
	return r;
}

/* A raw syscall's result as libc gives it: -1 and errno on failure. */
static inline long kp_raw_result(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* The hand-written hooks that syscall() hands its calls to, with its caller. */
int kp_close_at(int fd, uint64_t site);
int kp_close_range_at(unsigned first, unsigned last, int flags, uint64_t site);
int kp_dup2_at(int oldfd, int newfd, uint64_t site);
int kp_dup3_at(int oldfd, int newfd, int flags, uint64_t site);

/* process.c: envp with the marker that tells a child image it was traced. */
char **kp_env_with_marker(char *const envp[], char **buf, size_t cap);

#endif
