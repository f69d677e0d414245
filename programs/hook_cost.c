/* SPDX-License-Identifier: MIT */
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
 *
 * --against=copy compares with a copy of libc's wrapper (the syscall and a
 * return) written into a page after it was mapped, where rewrite mode's
 * scan never looks: the way to measure rewrite mode, which also rewrites
 * libc's own getppid. --call=read times a 1-byte read() of /dev/zero
 * instead of getppid() (needs --against=copy). --via=libc calls libc's own
 * getppid on the hooked side too (with --against=copy): in rewrite mode
 * that is the rewritten wrapper without the shim's symbol hook in front,
 * so the two figures tell the symbol hook's pass-through from the rest.
 * Usage: hook_cost [--pairs=N] [--block=N] [--warm-ms=N] [--against=libc|copy]
 *                  [--call=getppid|read] [--via=plt|libc]
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "long_arg.h"

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

/* ns per call of count calls of f */
static double block(pid_t (*f)(void), long count)
{
	int64_t t0 = now_ns();
	for (long i = 0; i < count; i++)
		if (f() <= 0)
			exit(1);
	return (double)(now_ns() - t0) / (double)count;
}

static int zero_fd;
static long (*copy_read)(int fd, void *buf, size_t n);

static pid_t read_hooked(void)
{
	char c;
	return (pid_t)read(zero_fd, &c, 1);
}

static pid_t read_copy(void)
{
	char c;
	return (pid_t)copy_read(zero_fd, &c, 1);
}

static const char *opt(int argc, char **argv, const char *name, const char *def)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

/* libc's wrappers, x86_64: mov $110,%eax; syscall; ret  and  xor %eax,%eax; syscall; ret */
static void *copy_wrappers(void)
{
#if defined(__x86_64__)
	static const unsigned char getppid_code[] = { 0xb8, 110, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	static const unsigned char read_code[] = { 0x31, 0xc0, 0x0f, 0x05, 0xc3 };
	unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	memcpy(page, getppid_code, sizeof(getppid_code));
	memcpy(page + 64, read_code, sizeof(read_code));
	copy_read = (long (*)(int, void *, size_t))(void *)(page + 64);
	return page;
#else
	return NULL;
#endif
}

int main(int argc, char **argv)
{
	long pairs = long_arg(argc, argv, "--pairs", 3000);
	long count = long_arg(argc, argv, "--block", 1000);
	long warm_ms = long_arg(argc, argv, "--warm-ms", 500);
	if (pairs < 4 || count < 1 || warm_ms < 0) {
		fprintf(stderr, "usage: hook_cost [--pairs=N>=4] [--block=N] [--warm-ms=N] "
				"[--against=libc|copy] [--call=getppid|read] [--via=plt|libc]\n");
		return 2;
	}
	const char *against = opt(argc, argv, "--against", "libc");
	const char *call = opt(argc, argv, "--call", "getppid");
	const char *via = opt(argc, argv, "--via", "plt");
	bool copy = strcmp(against, "copy") == 0, reads = strcmp(call, "read") == 0;
	bool via_libc = strcmp(via, "libc") == 0;
	if ((!copy && strcmp(against, "libc")) || (!reads && strcmp(call, "getppid")) ||
	    (reads && !copy) || (!via_libc && strcmp(via, "plt")) || (via_libc && (reads || !copy))) {
		fprintf(stderr, "hook_cost: --against=libc|copy, --call=getppid|read "
				"(read with copy), --via=plt|libc (libc: getppid with copy)\n");
		return 2;
	}
	pid_t (*hooked)(void) = getppid, (*direct)(void) = NULL;
	if (via_libc) {
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		hooked = libc ? (pid_t (*)(void))dlsym(libc, "getppid") : NULL;
		if (!hooked) {
			fprintf(stderr, "hook_cost: no libc getppid\n");
			return 1;
		}
	}
	if (copy) {
		void *page = copy_wrappers();
		direct = page ? (pid_t (*)(void))page : NULL;
		if (reads) {
			hooked = read_hooked;
			direct = page ? read_copy : NULL;
			zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		}
	} else {
		void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
		direct = libc ? (pid_t (*)(void))dlsym(libc, "getppid") : NULL;
	}
	if (!direct || zero_fd < 0) {
		fprintf(stderr, "hook_cost: no %s to compare with\n", copy ? "copy" : "libc getppid");
		return 1;
	}
	int64_t end = now_ns() + warm_ms * 1000000;
	while (now_ns() < end)
		hooked();
	double *added = malloc(sizeof(double) * (size_t)pairs);
	if (!added)
		return 1;
	double hooked_sum = 0, direct_sum = 0;
	for (long p = 0; p < pairs; p++) {
		double h, d;
		if (p & 1) {
			h = block(hooked, count);
			d = block(direct, count);
		} else {
			d = block(direct, count);
			h = block(hooked, count);
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
