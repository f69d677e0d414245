/* SPDX-License-Identifier: MIT */
/*
 * Hand-written hooks for the variadic functions: open and friends (mode only
 * with O_CREAT/O_TMPFILE), fcntl, ioctl, prctl, mremap, clone and syscall()
 * itself, which is accounted under its first argument so that the futex,
 * statx, close or gettid calls a runtime (libuv) makes through it are seen.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "symbols.h"
#include "real.h"

/* After a counted call that returned r (-1 and errno on failure): the
 * descriptors it made, in the syscall's own arguments (core/fd_kinds.c). */
static long noted(unsigned nr, long a0, long a1, long a2, long a3, long a4, long r)
{
	const long args[6] = { a0, a1, a2, a3, a4, 0 };
	kp_fd_kinds_note(nr, args, r == -1 ? -(long)errno : r);
	return r;
}

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_HOOK(name, dirfd_param, dirfd_arg)                                \
	KP_EXPORT int name(dirfd_param const char *path, int flags, ...)       \
	{                                                                      \
		mode_t mode = 0;                                               \
		if (needs_mode(flags)) {                                       \
			va_list ap;                                            \
			va_start(ap, flags);                                   \
			mode = (mode_t)va_arg(ap, int);                        \
			va_end(ap);                                            \
		}                                                              \
		if (unlikely(!kp_real.name)) {                                 \
			kp_ensure_init();                                      \
			if (!kp_real.name)                                     \
				return (int)kp_raw_result(kp_raw(SYS_openat,      \
					dirfd_arg, path, flags, mode));        \
		}                                                              \
		struct kp_call c;                                              \
		if (!kp_call_begin(&c, SYS_openat, (long)(uintptr_t)path, KP_CALLER())) \
			return KP_PASS(int, kp_real.name(KP_DIRFD_##name path, flags, mode)); \
		return (int)noted(SYS_openat, dirfd_arg, (long)(uintptr_t)path, flags, \
				  mode, 0,                                     \
				  kp_finish_int(&c, kp_real.name(KP_DIRFD_##name path, flags, mode))); \
	}
#define KP_DIRFD_open
#define KP_DIRFD_open64
#define KP_DIRFD_openat dirfd,
#define KP_DIRFD_openat64 dirfd,
OPEN_HOOK(open, , AT_FDCWD)
OPEN_HOOK(open64, , AT_FDCWD)
OPEN_HOOK(openat, int dirfd KP_COMMA, dirfd)
OPEN_HOOK(openat64, int dirfd KP_COMMA, dirfd)

#define FCNTL_HOOK(name)                                                       \
	KP_EXPORT int name(int fd, int cmd, ...)                               \
	{                                                                      \
		va_list ap;                                                    \
		va_start(ap, cmd);                                             \
		void *arg = va_arg(ap, void *);                                \
		va_end(ap);                                                    \
		if (unlikely(!kp_real.name)) {                                 \
			kp_ensure_init();                                      \
			if (!kp_real.name)                                     \
				return (int)kp_raw_result(kp_raw(SYS_fcntl, fd, cmd, arg)); \
		}                                                              \
		struct kp_call c;                                              \
		if (!kp_call_begin(&c, SYS_fcntl, fd, KP_CALLER()))            \
			return KP_PASS(int, kp_real.name(fd, cmd, arg));       \
		return (int)noted(SYS_fcntl, fd, cmd, (long)(uintptr_t)arg, 0, 0, \
				  kp_finish_int(&c, kp_real.name(fd, cmd, arg))); \
	}
FCNTL_HOOK(fcntl)
FCNTL_HOOK(fcntl64)

KP_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (unlikely(!kp_real.ioctl)) {
		kp_ensure_init();
		if (!kp_real.ioctl)
			return (int)kp_raw_result(kp_raw(SYS_ioctl, fd, req, arg));
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_ioctl, fd, KP_CALLER()))
		return KP_PASS(int, kp_real.ioctl(fd, req, arg));
	return (int)kp_finish_int(&c, kp_real.ioctl(fd, req, arg));
}

KP_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long);
	unsigned long a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long);
	unsigned long a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (unlikely(!kp_real.prctl)) {
		kp_ensure_init();
		if (!kp_real.prctl)
			return (int)kp_raw_result(kp_raw(SYS_prctl, option, a2, a3, a4, a5));
	}
	if (option == PR_SET_SECCOMP)
		kp_rw_sandboxed();
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_prctl, option, KP_CALLER()))
		return KP_PASS(int, kp_real.prctl(option, a2, a3, a4, a5));
	int r = (int)kp_finish_int(&c, kp_real.prctl(option, a2, a3, a4, a5));
	if (r == 0 && option == PR_SET_NAME)
		kp_thread_named((const char *)a2);
	return r;
}

