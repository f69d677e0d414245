/* SPDX-License-Identifier: MIT */
/*
 * The C side of rewrite mode's syscall hook (entry.S calls
 * kp_rw_hook with the caller's registers). A call is timed with the same
 * kp_call_start/kp_call_end as a symbol hook, so counts, time, retries,
 * errors, histograms, call sites and events come out the same; the hook
 * makes the syscall itself with the raw instruction of this library,
 * which is never rewritten.
 *
 * The lifecycle syscalls keep symbol mode's rules: a fork child starts
 * its own stream; a vfork child (and a clone(CLONE_VM|CLONE_VFORK) child,
 * posix_spawn's) passes through uncounted; execve is counted and the
 * aggregates flushed before it is made; exit_group makes the final flush
 * first; exit and rt_sigreturn are counted before they are made. mmap and
 * mprotect that make code executable trigger a rescan.
 */
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/wait.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>

#include "../lifecycle/lifecycle.h"
#include "../patch/dispatch.h"
#include "../patch/tramp.h"
#include "rewrite.h"
#include "../core/user_mem.h"

__thread uint64_t kp_caller_site;
__thread uint64_t kp_rw_vfork_ret;
__thread uint64_t kp_rw_cache_site, kp_rw_cache_gen;
/* Threads of the process (clone with CLONE_THREAD, exit), from the count
 * in /proc at the start of rewrite mode on. */

_Static_assert(sizeof(struct kp_call) <= sizeof(((struct kp_rw_frame *)0)->call),
	       "struct kp_call does not fit the frame");

/* clone3's argument, as the kernel reads it (linux/sched.h). */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
		stack_size, tls, set_tid, set_tid_size, cgroup;
};

/*
 * Syscalls that are more than a timed call: mmap mprotect munmap
 * rt_sigaction rt_sigprocmask rt_sigreturn mremap clone fork vfork execve
 * exit wait4 exit_group waitid rt_sigsuspend execveat pkey_mprotect clone3
 * prctl (a thread's name, a seccomp filter) seccomp. Tested with
 * immediates, no table: a table is one more page per call (see KP_RW_HOT).
 */
#define SPECIAL_LOW ((1ULL << SYS_mmap) | (1ULL << SYS_mprotect) | (1ULL << SYS_munmap) | \
		     (1ULL << SYS_rt_sigaction) | (1ULL << SYS_rt_sigprocmask) |               \
		     (1ULL << SYS_rt_sigreturn) | (1ULL << SYS_mremap) | (1ULL << SYS_clone) | \
		     (1ULL << SYS_fork) | (1ULL << SYS_vfork) | (1ULL << SYS_execve) |       \
		     (1ULL << SYS_exit) | (1ULL << SYS_wait4))
static inline __attribute__((always_inline)) bool special(uint64_t nr)
{
	if (nr < 64)
		return (SPECIAL_LOW >> nr) & 1;
	return nr == SYS_exit_group || nr == SYS_execveat || nr == SYS_pkey_mprotect ||
	       nr == SYS_clone3 || nr == SYS_rt_sigsuspend || nr == SYS_waitid ||
	       nr == SYS_prctl || nr == SYS_seccomp || nr >= KP_SYSCALL_MAX;
}

static inline __attribute__((always_inline)) long sys_of(const struct kp_rw_frame *f)
{
	const uint64_t *a = f->args;
	return kp_raw_syscall6((long)f->nr, (long)a[0], (long)a[1], (long)a[2],
			       (long)a[3], (long)a[4], (long)a[5]);
}

static inline __attribute__((always_inline)) bool failed_ret(long r)
{
	return (unsigned long)r > -4096UL;
}

/*
 * Like a symbol hook's kp_call_begin, but also in rewrite mode; and never
 * initializing (this may run inside pthread_once's own futex call): a
 * call before the shim is active passes through.
 */
