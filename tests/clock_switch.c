/* SPDX-License-Identifier: MIT */
/*
 * THREADS threads (argv[1], default 4) call getppid() in a loop until a
 * line or EOF arrives on stdin: the test decides how long they run (until
 * the shim says on stderr that it changed clocks, and a little after), so
 * nothing here depends on how fast the machine is. SPIN_US (argv[2],
 * default 0) makes each thread spin that long between calls, for fewer
 * event records. Prints getppid=TOTAL (every call made), threads=THREADS
 * and wall_ns (CLOCK_MONOTONIC from before the first thread started to
 * after the last one ended). With more arguments, then execs argv[3] with
 * argv[3..] (a child image that may inherit the shim's TSC calibration).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static long spin_ns;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	long *calls = arg;
	while (!stop) {
		getppid();
		(*calls)++;
		if (spin_ns) {
			int64_t until = now_ns() + spin_ns;
			while (now_ns() < until)
				;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	spin_ns = argc > 2 ? strtol(argv[2], NULL, 10) * 1000 : 0;
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "clock_switch: 1..64 threads\n");
		return 2;
	}
	pthread_t tid[64];
	long calls[64] = { 0 };
	int64_t start = now_ns();
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, &calls[i])) {
			perror("clock_switch: pthread_create");
			return 1;
		}
	char c;
	while (read(0, &c, 1) == 1 && c != '\n')
		;
	stop = 1;
	long total = 0;
	for (long i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		total += calls[i];
	}
	int64_t wall = now_ns() - start;
	printf("getppid=%ld\nthreads=%ld\nwall_ns=%lld\n", total, threads, (long long)wall);
	fflush(stdout);
	if (argc > 3) {
		execv(argv[3], argv + 3);
		perror("clock_switch: execv");
		return 1;
	}
	return 0;
}