KP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (unlikely(!kp_real.mremap)) {
		kp_ensure_init();
		if (!kp_real.mremap) {
			long r = kp_raw(SYS_mremap, old, old_len, new_len, flags, new_addr);
			if (r < 0 && r > -4096) {
				errno = (int)-r;
				return MAP_FAILED;
			}
			return (void *)r;
		}
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_mremap, (long)(uintptr_t)old, KP_CALLER()))
		return KP_PASS(void *, kp_real.mremap(old, old_len, new_len, flags, new_addr));
	void *r = kp_real.mremap(old, old_len, new_len, flags, new_addr);
	int e = errno;
	bool failed = r == MAP_FAILED;
	kp_call_end(&c, failed, failed ? e : 0, failed ? -e : (int64_t)(intptr_t)r);
	errno = e;
	return r;
}

/*
 * A clone child that is a process of its own needs what fork's atfork
 * handler gives a fork child: without CLONE_VM it has a copy of our state
 * and must start its own stream (a trampoline on its stack does that
 * before fn runs). With CLONE_VM it shares our memory, TLS included: with
 * CLONE_VFORK the caller is suspended, so the child passes through
 * uncounted like a vfork child; without it the child's calls land in the
 * cloning thread's counters and only its exec and exit, told apart by pid
 * (kp_foreign_process), leave our stream alone.
 */
struct clone_start {
	int (*fn)(void *);
	void *arg;
};

static int clone_trampoline(void *p)
{
	struct clone_start *start = p;
	int (*fn)(void *) = start->fn;
	void *arg = start->arg;
	kp_caller_site = 0; /* the parent's, set around its clone call */
	kp_fork_child();
	/* glibc ends the child with a bare exit syscall: flush before it */
	int status = fn(arg);
	/* rewrite mode: the exit syscall's hook counts it and flushes */
	if (!kp_rw_active)
		kp_finish(status, true);
	return status;
}

KP_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *ptid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *ctid = va_arg(ap, pid_t *);
	va_end(ap);
	kp_ensure_init();
	if (!kp_real.clone) {
		errno = ENOSYS;
		return -1;
	}
	struct kp_call c;
	/* rewrite mode: counted by the syscall hook, which also marks a
	 * vfork-like child; a process child still needs the trampoline */
	bool counted = kp_call_begin(&c, SYS_clone, flags, KP_CALLER());
	if (!counted && !(kp_rw_active && kp_state == KP_ACTIVE))
		return kp_real.clone(fn, stack, flags, arg, ptid, tls, ctid);
	bool process = !(flags & CLONE_THREAD) && fn && stack;
	bool vfork_like = counted && process && (flags & CLONE_VM) && (flags & CLONE_VFORK);
	struct kp_thread *saved_self = kp_self;
	struct clone_start start = { fn, arg };
	if (process && !(flags & CLONE_VM)) {
		/* the child starts on a copy of our memory, this frame
		 * included: fn and arg stay here, and the child's stack gets
		 * only what libc puts there (it may be all the program
		 * mapped, or a bad pointer the child alone would fault on) */
		arg = &start;
		fn = clone_trampoline;
	} else if (vfork_like) {
		kp_self = NULL;
		kp_tls_flags |= KP_TLS_VFORK_CHILD;
	} else if (process) {
		if (!kp_proc.pid)
			kp_learn_pids();
		__atomic_store_n(&kp_proc.shared_vm, true, __ATOMIC_RELEASE);
	}
	/* rewrite mode: the syscall's site is the caller of clone() */
	uint64_t saved_site = kp_caller_site;
	kp_caller_site = KP_CALLER();
	int r = kp_real.clone(fn, stack, flags, arg, ptid, tls, ctid);
	int e = errno;
	kp_caller_site = saved_site;
	if (vfork_like) {
		kp_self = saved_self;
		kp_tls_flags &= ~KP_TLS_VFORK_CHILD;
	}
	if (!counted) {
		errno = e;
		return r;
	}
	if (r > 0 && !(flags & CLONE_THREAD))
		kp_note_fork(r, "clone");
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	/* the syscall's arguments: flags, stack, parent_tid (a pidfd) ... */
	errno = e;
	noted(SYS_clone, flags, (long)(uintptr_t)stack, (long)(uintptr_t)ptid,
	      (long)(uintptr_t)ctid, (long)(uintptr_t)tls, r);
	errno = e;
	return r;
}

