/* SPDX-License-Identifier: MIT */
/*
 * Programs for the trace's worst days.
 * "kill N": N getppid() calls, prints "ready", then sleeps 5 ms at a time
 *   forever (each sleep a hooked call, so periodic flushes go on) until
 *   it is killed.
 * "fill N FILE": N getppid() calls while the trace's disk is full, then
 *   unlink(FILE) (the filler: space comes back), N more calls, and
 *   prints calls=2N. Without FILE the disk stays full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	if (argc > 2 && strcmp(argv[1], "kill") == 0) {
		for (long i = 0; i < n; i++)
			getppid();
		printf("ready\n");
		fflush(stdout);
		struct timespec ts = { 0, 5000000 };
		for (;;)
			nanosleep(&ts, NULL);
	}
	if (argc > 2 && strcmp(argv[1], "fill") == 0) {
		for (long i = 0; i < n; i++)
			getppid();
		if (argc > 3 && unlink(argv[3])) {
			perror("calls_wait: unlink");
			return 1;
		}
		for (long i = 0; i < n; i++)
			getppid();
		printf("calls=%ld\n", 2 * n);
		return 0;
	}
	fprintf(stderr, "usage: calls_wait kill N | fill N [FILE]\n");
	return 2;
}