static inline __attribute__((always_inline)) bool may_start(struct kp_call *c, unsigned nr, long arg0)
{
	/* as in symbol mode, a thread with a block counts even inside a
	 * flush (a signal handler's calls); the shim's own work does not */
	unsigned flags = kp_tls_flags;
	if (likely(kp_self && !(flags & KP_TLS_IN_INIT)))
		return kp_call_start(c, nr, arg0);
	if (flags & (KP_TLS_IN_INIT | KP_TLS_VFORK_CHILD))
		return false;
	/* sites are rewritten before the shim says it is active (its
	 * stream has started): a thread that reaches one waits for the end
	 * of init in kp_call_start rather than miss a call (deciding "not
	 * counted" here, it could be preempted before its syscall until
	 * after the stream's start) */
	if (__atomic_load_n(&kp_state, __ATOMIC_ACQUIRE) != KP_ACTIVE &&
	    !__atomic_load_n(&kp_rw_active, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&kp_rw_patching, __ATOMIC_ACQUIRE))
		return false;
	return kp_call_start(c, nr, arg0);
}

/* The site of a call: the caller of the hooked libc function it came
 * through (kp_caller_site), else the rewritten instruction's caller. */
static inline __attribute__((always_inline)) uint64_t site_of(const struct kp_rw_frame *f)
{
	uint64_t site = kp_caller_site;
	if (site)
		return site;
	/* a trampoline's call: the original site is stored before it, at
	 * any alignment (a plain load of a misaligned word is undefined) */
	if (unlikely(kp_rw_jmp)) {
		memcpy(&site, (const void *)(uintptr_t)(f->ret_addr - KP_PATCH_TRAMP_SITE_BACK),
		       sizeof(site));
		return site + 2;
	}
	return f->ret_addr;
}

/* The start of a call that f made, with its site. */
static inline __attribute__((always_inline)) bool begin(struct kp_call *c,
							const struct kp_rw_frame *f,
							unsigned nr, long arg0)
{
	if (!may_start(c, nr, arg0))
		return false;
	c->site = site_of(f);
	return true;
}

static inline __attribute__((always_inline)) void end(struct kp_call *c, long r)
{
	bool failed = failed_ret(r);
	kp_call_end(c, failed, failed ? (int)-r : 0, r);
}

/* Descriptors the call created, duplicated or closed (core/fd_kinds.h). */
static inline __attribute__((always_inline)) void note_kinds(const struct kp_rw_frame *f, long r)
{
	if (kp_fd_kinds_touches(f->nr))
		kp_fd_kinds_note((unsigned)f->nr, (const long *)(const void *)f->args, r);
}

/* A call passed through: the shim's own when it comes from the shim's work. */
static void not_counted(unsigned nr)
{
	if ((kp_tls_flags & KP_TLS_IN_INIT) && kp_own_counting())
		__atomic_fetch_add(&kp_own_calls[nr], 1, __ATOMIC_RELAXED);
}

static inline __attribute__((always_inline)) long timed(struct kp_rw_frame *f, unsigned nr)
{
	struct kp_call c;
	if (unlikely(!begin(&c, f, nr, (long)f->args[0]))) {
		not_counted(nr);
		return sys_of(f);
	}
	long r = sys_of(f);
	end(&c, r);
	note_kinds(f, r);
	return r;
}

/* ---- fork and vfork ---- */

static int fork_like(struct kp_rw_frame *f)
{
	struct kp_call c;
	bool counted = begin(&c, f, (unsigned)f->nr, (long)f->args[0]);
	bool traced = kp_tracing();
	if (traced)
		kp_fork_reset_done = false;
	long r = sys_of(f);
	if (r == 0) {
		/* the kernel does not pass dispatch on to a child */
		if (kp_sud_on)
			kp_sud_after_fork_child();
		/* the child: a stream of its own, as fork's atfork handler does */
		if (counted)
			kp_call_abandon(&c);
		if (traced) {
			kp_after_fork_child();
			kp_fork_reset_done = true;
		}
		kp_rw_live_threads = 1;
		f->result = 0;
		return KP_RW_DONE;
	}
	if (r > 0 && traced)
		kp_note_fork((pid_t)r, "fork");
	if (counted) {
		end(&c, r);
		note_kinds(f, r);
	}
	f->result = (uint64_t)r;
	return KP_RW_DONE;
}

