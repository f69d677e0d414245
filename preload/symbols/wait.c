/* SPDX-License-Identifier: MIT */
/*
 * wait4, waitpid and waitid, by hand: a wait for any child with __WALL or
 * __WCLONE would also wait for the shim's output process, a clone child
 * of the program's. When it is the only child left the wait is made for
 * the program's own pid instead, and fails with ECHILD as it would have
 * without the shim (strace ends its loop on ECHILD: it hung for ever).
 * Symbol mode only; rewrite and patch mode do the same in their hook.
 */
#include <sys/wait.h>

#include "symbols.h"
#include "real.h"

/* The pid to wait for: pid, or ours when only the output process is left. */
static pid_t wait_pid(bool any, pid_t pid, int options)
{
	if (!any || kp_rw_active || !kp_tracing() || !kp_outproc_only_child(options))
		return pid;
	return (pid_t)kp_raw0(SYS_getpid);
}

KP_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	if (unlikely(!kp_real.wait4)) {
		kp_ensure_init();
		if (!kp_real.wait4)
			return (pid_t)kp_raw_result(kp_raw(SYS_wait4, pid, status, options, ru));
	}
	pid = wait_pid(pid <= 0, pid, options);
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_wait4, pid, KP_CALLER()))
		return KP_PASS(pid_t, kp_real.wait4(pid, status, options, ru));
	return (pid_t)kp_finish_int(&c, kp_real.wait4(pid, status, options, ru));
}

KP_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	if (unlikely(!kp_real.waitpid)) {
		kp_ensure_init();
		if (!kp_real.waitpid)
			return (pid_t)kp_raw_result(kp_raw(SYS_wait4, pid, status, options, NULL));
	}
	pid = wait_pid(pid <= 0, pid, options);
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_wait4, pid, KP_CALLER()))
		return KP_PASS(pid_t, kp_real.waitpid(pid, status, options));
	return (pid_t)kp_finish_int(&c, kp_real.waitpid(pid, status, options));
}

KP_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
	if (unlikely(!kp_real.waitid)) {
		kp_ensure_init();
		if (!kp_real.waitid)
			return (int)kp_raw_result(kp_raw(SYS_waitid, type, id, info, options, NULL));
	}
	pid_t self = wait_pid(type == P_ALL || type == P_PGID, 0, options);
	if (self) {
		type = P_PID;
		id = (id_t)self;
	}
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_waitid, type, KP_CALLER()))
		return KP_PASS(int, kp_real.waitid(type, id, info, options));
	return (int)kp_finish_int(&c, kp_real.waitid(type, id, info, options));
}
