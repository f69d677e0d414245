/* SPDX-License-Identifier: MIT */
/*
 * Threads created and exiting by the thousand while the shim flushes
 * (run with KPROF_INTERVAL_MS=1): WAVES (argv[1], default 250) waves of 16
 * threads, each thread calling getppid() 100 times then exiting; half are
 * joined, half detached. Prints threads=<made> getppid=<calls> once every
 * thread has exited (a detached thread that made its calls may not have
 * made its exit yet: the process's exit would end it without one).
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PER_WAVE 16
#define CALLS 100

static long running;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < CALLS; i++)
		getppid();
	__atomic_fetch_sub(&running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Threads of this process, from /proc/self/task. */
static int live_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int waves = argc > 1 ? atoi(argv[1]) : 250;
	long made = 0;
	pthread_attr_t detached;
	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	for (int w = 0; w < waves; w++) {
		pthread_t th[PER_WAVE];
		for (int i = 0; i < PER_WAVE; i++) {
			__atomic_fetch_add(&running, 1, __ATOMIC_RELAXED);
			if (pthread_create(&th[i], i % 2 ? &detached : NULL, worker, NULL)) {
				fprintf(stderr, "thread_churn: pthread_create failed\n");
				return 1;
			}
			made++;
		}
		for (int i = 0; i < PER_WAVE; i += 2)
			pthread_join(th[i], NULL);
	}
	/* detached ones: wait until each has made its calls */
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE))
		sched_yield();
	/* and has made its exit */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (live_threads() != 1) {
		/* sched_yield, as above: the tests set it aside as the wait */
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 10) {
			fprintf(stderr, "thread_churn: threads still alive after 10 s\n");
			return 1;
		}
	}
	printf("threads=%ld getppid=%ld\n", made, made * CALLS);
	return 0;
}