/*
 * vfork-like calls in flight on this thread (the child shares the TLS:
 * its own vfork pushes above ours and pops before we resume).
 */
#define VFORK_MAX 8
struct vfork_slot {
	uint64_t ret;
	struct kp_thread *saved_self;
	bool counted, traced, was_child;
	uint32_t stack_depth; /* the shim stack's, as the child starts */
	struct kp_call call;
};
static __thread struct vfork_slot vfork_stack[VFORK_MAX];
static __thread unsigned vfork_depth;

/*
 * A vfork child about to exec or exit from inside the shim: its frames on
 * the shim stack (whose depth it shares with its parent) never return, so
 * the depth goes back to what the parent left; returns the current one
 * for a call that fails and comes back.
 */
static uint32_t vfork_child_leaves(void)
{
	uint32_t now = kp_stack.depth;
	if ((kp_tls_flags & KP_TLS_VFORK_CHILD) && vfork_depth)
		kp_stack.depth = vfork_stack[vfork_depth - 1].stack_depth;
	return now;
}

static int vfork_like(struct kp_rw_frame *f)
{
	unsigned d = vfork_depth;
	if (d >= VFORK_MAX) {
		f->result = (uint64_t)-EAGAIN;
		return KP_RW_DONE;
	}
	struct vfork_slot *s = &vfork_stack[d];
	s->ret = f->ret_addr;
	s->counted = begin(&s->call, f, (unsigned)f->nr, (long)f->args[0]);
	s->traced = kp_tracing();
	s->saved_self = kp_self;
	s->was_child = kp_tls_flags & KP_TLS_VFORK_CHILD;
	/* entry.S puts the depth back to the frame's before the call */
	s->stack_depth = f->prev_depth >= 0 ? (uint32_t)f->prev_depth : kp_stack.depth;
	kp_self = NULL;
	kp_tls_flags |= KP_TLS_VFORK_CHILD;
	vfork_depth = d + 1;
	kp_rw_vfork_ret = f->ret_addr;
	return KP_RW_VFORK;
}

/* In the parent, resumed: f is a fresh frame with the result. */
void kp_rw_vfork_parent(struct kp_rw_frame *f)
{
	unsigned d = --vfork_depth;
	struct vfork_slot *s = &vfork_stack[d];
	f->ret_addr = s->ret;
	kp_self = s->saved_self;
	/* a child that died inside the shim left its depth: this frame is
	 * then off the shim stack, and nothing else of ours is on it */
	if (f->prev_depth < 0)
		kp_stack.depth = s->stack_depth;
	if (!s->was_child)
		kp_tls_flags &= ~KP_TLS_VFORK_CHILD;
	kp_rw_vfork_ret = d ? vfork_stack[d - 1].ret : 0;
	long r = (long)f->result;
	if (r > 0 && s->traced)
		kp_note_fork((pid_t)r, "vfork");
	if (s->counted) {
		end(&s->call, r);
		note_kinds(f, r);
	}
}

/* ---- clone with a child stack ---- */

#define CF_COUNTED 1
#define CF_TRACED 2
#define CF_VFORK 4
#define CF_WAS_CHILD 8

