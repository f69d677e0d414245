/* SPDX-License-Identifier: MIT */
/*
 * The generic hooks, generated from hooks.def: time the real call (or, for
 * a plain wrapper of libc's, the syscall itself: RAW_DIRECT), account
 * it under the syscall the kernel receives, note the descriptors it made
 * (core/fd_kinds.c; the arguments of the lines that reach such a syscall are
 * the syscall's own), hand errno and the result back unchanged.
 */
#include <sched.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <fcntl.h>
#include <unistd.h>

#include "symbols.h"
#include "real.h"

/* First argument as a long (the fd of read/write), 0 for no arguments. */
#define KP_ARG0(...) KP_ARG0_(dummy, ##__VA_ARGS__, 0)
#define KP_ARG0_(dummy, a, ...) ((long)(a))
#define KP_ARG1(...) KP_ARG1_(dummy, ##__VA_ARGS__, 0, 0)
#define KP_ARG1_(dummy, a, b, ...) ((long)(b))

#define KP_FAILED_RES_INT(r) ((long)(r) == -1)
#define KP_FAILED_RES_PTR(r) ((void *)(r) == MAP_FAILED || (void *)(r) == NULL)
#define KP_FAILED_RES_ERRNO(r) ((long)(r) != 0)
#define KP_FAILED_RES_NONE(r) ((void)(r), 0)

#define KP_ERR_RES_INT(r, e) (e)
#define KP_ERR_RES_PTR(r, e) (e)
#define KP_ERR_RES_ERRNO(r, e) ((int)(long)(r))
#define KP_ERR_RES_NONE(r, e) 0

#define KP_KRET_RES_INT(r) ((int64_t)(long)(r))
#define KP_KRET_RES_PTR(r) ((int64_t)(intptr_t)(r))
#define KP_KRET_RES_ERRNO(r) ((int64_t)0)
#define KP_KRET_RES_NONE(r) ((int64_t)(r))

#define KP_FAIL_VALUE_RES_INT -1
#define KP_FAIL_VALUE_RES_PTR MAP_FAILED
#define KP_FAIL_VALUE_RES_ERRNO ENOSYS
#define KP_FAIL_VALUE_RES_NONE 0

/* Called only while this thread resolves the real functions. */
#define KP_PASS_RAW(rtype, nr, args, kind, raw)                                \
	do {                                                                   \
		if (raw != RAW_NO) {                                           \
			long kp_rr_ = kp_raw(nr, KP_UNPAREN args);                 \
			if (kp_rr_ < 0 && kp_rr_ > -4096) {                            \
				errno = (int)-kp_rr_;                              \
				return (rtype)KP_FAIL_VALUE_##kind;            \
			}                                                      \
			return (rtype)kp_rr_;                                      \
		}                                                              \
		errno = ENOSYS;                                                \
		return (rtype)KP_FAIL_VALUE_##kind;                            \
	} while (0)
#define KP_UNPAREN(...) __VA_ARGS__
/* The arguments as six longs (KP_RAW_A after expanding KP_UNPAREN). */
#define KP_ARGS6(...) KP_RAW_A(__VA_ARGS__)

/*
 * Descriptor notes (core/fd_kinds.c) take the syscall's arguments: those of the
 * raw lines, and of pipe (pipe2 with flags 0) and signalfd (its result is
 * all that counts). The libc stat functions of a descriptor, whose
 * arguments are not newfstatat's, tell the kind from what they return.
 * The names are compared at compile time.
 */
#define KP_NAME_IS(name, s) (__builtin_strcmp(#name, s) == 0)
/* fstat(fd, st) and __fxstat(ver, fd, st), with their 64 twins */
#define KP_FSTAT(name) (KP_NAME_IS(name, "fstat") || KP_NAME_IS(name, "fstat64"))
#define KP_FXSTAT(name) (KP_NAME_IS(name, "__fxstat") || KP_NAME_IS(name, "__fxstat64"))

/* The descriptor a call is on: __fxstat's comes after its version. */
#define KP_FD_ARG(name, args) (KP_FXSTAT(name) ? KP_ARG1 args : KP_ARG0 args)

#define KP_HOOK(rtype, name, nr, params, args, kind, raw)                      \
	KP_EXPORT rtype name params                                            \
	{                                                                      \
		struct kp_call kp_c_;                                           \
		if (unlikely(!kp_real.name)) {                                 \
			kp_ensure_init();                                      \
			if (!kp_real.name)                                     \
				KP_PASS_RAW(rtype, nr, args, kind, raw);       \
		}                                                              \
		bool kp_direct_ = raw == RAW_DIRECT && likely(kp_direct.name); \
		if (unlikely(!(kp_direct_ ? kp_call_begin_direct(&kp_c_, nr, KP_FD_ARG(name, args), \
								 KP_CALLER()) \
					  : kp_call_begin(&kp_c_, nr, KP_FD_ARG(name, args), \
							  KP_CALLER()))))         \
			return KP_PASS(rtype, kp_real.name args);              \
		rtype kp_r_;                                                   \
		int kp_e_;                                                     \
		if (kp_direct_) {                                              \
			/* the program's call, not the shim's own (kp_raw) */  \
			long kp_rr_ = kp_raw_syscall6(nr, KP_ARGS6(KP_UNPAREN args)); \
			kp_e_ = 0; /* errno as it was: set only on failure */  \
			if (kp_rr_ < 0 && kp_rr_ > -4096) {                    \
				kp_e_ = (int)-kp_rr_;                          \
				kp_r_ = (rtype)KP_FAIL_VALUE_##kind;           \
			} else {                                               \
				kp_r_ = (rtype)kp_rr_;                         \
			}                                                      \
		} else {                                                       \
			kp_r_ = kp_real.name args;                             \
			kp_e_ = 0;                                             \
		}                                                              \
		bool kp_failed_ = KP_FAILED_##kind(kp_r_);                     \
		if (!kp_direct_ && unlikely(kp_failed_))                       \
			kp_e_ = errno;                                         \
		int kp_err_ = kp_failed_ ? KP_ERR_##kind(kp_r_, kp_e_) : 0;    \
		int64_t kp_k_ = kp_failed_ ? -(int64_t)kp_err_ : KP_KRET_##kind(kp_r_); \
		kp_call_end(&kp_c_, kp_failed_, kp_err_, kp_k_);               \
		if (kp_fd_kinds_touches(nr)) {                                 \
			long kp_a_[6] = { KP_ARGS6(KP_UNPAREN args) };         \
			if (raw != RAW_NO || nr == SYS_pipe2 || nr == SYS_signalfd4) \
				kp_fd_kinds_note(nr, kp_a_, (long)kp_k_);      \
			else if (!kp_failed_ && KP_FSTAT(name))                \
				kp_fd_kinds_stat(kp_a_[0],                     \
					((const struct stat *)kp_a_[1])->st_mode); \
			else if (!kp_failed_ && KP_FXSTAT(name))               \
				kp_fd_kinds_stat(kp_a_[1],                     \
					((const struct stat *)kp_a_[2])->st_mode); \
		}                                                              \
		/* errno is touched only by a failure: what the shim does      \
		 * keeps it (raw calls; a flush restores it), so a call that   \
		 * worked leaves it as libc (or nobody) left it */             \
		if (unlikely(kp_failed_))                                      \
			errno = kp_e_;                                         \
		return kp_r_;                                                  \
	}
#define KP_HAND(rtype, name, nr, params)
#include "hooks.def"
#undef KP_HOOK
#undef KP_HAND
