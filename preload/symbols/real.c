/* SPDX-License-Identifier: MIT */
/*
 * The real libc functions behind the hooks, looked up once with
 * dlsym(RTLD_NEXT) from kp_ensure_init(). While the lookup runs on a
 * thread, that thread's hooks pass through (raw syscalls), because dlsym
 * may allocate and an interposed allocator may call a hook.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "symbols.h"
#include "real.h"

struct kp_real kp_real;
struct kp_direct kp_direct;

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

/*
 * Where libc is mapped: the loaded segments of the object holding one of
 * its functions that no hook replaces. A function found after kprof is
 * libc's own when it lies in one of them. Not dlopen(RTLD_NOLOAD) and
 * dlsym on its handle: dlopen allocates, and this may run inside the
 * program's allocator (jemalloc reads /etc/malloc.conf with readlink while
 * it holds its init lock, before main: the first hook starts the shim
 * there, and a malloc then waited on that lock for ever). Not dladdr per
 * function either: it searches the object's whole symbol table for the
 * nearest name, 10 us a call here (600 us of every image's start-up).
 * dl_iterate_phdr allocates nothing and is walked once.
 */
#define LIBC_SEGMENTS 16

struct libc_map {
	uintptr_t probe;	/* an address inside libc */
	int n;
	uintptr_t start[LIBC_SEGMENTS], end[LIBC_SEGMENTS];
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct libc_map *m = arg;
	bool holds = false;
	for (int i = 0; i < info->dlpi_phnum && !holds; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		holds = ph->p_type == PT_LOAD && m->probe >= lo && m->probe - lo < ph->p_memsz;
	}
	if (!holds)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && m->n < LIBC_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		m->start[m->n] = info->dlpi_addr + ph->p_vaddr;
		m->end[m->n] = m->start[m->n] + ph->p_memsz;
		m->n++;
	}
	return 1;
}

static bool in_libc(const void *fn, const struct libc_map *m)
{
	uintptr_t a = (uintptr_t)fn;
	for (int i = 0; fn && i < m->n; i++)
		if (a >= m->start[i] && a < m->end[i])
			return true;
	return false;
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
	/* A plain wrapper may be bypassed only when it is libc's own: another
	 * interposer after kprof (fakeroot, a sandbox) must still be called. */
	struct kp_direct d;
	memset(&d, 0, sizeof(d));
	struct libc_map libc = { .probe = (uintptr_t)&strlen, .n = 0 };
	dl_iterate_phdr(find_libc, &libc);
	if (libc.n) {
#define KP_HOOK(rtype, name, nr, params, args, kind, raw)                      \
	d.name = raw == RAW_DIRECT && in_libc((const void *)(uintptr_t)r.name, &libc);
#define KP_HAND(rtype, name, nr, params)
#include "hooks.def"
#undef KP_HOOK
#undef KP_HAND
	}
	memcpy(&kp_direct, &d, sizeof(d));
	/* Publish pointer by pointer: other threads may read them any time. */
	void **dst = (void **)&kp_real;
	void **src = (void **)&r;
	for (size_t i = 0; i < sizeof(r) / sizeof(void *); i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELEASE);
}