/* glibc issues plain renameat when flags are 0. */
KP_EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to,
			unsigned int flags)
{
	if (unlikely(!kp_real.renameat2)) {
		kp_ensure_init();
		if (!kp_real.renameat2)
			return (int)kp_raw_result(kp_raw(SYS_renameat2, fromfd, from, tofd, to, flags));
	}
	struct kp_call c;
	if (!kp_call_begin(&c, flags ? SYS_renameat2 : SYS_renameat, fromfd, KP_CALLER()))
		return KP_PASS(int, kp_real.renameat2(fromfd, from, tofd, to, flags));
	return (int)kp_finish_int(&c, kp_real.renameat2(fromfd, from, tofd, to, flags));
}

/* The exported syscall() is syscall_front.S: vfork goes to vfork.S first. */
long kp_syscall_hook(long nr, ...)
{
	va_list ap;
	va_start(ap, nr);
	long a1 = va_arg(ap, long);
	long a2 = va_arg(ap, long);
	long a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long);
	long a5 = va_arg(ap, long);
	long a6 = va_arg(ap, long);
	va_end(ap);
	switch (nr) {
	case SYS_close:
		return kp_close_at((int)a1, KP_CALLER());
	case SYS_close_range:
		return kp_close_range_at((unsigned)a1, (unsigned)a2, (int)a3, KP_CALLER());
	case SYS_dup2:
		return kp_dup2_at((int)a1, (int)a2, KP_CALLER());
	case SYS_dup3:
		return kp_dup3_at((int)a1, (int)a2, (int)a3, KP_CALLER());
	case SYS_execve:
		return execve((const char *)a1, (char *const *)a2, (char *const *)a3);
	case SYS_exit_group:
		_exit((int)a1);
	case SYS_seccomp:
		if (a1 == SECCOMP_SET_MODE_STRICT || a1 == SECCOMP_SET_MODE_FILTER)
			kp_rw_sandboxed();
		break;
	case SYS_prctl:
		if (a1 == PR_SET_SECCOMP)
			kp_rw_sandboxed();
		break;
	default:
		break;
	}
	if (unlikely(!kp_real.syscall)) {
		kp_ensure_init();
		if (!kp_real.syscall)
			return kp_raw_result(kp_raw(nr, a1, a2, a3, a4, a5, a6));
	}
	struct kp_call c;
	if (!kp_call_begin(&c, (unsigned long)nr < KP_SYSCALL_MAX ? (unsigned)nr : KP_SYSCALL_MAX, a1, KP_CALLER()))
		return KP_PASS(long, kp_real.syscall(nr, a1, a2, a3, a4, a5, a6));
	long r = kp_real.syscall(nr, a1, a2, a3, a4, a5, a6);
	if (r == 0 && (nr == SYS_fork || (nr == SYS_clone && !(a1 & (CLONE_VM | CLONE_THREAD))))) {
		/* a raw fork: the child did not run the atfork handlers */
		kp_call_abandon(&c);
		kp_fork_child();
		return 0;
	}
	if (r > 0 && (nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone3 ||
		      (nr == SYS_clone && !(a1 & CLONE_THREAD))))
		kp_note_fork((pid_t)r, "clone");
	r = kp_finish_int(&c, r);
	if ((unsigned long)nr < KP_SYSCALL_MAX) {
		int e = errno;
		const long args[6] = { a1, a2, a3, a4, a5, a6 };
		kp_fd_kinds_note((unsigned)nr, args, r == -1 ? -(long)e : r);
		errno = e;
	}
	return r;
}
