/* SPDX-License-Identifier: MIT */
/*
 * Hooks that could take the trace descriptor from us: close, close_range,
 * closefrom, dup2, dup3. Normally the descriptor lives in the output
 * process (sink/output_proc.c) and these hooks only count; only when that
 * process could not be started is it in the program's table, and then a
 * program that closes "every descriptor" keeps working and its trace stays
 * complete: closing ours reports success without closing it, ranges are
 * split around it, and a dup2 onto its number first moves ours elsewhere.
 * In a vfork child the descriptor table is the child's own, so everything
 * passes through there.
 */
#include <unistd.h>

#include "symbols.h"
#include "real.h"

static bool guarding(void)
{
	return kp_state == KP_ACTIVE && !(kp_tls_flags & KP_TLS_VFORK_CHILD) &&
	       kp_output_fd() >= 0;
}

static void need_real(void **p)
{
	if (unlikely(!*p))
		kp_ensure_init();
}

/* After a counted call that returned r (-1 and errno e on failure). */
static void noted(unsigned nr, long a0, long a1, long a2, int r, int e)
{
	const long args[6] = { a0, a1, a2, 0, 0, 0 };
	kp_fd_kinds_note(nr, args, r == -1 ? -(long)e : r);
}

/* Calls real close_range and accounts it; -1/errno like the function. */
static int close_range_counted(unsigned first, unsigned last, int flags, uint64_t site)
{
	struct kp_call c;
	if (!kp_real.close_range) {
		long r = kp_raw(SYS_close_range, first, last, flags);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return 0;
	}
	if (!kp_call_begin(&c, SYS_close_range, first, site))
		return KP_PASS_AT(int, kp_real.close_range(first, last, flags), site);
	int r = kp_real.close_range(first, last, flags);
	int e = errno;
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	noted(SYS_close_range, first, last, flags, r, e);
	errno = e;
	return r;
}

int kp_close_at(int fd, uint64_t site)
{
	need_real((void **)&kp_real.close);
	if (guarding() && kp_output_is_ours(fd))
		return 0;
	kp_output_forget_stale(fd);
	if (!kp_real.close) {
		long r = kp_raw(SYS_close, fd);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return 0;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_close, fd, site))
		return KP_PASS_AT(int, kp_real.close(fd), site);
	int r = kp_real.close(fd);
	int e = errno;
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	noted(SYS_close, fd, 0, 0, r, e);
	errno = e;
	return r;
}

KP_EXPORT int close(int fd)
{
	return kp_close_at(fd, KP_CALLER());
}

static int close_range_real(unsigned first, unsigned last, int flags)
{
	if (kp_real.close_range)
		return kp_real.close_range(first, last, flags);
	long r = kp_raw(SYS_close_range, first, last, flags);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/*
 * The program's one close_range over [first, last], made as two around our
 * descriptor: counted as the one call the program made (strace of the
 * program alone shows one).
 */
static int close_range_around(unsigned first, unsigned last, int flags, unsigned ours,
			      uint64_t site)
{
	struct kp_call c;
	bool counted = kp_call_begin(&c, SYS_close_range, first, site);
	/* rewrite mode: the calls below are counted at the syscall */
	uint64_t saved_site = kp_caller_site;
	kp_caller_site = site;
	int r = 0, e = 0;
	if (ours > first && close_range_real(first, ours - 1, flags)) {
		r = -1;
		e = errno;
	}
	/* rewrite mode counts at the syscall: the second part goes uncounted */
	bool second_raw = !counted && kp_rw_active && ours > first;
	if (ours < last && !second_raw && close_range_real(ours + 1, last, flags) && r == 0) {
		r = -1;
		e = errno;
	}
	if (ours < last && second_raw) {
		long rr = kp_raw(SYS_close_range, ours + 1, last, flags);
		noted(SYS_close_range, ours + 1, last, flags, rr < 0 ? -1 : 0, (int)-rr);
		if (rr < 0 && r == 0) {
			r = -1;
			e = (int)-rr;
		}
	}
	kp_caller_site = saved_site;
	if (counted) {
		kp_call_end(&c, r == -1, e, r == -1 ? -e : 0);
		noted(SYS_close_range, first, last, flags, r, e);
	}
	errno = r ? e : errno;
	return r;
}

int kp_close_range_at(unsigned first, unsigned last, int flags, uint64_t site)
{
	need_real((void **)&kp_real.close_range);
	int ours = kp_output_fd();
	if (!guarding() || (unsigned)ours < first || (unsigned)ours > last)
		return close_range_counted(first, last, flags, site);
	int e = errno;
	int r = close_range_around(first, last, flags, (unsigned)ours, site);
	if (!r)
		errno = e;
	return r;
}

KP_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	return kp_close_range_at(first, last, flags, KP_CALLER());
}

KP_EXPORT void closefrom(int lowfd)
{
	uint64_t site = KP_CALLER();
	need_real((void **)&kp_real.closefrom);
	int ours = kp_output_fd();
	if (lowfd < 0)
		lowfd = 0;
	if (guarding() && ours >= lowfd) {
		int e = errno;
		close_range_around((unsigned)lowfd, ~0U, 0, (unsigned)ours, site);
		errno = e;
		return;
	}
	if (!kp_real.closefrom) {
		kp_raw(SYS_close_range, lowfd, ~0U, 0);
		return;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_close_range, lowfd, site)) {
		KP_PASS(int, (kp_real.closefrom(lowfd), 0));
		return;
	}
	int e = errno;
	kp_real.closefrom(lowfd);
	kp_call_end(&c, false, 0, 0);
	noted(SYS_close_range, lowfd, ~0U, 0, 0, 0);
	errno = e;
}

static void protect(int newfd)
{
	if (guarding() && kp_output_is_ours(newfd))
		kp_output_move_away();
	kp_output_forget_stale(newfd);
}

int kp_dup2_at(int oldfd, int newfd, uint64_t site)
{
	need_real((void **)&kp_real.dup2);
	if (oldfd != newfd)
		protect(newfd);
	if (!kp_real.dup2) {
		long r = kp_raw(SYS_dup2, oldfd, newfd);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return (int)r;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_dup2, oldfd, site))
		return KP_PASS_AT(int, kp_real.dup2(oldfd, newfd), site);
	int r = kp_real.dup2(oldfd, newfd);
	int e = errno;
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	noted(SYS_dup2, oldfd, newfd, 0, r, e);
	errno = e;
	return r;
}

KP_EXPORT int dup2(int oldfd, int newfd)
{
	return kp_dup2_at(oldfd, newfd, KP_CALLER());
}

int kp_dup3_at(int oldfd, int newfd, int flags, uint64_t site)
{
	need_real((void **)&kp_real.dup3);
	if (oldfd != newfd)
		protect(newfd);
	if (!kp_real.dup3) {
		long r = kp_raw(SYS_dup3, oldfd, newfd, flags);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return (int)r;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_dup3, oldfd, site))
		return KP_PASS_AT(int, kp_real.dup3(oldfd, newfd, flags), site);
	int r = kp_real.dup3(oldfd, newfd, flags);
	int e = errno;
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	noted(SYS_dup3, oldfd, newfd, flags, r, e);
	errno = e;
	return r;
}

KP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return kp_dup3_at(oldfd, newfd, flags, KP_CALLER());
}
