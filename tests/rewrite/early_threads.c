/* SPDX-License-Identifier: MIT */
/*
 * A library for tests/t_rewrite_threads.sh, preloaded after libkprof.so so
 * that its constructor runs first (the last preloaded library's runs
 * first): it starts THREADS threads that call getpgrp() in a tight loop,
 * running libc's code while the shim rewrites it. (getpgrp has no symbol
 * hook: a hooked function would make the thread wait for the shim's
 * start-up.) Its destructor waits for them and prints how many calls they
 * made. Built by the test.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 4
#define CALLS 100000

static pthread_t threads[THREADS];
static long calls[THREADS];

static void *spin(void *arg)
{
	long k = (long)arg;
	for (long i = 0; i < CALLS; i++)
		getpgrp();
	calls[k] = CALLS;
	return NULL;
}

__attribute__((constructor)) static void early(void)
{
	for (long k = 0; k < THREADS; k++)
		pthread_create(&threads[k], NULL, spin, (void *)k);
}

__attribute__((destructor)) static void late(void)
{
	long total = 0;
	for (long k = 0; k < THREADS; k++) {
		pthread_join(threads[k], NULL);
		total += calls[k];
	}
	printf("early_threads getpgrp=%ld\n", total);
	fflush(stdout);
}
