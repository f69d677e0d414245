/* SPDX-License-Identifier: MIT */
/*
 * Signals whose handlers make syscalls while the thread is inside one: a
 * timer sends SIGALRM (handler on the thread's stack) and SIGPROF
 * (handler on a sigaltstack, SA_ONSTACK) every 200 us while the main
 * loop sits in blocking reads of a pipe that a second thread feeds, and
 * in getppid. Every handler run makes one getppid; every 16th SIGALRM
 * siglongjmps out of its handler back into the loop, abandoning whatever
 * the interrupted code had on its stack. Counts are the program's own:
 *
 *   getppid=N read=N longjmp=N
 *
 * getppid counts the loop's and the handlers' calls, exactly: a jump
 * leaves only the read it interrupted (whose count it cannot know).
 * Usage: signal_nest ROUNDS
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t handler_calls, jumps, armed;
static sigjmp_buf back;
static int pipe_fds[2];
static volatile int feeding = 1;

static void on_alarm(int sig)
{
	(void)sig;
	getppid();
	handler_calls++;
	if (armed && ++jumps % 16 == 0) {
		armed = 0;
		siglongjmp(back, 1);
	}
}

static void on_prof(int sig)
{
	(void)sig;
	getppid();
	handler_calls++;
}

static void *feeder(void *arg)
{
	(void)arg;
	while (feeding) {
		if (write(pipe_fds[1], "x", 1) != 1)
			break;
		usleep(100);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	if (pipe(pipe_fds))
		return 1;
	static char alt[64 * 1024];
	stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
	if (sigaltstack(&ss, NULL))
		return 1;
	/* neither handler interrupts the other: a jump out of on_alarm
	 * then never abandons a count on_prof has not made yet */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigaddset(&sa.sa_mask, SIGALRM);
	sigaddset(&sa.sa_mask, SIGPROF);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigaction(SIGPROF, &sa, NULL);
	/* the feeder never takes the signals: a jump is the main thread's */
	sigset_t timers, old;
	sigemptyset(&timers);
	sigaddset(&timers, SIGALRM);
	sigaddset(&timers, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &timers, &old);
	pthread_t t;
	if (pthread_create(&t, NULL, feeder, NULL))
		return 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	setitimer(ITIMER_REAL, &it, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	long loop_getppid = 0, reads = 0, longjmps = 0;
	for (long i = 0; i < rounds; i++) {
		if (sigsetjmp(back, 1)) {
			longjmps++;
			continue;
		}
		armed = 1;
		char c;
		long n = read(pipe_fds[0], &c, 1);
		armed = 0;
		if (n == 1)
			reads++;
		getppid();
		loop_getppid++;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	setitimer(ITIMER_PROF, &off, NULL);
	feeding = 0;
	pthread_join(t, NULL);
	printf("getppid=%ld read=%ld longjmp=%ld\n", loop_getppid + handler_calls, reads, longjmps);
	return 0;
}
