/* SPDX-License-Identifier: MIT */
/*
 * zlib for a gzip trace, loaded only when one is asked for (KPROF_GZIP=1
 * or a trace name ending in .gz): the shim does not link libz, so a
 * process image that writes plain records (the default) neither maps nor
 * relocates it, and rewrite mode has one library less to look up; the
 * program's /proc/self/maps shows no libz of ours. Loaded at start-up
 * (before rewrite mode scans the mappings, and never from a hook, where
 * the loader's lock could be held by the thread that called it).
 */
#include <dlfcn.h>

#include "sink.h"

struct kp_zlib kp_zlib;

bool kp_zlib_load(void)
{
	static bool tried;
	if (tried)
		return kp_zlib.deflate != NULL;
	tried = true;
	void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		kp_write_stderr("kprof: cannot load libz.so.1: the trace is written "
				"without gzip\n");
		return false;
	}
	kp_zlib.init2 = (int (*)(z_streamp, int, int, int, int, int, const char *,
				 int))dlsym(h, "deflateInit2_");
	kp_zlib.reset = (int (*)(z_streamp))dlsym(h, "deflateReset");
	int (*deflate_fn)(z_streamp, int) = (int (*)(z_streamp, int))dlsym(h, "deflate");
	if (!kp_zlib.init2 || !kp_zlib.reset || !deflate_fn) {
		kp_write_stderr("kprof: libz.so.1 has no deflate: the trace is written "
				"without gzip\n");
		return false;
	}
	__atomic_store_n(&kp_zlib.deflate, deflate_fn, __ATOMIC_RELEASE);
	return true;
}
