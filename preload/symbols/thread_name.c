/* SPDX-License-Identifier: MIT */
/*
 * Thread names. glibc's pthread_setname_np names the calling thread with
 * prctl(PR_SET_NAME), a call inside libc that symbol mode does not see:
 * this hook counts it as that prctl and keeps the name for the thread's
 * records. Another thread's name goes through /proc/self/task/TID/comm,
 * calls libc makes inside as well, unseen in symbol mode as before; that
 * thread's name is not followed. In rewrite mode the prctl is seen (and
 * the name kept) where libc makes it: this hook passes the call on.
 */
#include <pthread.h>
#include <sys/prctl.h>

#include "symbols.h"
#include "real.h"

KP_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	if (unlikely(!kp_real.pthread_setname_np)) {
		kp_ensure_init();
		if (!kp_real.pthread_setname_np)
			return ENOSYS;
	}
	if (!pthread_equal(th, pthread_self()))
		return kp_real.pthread_setname_np(th, name);
	struct kp_call c;
	if (!kp_call_begin(&c, SYS_prctl, PR_SET_NAME, KP_CALLER()))
		return KP_PASS(int, kp_real.pthread_setname_np(th, name));
	int err = kp_real.pthread_setname_np(th, name);
	/* it returns the errno value, and leaves errno alone */
	kp_call_end(&c, err != 0, err, err ? -err : 0);
	if (!err)
		kp_thread_named(name);
	return err;
}
