/* SPDX-License-Identifier: MIT */
/*
 * fork() from a busy multithreaded process. 16 threads run while the main
 * thread forks ROUNDS times (argv[1], default 200): 12 call getppid() in a
 * loop, 4 sit blocked in read() of a pipe (inside a hooked call at fork
 * time). Each child calls getppid() exactly 5 times, writes nothing, and
 * _exit()s with its round number % 100; the parent checks every status.
 * Prints forks=<ROUNDS> parent_getppid=<calls by the parent's threads>.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPINNERS 12
#define READERS 4

static volatile int stop;
static long spun[SPINNERS];
static int pipes[READERS][2];

static void *spinner(void *arg)
{
	long i = (long)arg, n = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		getppid();
		n++;
	}
	spun[i] = n;
	return NULL;
}

static void *reader(void *arg)
{
	long i = (long)arg;
	char c;
	if (read(pipes[i][0], &c, 1) != 1)
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	pthread_t th[SPINNERS + READERS];
	for (long i = 0; i < SPINNERS; i++)
		pthread_create(&th[i], NULL, spinner, (void *)i);
	for (long i = 0; i < READERS; i++) {
		if (pipe(pipes[i]))
			return 1;
		pthread_create(&th[SPINNERS + i], NULL, reader, (void *)i);
	}
	for (int r = 0; r < rounds; r++) {
		pid_t p = fork();
		if (p < 0) {
			perror("fork_threads: fork");
			return 1;
		}
		if (p == 0) {
			for (int k = 0; k < 5; k++)
				getppid();
			_exit(r % 100);
		}
		int st;
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != r % 100) {
			fprintf(stderr, "fork_threads: child %d: bad status %#x\n", r, st);
			return 1;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++)
		if (write(pipes[i][1], "x", 1) != 1)
			return 1;
	long total = 0;
	for (int i = 0; i < SPINNERS + READERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < SPINNERS; i++)
		total += spun[i];
	printf("forks=%d parent_getppid=%ld\n", rounds, total);
	return 0;
}
