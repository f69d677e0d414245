/* SPDX-License-Identifier: MIT */
/*
 * Threads with known counts, for kbpf-trace -t: three threads one after
 * the other call getppid 100, 200 and 300 times, the main thread 7 times
 * after a pause of 300 ms (so periodic aggregates are written meanwhile).
 * Each prints "TID COUNT".
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *calls(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("%ld %ld\n", (long)syscall(SYS_gettid), n);
	fflush(stdout);
	return NULL;
}

int main(void)
{
	for (long i = 0; i < 3; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, calls, (void *)(100 * (i + 1))))
			return 1;
		pthread_join(t, NULL);
	}
	usleep(300000);
	calls((void *)7);
	return 0;
}
