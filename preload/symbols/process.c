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

#define SPAWN_SEARCH_posix_spawn 0
#define SPAWN_SEARCH_posix_spawnp KP_EXEC_SEARCH
#define SPAWN_HOOK(name)                                                       \
	KP_EXPORT int name(pid_t *restrict pid, const char *restrict path,     \
			   const posix_spawn_file_actions_t *fa,               \
			   const posix_spawnattr_t *restrict attr,             \
			   char *const argv[restrict], char *const envp[restrict]) \
	{                                                                      \
		need_real(kp_real.name);                                       \
		if (!kp_real.name)                                             \
			return ENOSYS;                                         \
		pid_t child = 0;                                               \
		struct kp_call c;                                              \
		char *env_arr[kp_state == KP_ACTIVE ? MAX_ENV_COPY : 1];       \
		char env_scratch[kp_state == KP_ACTIVE ? KP_PATH_MAX * 2 : 1]; \
		char *const *env = envp;                                       \
		if (kp_state == KP_ACTIVE)                                     \
			env = child_env(envp, env_arr, MAX_ENV_COPY,           \
					env_scratch, sizeof(env_scratch),      \
					NULL);                                 \
		/* why the child's program cannot load us: its fork record */  \
		if (kp_tracing())                                              \
			kp_child_exec_check(AT_FDCWD, path,                    \
					    SPAWN_SEARCH_##name, env, true);   \
		if (!kp_call_begin(&c, SYS_clone3, 0, KP_CALLER()))            \
			return KP_PASS(int, kp_real.name(pid, path, fa, attr,  \
							 argv, env));          \
		int r = kp_real.name(&child, path, fa, attr, argv, env);       \
		int e = errno;                                                 \
		if (pid && r == 0)                                             \
			*pid = child;                                          \
		if (r == 0 && child > 0)                                       \
			kp_note_fork(child, #name);                            \
		kp_call_end(&c, r != 0, r, r ? -r : child);                    \
		errno = e;                                                     \
		return r;                                                      \
	}
SPAWN_HOOK(posix_spawn)
SPAWN_HOOK(posix_spawnp)

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

#define EXEC_PROLOGUE(real, envp_in)                                           \
	need_real(kp_real.real);                                               \
	if (!kp_real.real) {                                                   \
		errno = ENOSYS;                                                \
		return -1;                                                     \
	}                                                                      \
	char *env_arr[kp_state == KP_ACTIVE ? MAX_ENV_COPY : 1];               \
	char env_scratch[kp_state == KP_ACTIVE ? KP_PATH_MAX * 2 : 1];         \
	char marker[96];                                                       \
	char *const *env = (envp_in);                                          \
	bool traced = kp_tracing();                                            \
	/* a vfork child is not counted but its exec'd image is followed */  \
	if (!traced && kp_state == KP_ACTIVE)                                  \
		env = child_env((envp_in), env_arr, MAX_ENV_COPY,              \
				env_scratch, sizeof(env_scratch), NULL);

/* A vfork child's exec: why the shim cannot be in it, for the parent's
 * fork record (rewrite mode: its syscall hook says it). */
#define EXEC_CHILD_NOTE(dirfd, path, flags)                                    \
	if (!traced && kp_state == KP_ACTIVE && !kp_rw_active &&               \
	    (kp_tls_flags & KP_TLS_VFORK_CHILD))                               \
		kp_child_exec_check(dirfd, path, flags, env, true);

/* Final flush first: it also learns the pid the marker carries. */
#define EXEC_PREPARE(nr, dirfd, path, flags, envp_in)                          \
	before_exec(nr, path, dirfd, flags, envp_in);                          \
	env = child_env((envp_in), env_arr, MAX_ENV_COPY, env_scratch,         \
			sizeof(env_scratch),                                   \
			format_marker(marker, sizeof(marker)) ? marker : NULL);

KP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_PROLOGUE(execve, envp)
	EXEC_CHILD_NOTE(AT_FDCWD, path, 0)
	if (!traced)
		return kp_real.execve(path, argv, env);
	EXEC_PREPARE(SYS_execve, AT_FDCWD, path, 0, envp)
	kp_real.execve(path, argv, env);
	return exec_failed(SYS_execve, errno);
}

KP_EXPORT int execveat(int dirfd, const char *path, char *const argv[],
		       char *const envp[], int flags)
{
	EXEC_PROLOGUE(execveat, envp)
	EXEC_CHILD_NOTE(dirfd, path, flags)
	if (!traced)
		return kp_real.execveat(dirfd, path, argv, env, flags);
	EXEC_PREPARE(SYS_execveat, dirfd, path, flags, envp)
	kp_real.execveat(dirfd, path, argv, env, flags);
	return exec_failed(SYS_execveat, errno);
}

KP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	EXEC_PROLOGUE(fexecve, envp)
	EXEC_CHILD_NOTE(fd, "", AT_EMPTY_PATH)
	if (!traced)
		return kp_real.fexecve(fd, argv, env);
	EXEC_PREPARE(SYS_execveat, fd, NULL, 0, envp)
	kp_real.fexecve(fd, argv, env);
	return exec_failed(SYS_execveat, errno);
}

KP_EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_PROLOGUE(execve, environ)
	EXEC_CHILD_NOTE(AT_FDCWD, path, 0)
	if (!traced)
		return kp_real.execve(path, argv, env);
	EXEC_PREPARE(SYS_execve, AT_FDCWD, path, 0, environ)
	kp_real.execve(path, argv, env);
	return exec_failed(SYS_execve, errno);
}

KP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	EXEC_PROLOGUE(execvpe, envp)
	EXEC_CHILD_NOTE(AT_FDCWD, file, KP_EXEC_SEARCH)
	if (!traced)
		return kp_real.execvpe(file, argv, env);
	EXEC_PREPARE(SYS_execve, AT_FDCWD, file, KP_EXEC_SEARCH, envp)
	kp_real.execvpe(file, argv, env);
	return exec_failed(SYS_execve, errno);
}

KP_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

#define MAX_EXECL_ARGS 4096

/* Collects the NULL-terminated variadic arguments; NULL when too many. */
#define COLLECT_ARGS(argv, arg, ap)                                            \
	size_t argc_ = 0;                                                      \
	argv[argc_++] = (char *)(arg);                                         \
	while (argv[argc_ - 1] && argc_ < MAX_EXECL_ARGS)                      \
		argv[argc_++] = va_arg(ap, char *);                            \
	if (argv[argc_ - 1]) {                                                 \
		va_end(ap);                                                    \
		errno = E2BIG;                                                 \
		return -1;                                                     \
	}

KP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(argv, arg, ap)
	va_end(ap);
	return execve(path, argv, environ);
}

KP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(argv, arg, ap)
	va_end(ap);
	return execvpe(file, argv, environ);
}

KP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[MAX_EXECL_ARGS];
	va_list ap;
	va_start(ap, arg);
	COLLECT_ARGS(argv, arg, ap)
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