static int clone_stack(struct kp_rw_frame *f, uint64_t flags, uint64_t top,
		       const struct clone3_args *ca, size_t ca_size)
{
	bool vfork = (flags & CLONE_VM) && (flags & CLONE_VFORK);
	/* the child pops the replaced argument, then returns to the site: a
	 * stack that cannot take them is one the child cannot use either
	 * (it faults, as it would have without us), but the parent must not:
	 * then the call is made as it came */
	uint64_t w[2] = { ca ? f->args[0] : f->args[1], kp_sud_return(f->ret_addr) };
	if (kp_user_write((void *)(uintptr_t)(top - 16), w, sizeof(w))) {
		f->result = (uint64_t)timed(f, (unsigned)f->nr);
		return KP_RW_DONE;
	}
	uint64_t state = 0;
	if (begin((struct kp_call *)(void *)f->call, f, (unsigned)f->nr, (long)flags))
		state |= CF_COUNTED;
	if (kp_tracing())
		state |= CF_TRACED;
	if ((state & CF_TRACED) && (flags & CLONE_VM) && !(flags & CLONE_THREAD) && !vfork) {
		/* a process sharing our memory: told apart by pid (symbol mode's clone hook) */
		if (!kp_proc.pid)
			kp_learn_pids();
		__atomic_store_n(&kp_proc.shared_vm, true, __ATOMIC_RELEASE);
	}
	if (vfork) {
		state |= CF_VFORK;
		if (kp_tls_flags & KP_TLS_VFORK_CHILD)
			state |= CF_WAS_CHILD;
		f->saved_self = kp_self;
		kp_self = NULL;
		kp_tls_flags |= KP_TLS_VFORK_CHILD;
	}
	f->counted = state;
	f->clone_flags = flags;
	/* before the call: the new thread may be gone before we return */
	if (flags & CLONE_THREAD)
		__atomic_add_fetch(&kp_rw_live_threads, 1, __ATOMIC_ACQ_REL);
	if (!ca) {
		f->saved_arg = f->args[1];
		f->args[1] = top - 16;
		return KP_RW_CLONE_STACK;
	}
	memcpy(f->clone_args, ca, ca_size);
	((struct clone3_args *)(void *)f->clone_args)->stack_size -= 16;
	f->saved_arg = f->args[0];
	f->args[0] = (uint64_t)(uintptr_t)f->clone_args;
	return KP_RW_CLONE3_STACK;
}

void kp_rw_clone_parent(struct kp_rw_frame *f)
{
	uint64_t state = f->counted;
	if (f->nr == SYS_clone3)
		f->args[0] = f->saved_arg;
	else
		f->args[1] = f->saved_arg;
	if (state & CF_VFORK) {
		kp_self = f->saved_self;
		if (!(state & CF_WAS_CHILD))
			kp_tls_flags &= ~KP_TLS_VFORK_CHILD;
	}
	long r = (long)f->result;
	if (r < 0 && (f->clone_flags & CLONE_THREAD))
		__atomic_sub_fetch(&kp_rw_live_threads, 1, __ATOMIC_ACQ_REL);
	if (r > 0 && (state & CF_TRACED) && !(f->clone_flags & CLONE_THREAD))
		kp_note_fork((pid_t)r, (state & CF_VFORK) ? "vfork" : "clone");
	if (state & CF_COUNTED) {
		end((struct kp_call *)(void *)f->call, r);
		note_kinds(f, r);
	}
}

/* ---- the rest ---- */

