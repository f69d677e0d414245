/* SPDX-License-Identifier: MIT */
/*
 * Process lifecycle hooks: fork, the C halves of the vfork hook (vfork.S),
 * posix_spawn, the exec family (final aggregates first, then the exec
 * record; the new image learns the old stream through KPROF_EXEC_STREAM,
 * which its init removes from the environment again), the exit paths (final
 * flush with the status) and __libc_start_main (main's return value is the
 * exit status).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"
#include "real.h"
#include "../core/user_mem.h"

extern char **environ;

static void need_real(void *p)
{
	if (unlikely(!p))
		kp_ensure_init();
}

KP_EXPORT pid_t fork(void)
{
	need_real(kp_real.fork);
	if (!kp_real.fork) {
		errno = ENOSYS;
		return -1;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_clone, 0, KP_CALLER()))
		return KP_PASS(pid_t, kp_real.fork());
	pid_t r = kp_real.fork();
	if (r == 0) {
		/* the child: its new stream starts empty (atfork handler) */
		kp_call_abandon(&c);
		return 0;
	}
	int e = errno;
	if (r > 0)
		kp_note_fork(r, "fork");
	kp_call_end(&c, r == -1, r == -1 ? e : 0, r == -1 ? -e : r);
	errno = e;
	return r;
}

/* ---- vfork: see vfork.S. TLS is shared with the child until it execs. ---- */

static __thread struct kp_thread *vfork_saved_self;
static __thread uint64_t vfork_t0;
static __thread unsigned vfork_clock;
static __thread bool vfork_counted;
/* the shim stack's depth (core/stack.h) at the vfork: the child shares it
 * and may exec from a frame it raised, which never returns */
static __thread uint32_t vfork_stack_depth;

__attribute__((used)) void kp_vfork_enter(void)
{
	int e = errno;
	vfork_counted = false;
	if (!(kp_tls_flags & KP_TLS_VFORK_CHILD)) {
		kp_ensure_init();
		if (kp_state == KP_ACTIVE && !(kp_tls_flags & KP_TLS_IN_INIT)) {
			if (!kp_self && !(kp_tls_flags & (KP_TLS_EXITING | KP_TLS_ATTACHING)))
				kp_thread_attach();
			vfork_counted = true;
		}
	}
	vfork_saved_self = kp_self;
	vfork_stack_depth = kp_stack.depth;
	kp_self = NULL;
	kp_tls_flags |= KP_TLS_VFORK_CHILD;
	errno = e;
	vfork_clock = kp_clock_kind();
	vfork_t0 = kp_ticks_of(vfork_clock);
}

/* In the parent only, with the raw syscall's result. */
__attribute__((used)) long kp_vfork_leave(long ret)
{
	uint64_t t0 = vfork_t0;
	kp_self = vfork_saved_self;
	kp_tls_flags &= ~KP_TLS_VFORK_CHILD;
	kp_stack.depth = vfork_stack_depth;
	int err = ret < 0 ? (int)-ret : 0;
	if (vfork_counted) {
		struct kp_call c = { .t = kp_self, .t0 = t0, .nr = SYS_vfork,
				     .clock = vfork_clock };
		if (c.t) {
			c.prev_nr = c.t->cur_nr;
			c.prev_fd = c.t->cur_fd;
		}
		if (ret > 0)
			kp_note_fork((pid_t)ret, "vfork");
		kp_call_end(&c, ret < 0, err, ret);
	}
	if (ret < 0) {
		errno = err;
		return -1;
	}
	return ret;
}

/* Pointers in a child's environment we build (on the caller's stack). */
#define MAX_ENV_COPY 4096

/* The site cache rides along for a child without a home (rewrite/scan.c). */
static char *const *child_env(char *const envp[], char **arr, size_t cap,
			      char *scratch, size_t scratch_cap, const char *marker)
{
	return kp_child_env(envp, arr, cap, scratch, scratch_cap, marker,
			    kp_rw_sites_handoff());
}

/* ---- posix_spawn: the kernel sees clone3 (CLONE_VM|CLONE_VFORK) ---- */

/*
 * The exec family and posix_spawn build the child's environment in 40 KiB
 * of arrays: their bodies run on the shim stack (core/stack.h), so that a
 * small stack (a coroutine's, a thread's made small) that holds libc's own
 * exec or spawn holds ours too.
 */
