/* SPDX-License-Identifier: MIT */
/*
 * Hooked calls made from signal handlers must be counted exactly, also
 * when the signal interrupts the profiler's own bookkeeping or a blocked
 * read(). The main thread calls getppid() LOOPS times (argv[1], default
 * 200000) while a second thread sends it SIGUSR1 as fast as it can; the
 * handler calls getppid() twice. Then the main thread blocks in read() on a
 * pipe while the other thread sends 100 more signals and finally writes
 * one byte. Prints getppid=<loops + 2 * handled>, read=1, signals=<handled>.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static volatile int stop;
static pthread_t main_thread;
static int fds[2];

static void on_signal(int sig)
{
	(void)sig;
	getppid();
	getppid();
	handled++;
}

static void *sender(void *arg)
{
	(void)arg;
	while (!stop)
		pthread_kill(main_thread, SIGUSR1);
	for (int i = 0; i < 100; i++) {
		pthread_kill(main_thread, SIGUSR1);
		usleep(100);
	}
	if (write(fds[1], "x", 1) != 1)
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	long loops = argc > 1 ? strtol(argv[1], NULL, 10) : 200000;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	if (pipe(fds))
		return 1;
	main_thread = pthread_self();
	pthread_t t;
	pthread_create(&t, NULL, sender, NULL);
	for (long i = 0; i < loops; i++)
		getppid();
	stop = 1;
	char c;
	ssize_t r = read(fds[0], &c, 1);
	pthread_join(t, NULL);
	/* block the signal so that the count printed is final */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("getppid=%ld\nread=%d\nsignals=%ld\n", loops + 2L * handled,
	       r == 1, (long)handled);
	return r == 1 ? 0 : 1;
}
