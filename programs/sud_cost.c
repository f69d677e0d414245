/* SPDX-License-Identifier: MIT */
/*
 * sud_cost: what Syscall User Dispatch (prctl PR_SET_SYSCALL_USER_DISPATCH,
 * Linux 5.11 and later, no privilege needed) costs a getppid() on this
 * machine, the measurement an unprivileged hook mode is designed from. One
 * process, one thread, blocks of --block calls in four settings, their
 * order rotating every round, for --rounds rounds:
 *
 *   plain     dispatch off
 *   range     dispatch on, the syscall instruction inside the allowed range
 *             (what the shim's own calls and its trampolines would pay:
 *             the kernel's slower entry path alone)
 *   allow     dispatch on, the instruction outside the range, the selector
 *             ALLOW (a program's call while dispatch is armed but open)
 *   sigsys    dispatch on, outside the range, the selector BLOCK: the call
 *             becomes a SIGSYS whose handler makes it from the range and
 *             returns (the slow path of a call site that is not patched)
 *
 * The syscall instructions are two copies of `mov %rdi,%rax; syscall; ret`
 * on pages of their own; the allowed range is the first page.
 *
 * Prints, per setting: NAME_ns=X (median over the rounds of ns per call)
 * and, but for plain, NAME_added_ns=Y (median over the rounds of the
 * difference to the plain block of the same round). Exit 77 when the
 * kernel has no Syscall User Dispatch (EINVAL), 1 on other errors.
 * Usage: sud_cost [--rounds=N] [--block=N]      x86_64 only
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include "long_arg.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#define SYSCALL_DISPATCH_FILTER_ALLOW 0
#define SYSCALL_DISPATCH_FILTER_BLOCK 1
#endif

enum { S_PLAIN, S_RANGE, S_ALLOW, S_SIGSYS, N_SETTINGS };
static const char *const names[N_SETTINGS] = { "plain", "range", "allow", "sigsys" };

typedef long (*stub_fn)(long nr);
static stub_fn inside, outside; /* the syscall instruction in / out of the range */
static volatile char selector = SYSCALL_DISPATCH_FILTER_ALLOW;
static unsigned long range_start, range_len;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static stub_fn make_stub(void)
{
	static const unsigned char code[] = { 0x48, 0x89, 0xf8, 0x0f, 0x05, 0xc3 };
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return (stub_fn)p;
}

/* The call is made again from the range; the selector is opened so that
 * the return through libc's restorer (outside the range) is not caught. */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	ucontext_t *uc = ctx;
	uc->uc_mcontext.gregs[REG_RAX] = inside(si->si_syscall);
	selector = SYSCALL_DISPATCH_FILTER_ALLOW;
}

static int dispatch(bool on)
{
	if (!on)
		return prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
	return prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, range_start,
		     range_len, &selector);
}

static double block(int setting, long n)
{
	if (setting != S_PLAIN && dispatch(true))
		return -1;
	stub_fn f = setting == S_RANGE || setting == S_PLAIN ? inside : outside;
	int64_t t0 = now_ns();
	if (setting == S_SIGSYS) {
		for (long i = 0; i < n; i++) {
			selector = SYSCALL_DISPATCH_FILTER_BLOCK;
			f(SYS_getppid);
		}
	} else {
		for (long i = 0; i < n; i++)
			f(SYS_getppid);
	}
	int64_t t1 = now_ns();
	selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	if (setting != S_PLAIN && dispatch(false))
		return -1;
	return (double)(t1 - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__)
	(void)argc;
	(void)argv;
	fprintf(stderr, "sud_cost: x86_64 only\n");
	return 77;
#else
	long rounds = long_arg(argc, argv, "--rounds", 31), n = long_arg(argc, argv, "--block", 100000);
	if (rounds < 1 || rounds > 10000 || n < 1) {
		fprintf(stderr, "usage: sud_cost [--rounds=1..10000] [--block=N]\n");
		return 2;
	}
	inside = make_stub();
	outside = make_stub();
	if (!inside || !outside) {
		perror("sud_cost: mmap");
		return 1;
	}
	range_start = (unsigned long)(uintptr_t)inside;
	range_len = 4096;
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL)) {
		perror("sud_cost: sigaction");
		return 1;
	}
	if (dispatch(true)) {
		int e = errno;
		fprintf(stderr, "sud_cost: Syscall User Dispatch: %s\n", strerror(e));
		return e == EINVAL ? 77 : 1;
	}
	dispatch(false);
	double *ns = calloc((size_t)(rounds * N_SETTINGS), sizeof(double));
	double *added = calloc((size_t)(rounds * N_SETTINGS), sizeof(double));
	if (!ns || !added)
		return 1;
	for (int s = 0; s < N_SETTINGS; s++) /* warm-up */
		block(s, n / 10);
	for (long r = 0; r < rounds; r++) {
		double t[N_SETTINGS];
		for (int k = 0; k < N_SETTINGS; k++) {
			int s = (int)((k + r) % N_SETTINGS);
			t[s] = block(s, s == S_SIGSYS ? n / 10 : n);
			if (t[s] < 0) {
				perror("sud_cost: prctl");
				return 1;
			}
		}
		for (int s = 0; s < N_SETTINGS; s++) {
			ns[s * rounds + r] = t[s];
			added[s * rounds + r] = t[s] - t[S_PLAIN];
		}
	}
	for (int s = 0; s < N_SETTINGS; s++) {
		printf("%s_ns=%.1f\n", names[s], median(ns + s * rounds, rounds));
		if (s != S_PLAIN)
			printf("%s_added_ns=%.1f\n", names[s], median(added + s * rounds, rounds));
	}
	printf("rounds=%ld\nblock=%ld\n", rounds, n);
	return 0;
#endif
}