struct spawn_call {
	bool search; /* posix_spawnp */
	pid_t *pid;
	const char *path;
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *const *argv, *const *envp;
	uint64_t site;
	int result, err;
};

static int spawn_real(const struct spawn_call *a, pid_t *pid, char *const *env)
{
	int (*real)(pid_t *restrict, const char *restrict, const posix_spawn_file_actions_t *,
		    const posix_spawnattr_t *restrict, char *const[restrict],
		    char *const[restrict]) = a->search ? kp_real.posix_spawnp : kp_real.posix_spawn;
	return real(pid, a->path, a->fa, a->attr, a->argv, env);
}

static void spawn_on_stack(void *arg)
{
	struct spawn_call *a = arg;
	pid_t child = 0;
	struct kp_call c;
	char *env_arr[kp_state == KP_ACTIVE ? MAX_ENV_COPY : 1];
	char env_scratch[kp_state == KP_ACTIVE ? KP_PATH_MAX * 2 : 1];
	char *const *env = a->envp;
	if (kp_state == KP_ACTIVE)
		env = child_env(a->envp, env_arr, MAX_ENV_COPY, env_scratch, sizeof(env_scratch),
				NULL);
	/* why the child's program cannot load us: its fork record */
	if (kp_tracing())
		kp_child_exec_check(AT_FDCWD, a->path, a->search ? KP_EXEC_SEARCH : 0, env, true);
	if (!kp_call_begin(&c, SYS_clone3, 0, a->site)) {
		a->result = KP_PASS_AT(int, spawn_real(a, a->pid, env), a->site);
		a->err = errno;
		return;
	}
	int r = spawn_real(a, &child, env);
	int e = errno;
	if (a->pid && r == 0)
		*a->pid = child;
	if (r == 0 && child > 0)
		kp_note_fork(child, a->search ? "posix_spawnp" : "posix_spawn");
	kp_call_end(&c, r != 0, r, r ? -r : child);
	a->result = r;
	a->err = e;
}

static int spawn_run(struct spawn_call *a)
{
	need_real(a->search ? (void *)kp_real.posix_spawnp : (void *)kp_real.posix_spawn);
	if (!(a->search ? (void *)kp_real.posix_spawnp : (void *)kp_real.posix_spawn))
		return ENOSYS;
	kp_stack_run(spawn_on_stack, a);
	errno = a->err;
	return a->result;
}

#define SPAWN_HOOK(name, is_search)                                            \
	KP_EXPORT int name(pid_t *restrict pid, const char *restrict path,     \
			   const posix_spawn_file_actions_t *fa,               \
			   const posix_spawnattr_t *restrict attr,             \
			   char *const argv[restrict], char *const envp[restrict]) \
	{                                                                      \
		struct spawn_call a = { .search = is_search, .pid = pid,       \
					.path = path, .fa = fa, .attr = attr,  \
					.argv = argv, .envp = envp,            \
					.site = KP_CALLER() };                 \
		return spawn_run(&a);                                          \
	}
SPAWN_HOOK(posix_spawn, false)
SPAWN_HOOK(posix_spawnp, true)

/* ---- exec family ---- */


/*
 * KPROF_EXEC_STREAM=<pid>:<stream>:<output process, 0: none>:<ppid> into
 * marker (the new image reaps our output process and keeps our ppid);
 * false if it does not fit.
 */
