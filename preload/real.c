/*
 * The real libc functions behind the hooks, looked up once with
 * dlsym(RTLD_NEXT) from kp_ensure_init(). While the lookup runs on a
 * thread, that thread's hooks pass through (raw syscalls), because dlsym
 * may allocate and an interposed allocator may call a hook.
 */
#include <dlfcn.h>
#include <string.h>

#include "kprof.h"

struct kp_real kp_real;

/*
 * glibc >= 2.33 keeps the old stat entry points (__xstat, ...) only as
 * compat symbols, which an unversioned dlsym does not return.
 */
static void *lookup(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
#if defined(__x86_64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
#elif defined(__aarch64__)
	if (!p)
		p = dlvsym(RTLD_NEXT, name, "GLIBC_2.17");
#endif
	return p;
}

void kp_resolve_all(void)
{
	struct kp_real r;
	memset(&r, 0, sizeof(r));
#define KP_HOOK(rtype, name, nr, params, args, kind, raw)                      \
	*(void **)&r.name = lookup(#name);
#define KP_HAND(rtype, name, nr, params) *(void **)&r.name = lookup(#name);
#include "hooks.def"
#undef KP_HOOK
#undef KP_HAND
	/* Publish pointer by pointer: other threads may read them any time. */
	void **dst = (void **)&kp_real;
	void **src = (void **)&r;
	for (size_t i = 0; i < sizeof(r) / sizeof(void *); i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELEASE);
}