/* A string of the caller's that may be a bad pointer, copied safely. */
static const char *safe_string(uint64_t p, char *buf, size_t cap)
{
	struct iovec local = { buf, cap - 1 }, remote = { (void *)(uintptr_t)p, cap - 1 };
	long n = kp_raw(SYS_process_vm_readv, kp_raw0(SYS_getpid), &local, 1, &remote, 1, 0);
	if (n <= 0) {
		/* the tail may cross into an unmapped page: try less */
		local.iov_len = remote.iov_len = 4096 - (p & 4095);
		if (remote.iov_len > cap - 1)
			local.iov_len = remote.iov_len = cap - 1;
		n = kp_raw(SYS_process_vm_readv, kp_raw0(SYS_getpid), &local, 1, &remote, 1, 0);
	}
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static int exec_call(struct kp_rw_frame *f)
{
	unsigned nr = (unsigned)f->nr;
	if (!kp_tracing()) {
		/* a vfork or posix_spawn child: its parent's fork record says
		 * why the shim cannot be in the new program */
		if (kp_state == KP_ACTIVE && (kp_tls_flags & KP_TLS_VFORK_CHILD))
			kp_child_exec_check(
				nr == SYS_execve ? AT_FDCWD : (int)f->args[0],
				(const char *)(nr == SYS_execve ? f->args[0] : f->args[1]),
				nr == SYS_execve ? 0 : (int)f->args[4],
				(char *const *)(nr == SYS_execve ? f->args[2] : f->args[3]), false);
		uint32_t depth = vfork_child_leaves();
		f->result = (uint64_t)sys_of(f);
		kp_stack.depth = depth;
		return KP_RW_DONE;
	}
	char path[512];
	safe_string(nr == SYS_execve ? f->args[0] : f->args[1], path, sizeof(path));
	kp_account_untimed(nr, false, 0, true);
	/* whether the new image can load us: the exec record says why not */
	kp_proc.exec_not_entered = kp_exec_not_entered(
		nr == SYS_execve ? AT_FDCWD : (int)f->args[0], path,
		nr == SYS_execve ? 0 : (int)f->args[4],
		(char *const *)(nr == SYS_execve ? f->args[2] : f->args[3]), false);
	kp_flush(KP_FLUSH_EXEC, path);
	kp_sud_before_exec();
	long r = sys_of(f);
	kp_sud_exec_failed();
	kp_proc.exec_not_entered = NULL;
	kp_output_exec_failed();
	kp_account_untimed(nr, true, (int)-r, false);
	f->result = (uint64_t)r;
	return KP_RW_DONE;
}

static void count_untimed(unsigned nr)
{
	if (kp_state != KP_ACTIVE || (kp_tls_flags & (KP_TLS_VFORK_CHILD | KP_TLS_IN_INIT)))
		return;
	int e = errno;
	if (kp_self)
		kp_account_untimed(nr, false, 0, true);
	else
		kp_account_global(nr, 0, false, 0);
	errno = e;
}

void kp_rw_count_sigreturn(void)
{
	count_untimed(SYS_rt_sigreturn);
}

/* The call f came with, its pointer arguments 1 and 2 (or 0) replaced. */
static long timed_with(void *ctx, unsigned which, uint64_t x, uint64_t y)
{
	struct kp_rw_frame *f = ctx;
	uint64_t save[2] = { f->args[which], f->args[which + 1] };
	f->args[which] = x;
	if (which)
		f->args[which + 1] = y;
	long r = timed(f, (unsigned)f->nr);
	f->args[which] = save[0];
	f->args[which + 1] = save[1];
	return r;
}

static long sig_call(void *ctx, uint64_t x, uint64_t y)
{
	struct kp_rw_frame *f = ctx;
	return timed_with(f, f->nr == SYS_rt_sigsuspend ? 0 : 1, x, y);
}

/* rt_sigaction, rt_sigprocmask, rt_sigsuspend under dispatch (dispatch.h). */
static long signal_call(struct kp_rw_frame *f)
{
	const uint64_t *a = f->args;
	switch (f->nr) {
	case SYS_rt_sigaction:
		return kp_sud_sigaction((long)a[0], a[1], a[2], a[3], sig_call, f);
	case SYS_rt_sigprocmask:
		return kp_sud_sigprocmask((long)a[0], a[1], a[2], a[3], sig_call, f);
	default:
		return kp_sud_sigsuspend(a[0], a[1], sig_call, f);
	}
}

/*
 * wait4 or waitid for any child with __WALL/__WCLONE when the output
 * process is the only child (sink.h): made for our own pid instead, so
 * that it fails with ECHILD as it would have without the shim.
 */
static long wait_call(struct kp_rw_frame *f)
{
	uint64_t *a = f->args;
	/* int arguments: the upper half of the register is not the caller's */
	bool any = f->nr == SYS_wait4 ? (int)a[0] <= 0
				      : ((int)a[0] == P_ALL || (int)a[0] == P_PGID);
	int options = (int)(f->nr == SYS_wait4 ? a[2] : a[3]);
	if (!any || !kp_tracing() || !kp_outproc_only_child(options))
		return timed(f, (unsigned)f->nr);
	uint64_t save[2] = { a[0], a[1] };
	long self = kp_raw0(SYS_getpid);
	if (f->nr == SYS_wait4) {
		a[0] = (uint64_t)self;
	} else {
		a[0] = P_PID;
		a[1] = (uint64_t)self;
	}
	long r = timed(f, (unsigned)f->nr);
	a[0] = save[0];
	a[1] = save[1];
	return r;
}

static __attribute__((noinline, cold)) int special_call(struct kp_rw_frame *f)
{
	uint64_t nr = f->nr;
	const uint64_t *a = f->args;
	long r;
	if (nr >= KP_SYSCALL_MAX) {
		f->result = (uint64_t)sys_of(f);
		return KP_RW_DONE;
	}
	switch (nr) {
	case SYS_mmap:
		r = timed(f, (unsigned)nr);
		if (!failed_ret(r))
			kp_maps_changed();
		if (!failed_ret(r) && (a[2] & PROT_EXEC))
			kp_rw_rescan((uint64_t)r, a[1]);
		break;
	case SYS_mprotect:
	case SYS_pkey_mprotect:
		r = timed(f, (unsigned)nr);
		if (r == 0)
			kp_maps_changed();
		if (r == 0 && (a[2] & PROT_EXEC))
			kp_rw_rescan(a[0], a[1]);
		break;
	case SYS_munmap:
		r = timed(f, (unsigned)nr);
		if (r == 0) {
			kp_maps_changed();
			kp_rw_unmapped(a[0], a[1]);
		}
		break;
	case SYS_wait4:
	case SYS_waitid:
		r = wait_call(f);
		break;
	case SYS_seccomp:
		if (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER)
			kp_rw_sandboxed();
		r = timed(f, (unsigned)nr);
		break;
	case SYS_prctl:
		if (a[0] == PR_SET_SECCOMP)
			kp_rw_sandboxed();
		r = timed(f, (unsigned)nr);
		if (r == 0 && a[0] == PR_SET_NAME)
			kp_thread_named((const char *)(uintptr_t)a[1]);
		break;
	case SYS_rt_sigaction:
	case SYS_rt_sigprocmask:
	case SYS_rt_sigsuspend:
		r = kp_sud_on ? signal_call(f) : timed(f, (unsigned)nr);
		break;
	case SYS_mremap:
		r = timed(f, (unsigned)nr);
		if (!failed_ret(r))
			kp_maps_changed();
		if (!failed_ret(r) && (uint64_t)r != a[0])
			kp_rw_moved(a[0], a[1], (uint64_t)r);
		break;
	case SYS_exit: {
		/* the thread's last call: counted, then its block is done (a
		 * clone(CLONE_VM) child, a process of its own on our memory,
		 * is counted with the thread that made it and ends nothing) */
		struct kp_thread *t = kp_self;
		bool traced = kp_tracing();
		if (traced)
			count_untimed(SYS_exit);
		f->saved_self = NULL;
		if (traced && t) {
			kp_thread_leave(t);
			f->saved_self = t; /* EXITED by entry.S, off its stack */
		}
		/* the last thread leaving this way ends the process: glibc
		 * never does (its last thread calls exit), a raw exit may */
		if (traced && __atomic_sub_fetch(&kp_rw_live_threads, 1, __ATOMIC_ACQ_REL) == 0)
			kp_finish((int)a[0], true);
		vfork_child_leaves();
		return KP_RW_EXIT;
	}
	case SYS_exit_group:
		if (kp_tracing()) {
			count_untimed(SYS_exit_group);
			kp_finish((int)a[0], true);
		}
		vfork_child_leaves();
		r = sys_of(f);
		break;
	case SYS_execve:
	case SYS_execveat:
		return exec_call(f);
	case SYS_fork:
		return fork_like(f);
	case SYS_vfork:
		return vfork_like(f);
	case SYS_clone:
		if (a[1])
			return clone_stack(f, a[0], a[1], NULL, 0);
		if (a[0] & CLONE_VM)
			return vfork_like(f);
		return fork_like(f);
	case SYS_clone3: {
		const void *user_ca = (const void *)(uintptr_t)a[0];
		size_t size = (size_t)a[1];
		if (!user_ca || size < 64 || size > sizeof(f->clone_args)) {
			/* the kernel refuses these (or a bigger future struct:
			 * ENOSYS sends glibc back to clone) */
			f->result = (uint64_t)(user_ca && size > sizeof(f->clone_args)
						       ? -ENOSYS
						       : timed(f, (unsigned)nr));
			return KP_RW_DONE;
		}
		/* read as the kernel will read it: what it cannot read is
		 * the program's EFAULT, not a fault of ours */
		union {
			struct clone3_args ca;
			uint64_t raw[sizeof(f->clone_args) / sizeof(uint64_t)];
		} copy;
		if (kp_user_read(user_ca, &copy, size)) {
			f->result = (uint64_t)timed(f, (unsigned)nr);
			return KP_RW_DONE;
		}
		const struct clone3_args *ca = &copy.ca;
		if (ca->stack)
			return clone_stack(f, ca->flags, ca->stack + ca->stack_size, ca, size);
		if (ca->flags & CLONE_VM)
			return vfork_like(f);
		return fork_like(f);
	}
	default:
		r = timed(f, (unsigned)nr);
		break;
	}
	f->result = (uint64_t)r;
	return KP_RW_DONE;
}

/*
 * The common case is split around the syscall, which entry.S
 * makes itself: after a syscall this machine's return predictions are
 * gone, and a return from a function that made the syscall costs a
 * misprediction, where the call to kp_rw_post and its return pair up.
 */
KP_RW_HOT __attribute__((aligned(4096), flatten)) int kp_rw_hook(struct kp_rw_frame *f)
{
	if (unlikely(!kp_rw_site_check(f->ret_addr - 2)))
		return KP_RW_NOT_SITE;
	/* a frame off the shim stack while it counts live frames */
	if (unlikely(f->prev_depth < 0) && unlikely(kp_stack.depth))
		kp_stack_check_stale(f->sp);
	uint64_t nr = f->nr;
	if (unlikely(special(nr)))
		return special_call(f);
	struct kp_call *c = (struct kp_call *)(void *)f->call;
	if (unlikely(!begin(c, f, (unsigned)nr, (long)f->args[0]))) {
		not_counted((unsigned)nr);
		f->counted = 0;
		return KP_RW_SYSCALL;
	}
	f->counted = 1;
	return KP_RW_SYSCALL;
}

/* After the syscall entry.S made for kp_rw_hook (F_RESULT). */
KP_RW_HOT __attribute__((flatten)) void kp_rw_post(struct kp_rw_frame *f)
{
	if (likely(f->counted)) {
		long r = (long)f->result;
		end((struct kp_call *)(void *)f->call, r);
		note_kinds(f, r);
	}
	if (unlikely(kp_sud_on) && kp_sud_watches(f->nr))
		kp_sud_after_call(f->nr, f->args, (long)f->result);
}

int kp_rw_sigreturn(uint64_t ret_addr)
{
	if (!kp_rw_site_known(ret_addr - 2))
		return 0;
	count_untimed(SYS_rt_sigreturn);
	return 1;
}