static bool format_marker(char *marker, size_t marker_cap)
{
	const char *prefix = "KPROF_EXEC_STREAM=";
	size_t len = strlen(prefix);
	char tmp[48];
	memcpy(marker, prefix, len);
	uint64_t vals[4] = { kp_proc.pid, kp_proc.stream, (uint64_t)kp_outproc_pid(),
			     kp_proc.ppid };
	int n_vals = 4;
	for (int k = 0; k < n_vals; k++) {
		uint64_t v = vals[k];
		int pos = 47;
		tmp[pos] = 0;
		do {
			tmp[--pos] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		size_t m = strlen(tmp + pos);
		if (len + m + 2 > marker_cap)
			return false;
		memcpy(marker + len, tmp + pos, m);
		len += m;
		if (k + 1 < n_vals)
			marker[len++] = ':';
	}
	marker[len] = 0;
	return true;
}

/*
 * path NULL: fexecve of the descriptor dirfd. flags: execveat's, plus
 * KP_EXEC_SEARCH for execvp's search of PATH (the exec record then has
 * the name as given).
 */
static void before_exec(unsigned nr, const char *path, int dirfd, int flags,
			char *const envp[])
{
	if (kp_rw_active) {
		/* rewrite mode: the syscall hook counts and flushes each execve;
		 * the marker needs the pid, which a fork child learns late */
		if (!kp_proc.pid)
			kp_learn_pids();
		return;
	}
	kp_account_untimed(nr, false, 0, true);
	/* the exec record's copy: a path execve refuses with EFAULT (bad,
	 * or without its NUL before an unmapped page) must not fault here */
	char copy[KP_PATH_MAX];
	if (path)
		kp_user_string(path, copy, sizeof(copy));
	else
		copy[0] = 0;
	/* whether the new image can load us: the exec record says why not */
	kp_proc.exec_not_entered = kp_exec_not_entered(dirfd, copy, path ? flags : AT_EMPTY_PATH,
						       envp, kp_child_env_follows());
	kp_flush(KP_FLUSH_EXEC, path ? copy : "(descriptor)");
}

static int exec_failed(unsigned nr, int e)
{
	kp_proc.exec_not_entered = NULL;
	kp_output_exec_failed();
	/* counted before the call: add the failure only */
	if (!kp_rw_active)
		kp_account_untimed(nr, true, e, false);
	errno = e;
	return -1;
}

enum exec_how { EXEC_VE, EXEC_VEAT, EXEC_FD, EXEC_VPE };

struct exec_call {
	enum exec_how how;
	int dirfd; /* EXEC_VEAT; the descriptor for EXEC_FD */
	const char *path;
	char *const *argv, *const *envp;
	int flags;
	int result, err;
};

static void *exec_real_fn(enum exec_how how)
{
	switch (how) {
	case EXEC_VE:
		return (void *)kp_real.execve;
	case EXEC_VEAT:
		return (void *)kp_real.execveat;
	case EXEC_FD:
		return (void *)kp_real.fexecve;
	default:
		return (void *)kp_real.execvpe;
	}
}

static int exec_real(const struct exec_call *a, char *const *env)
{
	switch (a->how) {
	case EXEC_VE:
		return kp_real.execve(a->path, a->argv, env);
	case EXEC_VEAT:
		return kp_real.execveat(a->dirfd, a->path, a->argv, env, a->flags);
	case EXEC_FD:
		return kp_real.fexecve(a->dirfd, a->argv, env);
	default:
		return kp_real.execvpe(a->path, a->argv, env);
	}
}

static void exec_on_stack(void *arg)
{
	struct exec_call *a = arg;
	unsigned nr = a->how == EXEC_VEAT || a->how == EXEC_FD ? SYS_execveat : SYS_execve;
	char *env_arr[kp_state == KP_ACTIVE ? MAX_ENV_COPY : 1];
	char env_scratch[kp_state == KP_ACTIVE ? KP_PATH_MAX * 2 : 1];
	char marker[96];
	char *const *env = a->envp;
	int dirfd = a->how == EXEC_VEAT || a->how == EXEC_FD ? a->dirfd : AT_FDCWD;
	int flags = a->how == EXEC_VEAT ? a->flags : a->how == EXEC_VPE ? KP_EXEC_SEARCH : 0;
	if (!kp_tracing()) {
		/* a vfork child is not counted but its exec'd image is followed */
		if (kp_state == KP_ACTIVE)
			env = child_env(a->envp, env_arr, MAX_ENV_COPY, env_scratch,
					sizeof(env_scratch), NULL);
		/* why the shim cannot be in it, for the parent's fork record
		 * (rewrite mode: its syscall hook says it) */
		if (kp_state == KP_ACTIVE && !kp_rw_active && (kp_tls_flags & KP_TLS_VFORK_CHILD))
			kp_child_exec_check(dirfd, a->how == EXEC_FD ? "" : a->path,
					    a->how == EXEC_FD ? AT_EMPTY_PATH : flags, env, true);
		a->result = exec_real(a, env);
		a->err = errno;
		return;
	}
	/* final flush first: it also learns the pid the marker carries */
	before_exec(nr, a->how == EXEC_FD ? NULL : a->path, dirfd, flags, a->envp);
	env = child_env(a->envp, env_arr, MAX_ENV_COPY, env_scratch, sizeof(env_scratch),
			format_marker(marker, sizeof(marker)) ? marker : NULL);
	exec_real(a, env);
	a->result = exec_failed(nr, errno);
	a->err = errno;
}

static int exec_run(struct exec_call *a)
{
	need_real(exec_real_fn(a->how));
	if (!exec_real_fn(a->how)) {
		errno = ENOSYS;
		return -1;
	}
	kp_stack_run(exec_on_stack, a);
	errno = a->err;
	return a->result;
}

KP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct exec_call a = { .how = EXEC_VE, .path = path, .argv = argv, .envp = envp };
	return exec_run(&a);
}

