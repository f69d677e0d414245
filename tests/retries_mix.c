/* SPDX-License-Identifier: MIT */
/*
 * Which EAGAINs are retries. Two threads play futex ping-pong for ROUNDS
 * rounds (FUTEX_WAIT on the turn word, FUTEX_WAKE to hand it over), then
 * the second thread makes N FUTEX_WAITs with an expected value the word no
 * longer has (each fails EAGAIN: nothing would have blocked, an error) while
 * the first reads an empty non-blocking pipe M times (each fails EAGAIN: a
 * would-block, a retry) and tries flock(LOCK_EX | LOCK_NB) K times on a file
 * another open of it holds locked (each fails EWOULDBLOCK: a retry). Then
 * a byte written to the pipe ends the run of reads with one that succeeds,
 * and the holder's unlock lets one more flock succeed: --blocking sees one
 * finished operation of M retries and one of K.
 *
 * Usage: retries_mix [N [M [K [ROUNDS]]]] (defaults 200 300 40 100).
 * Prints what it did, by the kernel's own return values: the futex calls
 * and how many of them failed EAGAIN (the N stale waits and any the
 * ping-pong met by a race), the reads and the flock calls. Exits 1 if a
 * call returned something the test did not mean.
 *
 * No pthread_join: its FUTEX_WAIT on the thread id may meet EAGAIN by a
 * race, outside this count (a rewrite-mode shim and kbpf-trace see libc's
 * futex calls). The helper says it is done through a futex of its own,
 * then, with a plain store, that its last call has returned (and so was
 * counted by a shim); the process exits with it still unwinding.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

static long stale_waits = 200, pipe_reads = 300, flock_tries = 40, rounds = 100;

static unsigned turn;	/* 0: the main thread plays, 1: the helper */
static unsigned done;	/* 1: the helper made its last stale wait */
static unsigned finished; /* 1: its last call (the wake of done) returned */
static unsigned stale;	/* never changes: the stale waits expect 1 */
static long futex_calls, futex_eagain, futex_other;
static int bad;

static long futex(unsigned *word, int op, unsigned val)
{
	long r = syscall(SYS_futex, word, op, val, NULL, NULL, 0);
	int e = errno;
	__atomic_fetch_add(&futex_calls, 1, __ATOMIC_RELAXED);
	if (r == -1 && e == EAGAIN)
		__atomic_fetch_add(&futex_eagain, 1, __ATOMIC_RELAXED);
	else if (r == -1)
		__atomic_fetch_add(&futex_other, 1, __ATOMIC_RELAXED);
	return r;
}

/* Waits for the turn word to say me, then hands it to the other side. */
static void play(unsigned me)
{
	for (long i = 0; i < rounds; i++) {
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != me)
			futex(&turn, FUTEX_WAIT_PRIVATE, !me);
		__atomic_store_n(&turn, !me, __ATOMIC_RELEASE);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
}

static void *helper(void *arg)
{
	(void)arg;
	play(1);
	for (long i = 0; i < stale_waits; i++)
		if (futex(&stale, FUTEX_WAIT_PRIVATE, 1) != -1 || errno != EAGAIN) {
			fprintf(stderr, "retries_mix: stale FUTEX_WAIT %ld did not fail EAGAIN\n", i);
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	futex(&done, FUTEX_WAKE_PRIVATE, 1);
	__atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static long arg(char **argv, int argc, int i, long dflt)
{
	return argc > i ? strtol(argv[i], NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
	stale_waits = arg(argv, argc, 1, stale_waits);
	pipe_reads = arg(argv, argc, 2, pipe_reads);
	flock_tries = arg(argv, argc, 3, flock_tries);
	rounds = arg(argv, argc, 4, rounds);

	int fds[2];
	if (pipe2(fds, O_NONBLOCK)) {
		perror("retries_mix: pipe2");
		return 1;
	}
	char path[] = "retries_mix.XXXXXX";
	int holder = mkstemp(path);
	int other = holder < 0 ? -1 : open(path, O_RDWR);
	if (holder < 0 || other < 0 || flock(holder, LOCK_EX)) {
		perror("retries_mix: lock file");
		return 1;
	}
	unlink(path);

	pthread_t t;
	if (pthread_create(&t, NULL, helper, NULL)) {
		fprintf(stderr, "retries_mix: pthread_create failed\n");
		return 1;
	}
	play(0);

	long read_eagain = 0, read_calls = 0, flock_eagain = 0, flock_calls = 1;
	char c;
	for (long i = 0; i < pipe_reads; i++, read_calls++) {
		if (read(fds[0], &c, 1) == -1 && errno == EAGAIN)
			read_eagain++;
		else
			bad = 1;
	}
	for (long i = 0; i < flock_tries; i++, flock_calls++) {
		if (flock(other, LOCK_EX | LOCK_NB) == -1 && errno == EWOULDBLOCK)
			flock_eagain++;
		else
			bad = 1;
	}
	read_calls++;
	if (write(fds[1], "x", 1) != 1 || read(fds[0], &c, 1) != 1)
		bad = 1;
	flock_calls += 2;
	if (flock(holder, LOCK_UN) || flock(other, LOCK_EX | LOCK_NB))
		bad = 1;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		futex(&done, FUTEX_WAIT_PRIVATE, 0);
	while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE))
		; /* a few instructions and one syscall's return away */

	printf("futex_calls=%ld\n", __atomic_load_n(&futex_calls, __ATOMIC_RELAXED));
	printf("futex_eagain=%ld\n", __atomic_load_n(&futex_eagain, __ATOMIC_RELAXED));
	printf("futex_stale=%ld\n", stale_waits);
	printf("futex_other_errors=%ld\n", __atomic_load_n(&futex_other, __ATOMIC_RELAXED));
	printf("read_calls=%ld\n", read_calls);
	printf("read_eagain=%ld\n", read_eagain);
	printf("flock_calls=%ld\n", flock_calls);
	printf("flock_eagain=%ld\n", flock_eagain);
	fflush(stdout);
	if (futex_eagain < stale_waits || futex_other || read_eagain != pipe_reads ||
	    flock_eagain != flock_tries)
		bad = 1;
	return __atomic_load_n(&bad, __ATOMIC_RELAXED) ? 1 : 0;
}
