/* SPDX-License-Identifier: MIT */
/* A second interposer, preloaded after libkprof.so: counts the getppid()
 * calls that reach it and says how many at exit (stderr). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static long calls;

pid_t getppid(void)
{
	static pid_t (*next)(void);
	if (!next)
		next = (pid_t(*)(void))dlsym(RTLD_NEXT, "getppid");
	calls++;
	return next();
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "interposer_getppid=%ld\n", calls);
}
