/* SPDX-License-Identifier: MIT */
/*
 * THREADS threads (argv[1], default 8) each call getppid() CALLS times
 * (argv[2], default 10000) and exit; the main thread joins them before the
 * process ends, so every thread has exited before the final flush.
 * Prints getppid=THREADS*CALLS and threads=THREADS.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long calls = 10000;

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++)
		getppid();
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
	if (argc > 2)
		calls = strtol(argv[2], NULL, 10);
	if (threads < 1 || threads > 1024) {
		fprintf(stderr, "threads_calls: 1..1024 threads\n");
		return 2;
	}
	pthread_t tid[1024];
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL)) {
			perror("threads_calls: pthread_create");
			return 1;
		}
	for (long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("getppid=%ld\nthreads=%ld\n", threads * calls, threads);
	return 0;
}
