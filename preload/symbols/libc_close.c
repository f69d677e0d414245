/* SPDX-License-Identifier: MIT */
/*
 * fclose, pclose and closedir close their descriptor inside libc, where
 * symbol mode cannot see it. Without these hooks the number keeps its
 * kind, and a descriptor that libc makes again under it (fopen, popen,
 * opendir: also unseen) would be counted under the old kind. The hooks
 * only forget the kind of the number being closed (the next hooked call
 * on it classifies it again); they count nothing. In rewrite mode the
 * inner close is seen, so they pass straight through.
 */
#include <dirent.h>
#include <stdio.h>

#include "symbols.h"
#include "real.h"

/* After libc closed fd (or failed to: the kind is asked again anyway). */
static void forget(int fd)
{
	if (fd < 0 || kp_rw_active || kp_state != KP_ACTIVE)
		return;
	const long args[6] = { fd, 0, 0, 0, 0, 0 };
	kp_fd_kinds_note(SYS_close, args, 0);
}

#define CLOSE_HOOK(name, type, fd_of)                                          \
	KP_EXPORT int name(type *s)                                            \
	{                                                                      \
		if (unlikely(!kp_real.name))                                   \
			kp_ensure_init();                                      \
		if (unlikely(!kp_real.name)) {                                 \
			errno = ENOSYS;                                        \
			return -1;                                             \
		}                                                              \
		int e = errno; /* fileno of a memory stream sets EBADF */      \
		/* libc's declaration says non-NULL; closedir(NULL) is EINVAL */ \
		type *p = s;                                                   \
		__asm__("" : "+r"(p));                                         \
		int fd = p ? fd_of(p) : -1;                                    \
		errno = e;                                                     \
		int r = KP_PASS(int, kp_real.name(s));                         \
		e = errno;                                                     \
		forget(fd);                                                    \
		errno = e;                                                     \
		return r;                                                      \
	}

CLOSE_HOOK(fclose, FILE, fileno)
CLOSE_HOOK(pclose, FILE, fileno)
CLOSE_HOOK(closedir, DIR, dirfd)