KP_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	struct exec_call a = { .how = EXEC_VEAT, .dirfd = dirfd, .path = path, .argv = argv,
			       .envp = envp, .flags = flags };
	return exec_run(&a);
}

KP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct exec_call a = { .how = EXEC_FD, .dirfd = fd, .argv = argv, .envp = envp };
	return exec_run(&a);
}

KP_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

KP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct exec_call a = { .how = EXEC_VPE, .path = file, .argv = argv, .envp = envp };
	return exec_run(&a);
}

KP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/*
 * The variadic arguments after arg counted up to their NULL, then copied
 * into an array of that size, as glibc's execl does: no fixed array on
 * the caller's stack.
 */
static size_t count_args(va_list ap)
{
	size_t n = 1;
	while (va_arg(ap, char *))
		n++;
	return n;
}

#define COLLECT_ARGS(argv, argc, arg, ap)                                      \
	argv[0] = (char *)(arg);                                               \
	for (size_t i_ = 1; i_ < (argc); i_++)                                 \
		argv[i_] = va_arg(ap, char *);                                 \
	argv[argc] = NULL;

KP_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(ap);
	va_end(ap);
	char *argv[argc + 1];
	va_start(ap, arg);
	COLLECT_ARGS(argv, argc, arg, ap)
	va_end(ap);
	return execve(path, argv, environ);
}

KP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(ap);
	va_end(ap);
	char *argv[argc + 1];
	va_start(ap, arg);
	COLLECT_ARGS(argv, argc, arg, ap)
	va_end(ap);
	return execvpe(file, argv, environ);
}

KP_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(ap);
	va_end(ap);
	char *argv[argc + 1];
	va_start(ap, arg);
	COLLECT_ARGS(argv, argc, arg, ap)
	(void)va_arg(ap, char *); /* the NULL that ends the list */
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* ---- exit paths ---- */

static void note_status(int status)
{
	if ((kp_tls_flags & KP_TLS_VFORK_CHILD) || kp_foreign_process())
		return;
	kp_proc.exit_status = status;
	kp_proc.have_exit_status = true;
}

/* exit() runs the destructors, and ours makes the final flush. */
KP_EXPORT void exit(int status)
{
	need_real(kp_real.exit);
	note_status(status);
	if (kp_real.exit)
		kp_real.exit(status);
	kp_raw(SYS_exit_group, status);
	__builtin_unreachable();
}

KP_EXPORT void _exit(int status)
{
	need_real(kp_real._exit);
	note_status(status);
	/* rewrite mode: the exit_group hook counts the call, then flushes */
	if (kp_tracing() && !kp_rw_active)
		kp_finish(status, true);
	if (kp_real._exit)
		kp_real._exit(status);
	kp_raw(SYS_exit_group, status);
	__builtin_unreachable();
}

KP_EXPORT void _Exit(int status)
{
	_exit(status);
}

static int (*real_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
	int r = real_main(argc, argv, envp);
	note_status(r);
	return r;
}

KP_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc,
				char **argv, void (*init)(void), void (*fini)(void),
				void (*rtld_fini)(void), void *stack_end)
{
	kp_ensure_init();
	if (!kp_real.__libc_start_main) {
		kp_write_stderr("kprof: __libc_start_main not found\n");
		kp_raw(SYS_exit_group, 127);
		__builtin_unreachable();
	}
	real_main = main;
	return kp_real.__libc_start_main(main_wrapper, argc, argv, init, fini,
					 rtld_fini, stack_end);
}
