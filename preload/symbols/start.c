/* SPDX-License-Identifier: MIT */
/*
 * The shim's entry in a process image: the constructor, and
 * kp_ensure_init(), which the first hook calls when it comes before the
 * constructor (a library's constructor that runs earlier, a thread made
 * by one). Start-up runs once, through pthread_once: the real functions
 * are looked up (real.c), lifecycle's kp_setup() reads the configuration
 * and opens the trace, rewrite mode starts when KPROF_HOOK allows and the
 * system does (rewrite/setup.c), and the stream starts. Here because the
 * symbol hooks are the only front end that can run before start-up: this
 * file is the one place that reaches every layer below.
 */
#include <pthread.h>

#include "symbols.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

void kp_fork_child(void)
{
	if (kp_after_fork_child())
		kp_rw_live_threads = 1;
}

static int start(void)
{
	int err = kp_setup();
	if (err)
		return err;
	err = pthread_atfork(NULL, NULL, kp_fork_child);
	if (err)
		return -err;
	/* a thread's call through rewritten code waits for the rest of this */
	kp_wait_start = kp_ensure_init;
	kp_phase("setup");
	kp_rw_start();
	kp_phase("hook mode");
	kp_setup_done();
	return 0;
}

static void init_once_fn(void)
{
	/* from here on the process's calls are the shim's or the program's */
	kp_own_startup_ns = kp_mono_ns();
	kp_phase("");
	kp_resolve_all();
	kp_phase("libc functions");
	if (start()) {
		kp_debug("cannot start, passing every call through untraced");
		__atomic_store_n(&kp_state, KP_PASSIVE, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&kp_state, KP_ACTIVE, __ATOMIC_RELEASE);
	/* active: its syscalls count as the shim's own */
	kp_flush_start();
	kp_phase("header");
	kp_phases_say("start-up");
}

void kp_ensure_init(void)
{
	if (__atomic_load_n(&kp_state, __ATOMIC_ACQUIRE) != KP_UNINIT)
		return;
	if (kp_tls_flags & (KP_TLS_IN_INIT | KP_TLS_VFORK_CHILD))
		return;
	/* pthread_once's own futex calls are the shim's, not the program's */
	kp_tls_flags |= KP_TLS_IN_INIT;
	pthread_once(&init_once, init_once_fn);
	kp_tls_flags &= ~KP_TLS_IN_INIT;
}

/* glibc calls constructors with main's arguments */
__attribute__((constructor)) static void kp_constructor(int argc, char **argv, char **envp)
{
	(void)envp;
	kp_start_args(argc, argv);
	kp_ensure_init();
}

__attribute__((destructor)) static void kp_destructor(void)
{
	if (kp_state != KP_ACTIVE || (kp_tls_flags & KP_TLS_VFORK_CHILD))
		return;
	/* rewrite mode: the exit_group hook flushes last, after stdio's own flush */
	if (kp_rw_active)
		return;
	kp_finish(kp_proc.exit_status, kp_proc.have_exit_status);
}
