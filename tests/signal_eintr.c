/* SPDX-License-Identifier: MIT */
/*
 * Hooked calls interrupted by signals, with and without SA_RESTART, and
 * signal handlers nested inside each other (SA_NODEFER), every handler
 * making hooked calls.
 *   1. SIGUSR1 without SA_RESTART: the main thread reads a pipe in a loop;
 *      another thread sends SIGNALS signals, each while the reader sits in
 *      read(), then writes one byte. Every interrupted read fails EINTR.
 *   2. SIGUSR2 with SA_RESTART: the same, but the kernel restarts the
 *      read, so it is one call.
 *   3. SIGURG with SA_NODEFER: the handler calls getppid() and raises the
 *      signal again until 4 deep; done 50 times from the main loop.
 * Prints read_calls=, read_eintr=, getppid= (all made by the program).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIGNALS 50

static volatile sig_atomic_t handled, depth;
static long getppid_calls;
static int fds[2];
static pid_t reader_tid;

static void on_signal(int sig)
{
	getppid();
	__atomic_fetch_add(&getppid_calls, 1, __ATOMIC_RELAXED);
	if (sig == SIGURG && depth < 3) {
		depth++;
		raise(SIGURG);
		depth--;
	}
	handled++;
}

/* true when the reader thread is blocked in read(2) */
static int reader_in_read(void)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)reader_tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && strncmp(buf, "0 ", 2) == 0;
	fclose(f);
	return ok;
}

static void *sender(void *arg)
{
	int sig = (int)(long)arg;
	struct timespec ts = { 0, 200000 };
	for (int i = 0; i < SIGNALS; i++) {
		while (!reader_in_read())
			nanosleep(&ts, NULL);
		sig_atomic_t before = handled;
		syscall(SYS_tgkill, getpid(), reader_tid, sig);
		while (handled == before)
			nanosleep(&ts, NULL);
	}
	while (!reader_in_read())
		nanosleep(&ts, NULL);
	if (write(fds[1], "x", 1) != 1)
		abort();
	return NULL;
}

static void install(int sig, int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	long reads = 0, eintr = 0;
	install(SIGUSR1, 0);
	install(SIGUSR2, SA_RESTART);
	install(SIGURG, SA_NODEFER);
	if (pipe(fds))
		return 1;
	reader_tid = (pid_t)syscall(SYS_gettid);
	int sigs[2] = { SIGUSR1, SIGUSR2 };
	for (int k = 0; k < 2; k++) {
		pthread_t t;
		pthread_create(&t, NULL, sender, (void *)(long)sigs[k]);
		char c;
		ssize_t r;
		do {
			r = read(fds[0], &c, 1);
			reads++;
			if (r < 0)
				eintr++;
		} while (r != 1);
		pthread_join(t, NULL);
	}
	for (int i = 0; i < 50; i++)
		raise(SIGURG);
	printf("read_calls=%ld\nread_eintr=%ld\ngetppid=%ld\n", reads, eintr,
	       __atomic_load_n(&getppid_calls, __ATOMIC_RELAXED));
	return 0;
}
