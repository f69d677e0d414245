/*
 * hook_cost: what an LD_PRELOAD shim adds to one getppid() call, measured
 * inside one process so that the machine's noise (other processes, CPU
 * frequency, the host) mostly cancels. Blocks of --block calls of getppid()
 * through the symbol the program links to (the shim's hook when one is
 * preloaded) alternate with blocks of libc's own getppid (looked up in
 * libc.so.6 itself, so no shim is in the way), the order flipping every
 * pair. A warm-up of --warm-ms runs first (the shim's TSC calibration
 * happens there; 0 for a process as short as a compiler's).
 *
 * Prints:
 *   added_ns=X        median over the pairs of (hooked - direct) ns per call
 *   added_q1_ns, added_q3_ns   its quartiles
 *   hooked_ns, direct_ns       mean ns per call of each kind
 *   pairs=N
 * Without a shim added_ns is ~0: that is the control.
 * Usage: hook_cost [--pairs=N] [--block=N] [--warm-ms=N]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static long arg(int argc, char **argv, const char *name, long def)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return strtol(argv[i] + n + 1, NULL, 10);
	return def;
}

/* ns per call of count calls of f */
static double block(pid_t (*f)(void), long count)
{
	int64_t t0 = now_ns();
	for (long i = 0; i < count; i++)
		if (f() <= 0)
			exit(1);
	return (double)(now_ns() - t0) / (double)count;
}

int main(int argc, char **argv)
{
	long pairs = arg(argc, argv, "--pairs", 3000);
	long count = arg(argc, argv, "--block", 1000);
	long warm_ms = arg(argc, argv, "--warm-ms", 500);
	if (pairs < 4 || count < 1 || warm_ms < 0) {
		fprintf(stderr, "usage: hook_cost [--pairs=N>=4] [--block=N] [--warm-ms=N]\n");
		return 2;
	}
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	pid_t (*direct)(void) = libc ? (pid_t (*)(void))dlsym(libc, "getppid") : NULL;
	if (!direct) {
		fprintf(stderr, "hook_cost: getppid not found in libc.so.6\n");
		return 1;
	}
	int64_t end = now_ns() + warm_ms * 1000000;
	while (now_ns() < end)
		getppid();
	double *added = malloc(sizeof(double) * (size_t)pairs);
	if (!added)
		return 1;
	double hooked_sum = 0, direct_sum = 0;
	for (long p = 0; p < pairs; p++) {
		double h, d;
		if (p & 1) {
			h = block(getppid, count);
			d = block(direct, count);
		} else {
			d = block(direct, count);
			h = block(getppid, count);
		}
		added[p] = h - d;
		hooked_sum += h;
		direct_sum += d;
	}
	qsort(added, (size_t)pairs, sizeof(double), cmp_double);
	printf("added_ns=%.1f\nadded_q1_ns=%.1f\nadded_q3_ns=%.1f\n", added[pairs / 2],
	       added[pairs / 4], added[3 * pairs / 4]);
	printf("hooked_ns=%.1f\ndirect_ns=%.1f\npairs=%ld\n", hooked_sum / (double)pairs,
	       direct_sum / (double)pairs, pairs);
	free(added);
	return 0;
}
