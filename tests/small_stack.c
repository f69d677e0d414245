/* SPDX-License-Identifier: MIT */
/*
 * Syscalls from a small stack, as a goroutine or a coroutine makes them.
 * A context (makecontext) runs on STACK bytes above a guard page, filled
 * with a pattern; it makes N getppid and N writes to /dev/null, from the
 * libc wrappers and from a raw `syscall` instruction of this program, for
 * at least MS milliseconds (so that a shim flushes meanwhile), and runs
 * /bin/true V times through vfork (the child execs from the same small
 * stack, as Go's os/exec does). Then it says how deep below the context's
 * first frame anything wrote:
 *
 *   getppid=N write=N raw_getppid=N vfork=V stack_used=BYTES
 *
 * Usage: small_stack N [STACK] [MS] [V]
 * A hook that runs on the caller's stack overflows into the guard page
 * (SIGSEGV) or shows in stack_used.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define PATTERN 0xa5

static ucontext_t main_ctx, small_ctx;
static long calls;
static long min_ms;
static uintptr_t first_frame;
static long made_getppid, made_write, made_raw, vforks, made_vfork;

static long raw_getppid(void)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
	return r;
}

static long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_small_stack(void)
{
	first_frame = (uintptr_t)__builtin_frame_address(0);
	int fd = open("/dev/null", O_WRONLY);
	long start = ms_now();
	for (long i = 0; i < calls || ms_now() - start < min_ms; i++) {
		getppid();
		made_getppid++;
		if (write(fd, "x", 1) == 1)
			made_write++;
		raw_getppid();
		made_raw++;
	}
	close(fd);
	for (long i = 0; i < vforks; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		int status;
		if (pid > 0 && waitpid(pid, &status, 0) == pid && status == 0)
			made_vfork++;
		getppid();
		made_getppid++;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: small_stack N [STACK] [MS]\n");
		return 2;
	}
	calls = strtol(argv[1], NULL, 10);
	size_t stack = argc > 2 ? strtoul(argv[2], NULL, 10) : 8192;
	min_ms = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	vforks = argc > 4 ? strtol(argv[4], NULL, 10) : 0;
	size_t page = 4096;
	char *base = mmap(NULL, page + stack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (base == MAP_FAILED || mprotect(base, page, PROT_NONE)) {
		perror("small_stack: mmap");
		return 1;
	}
	char *lo = base + page;
	memset(lo, PATTERN, stack);
	getcontext(&small_ctx);
	small_ctx.uc_stack.ss_sp = lo;
	small_ctx.uc_stack.ss_size = stack;
	small_ctx.uc_link = &main_ctx;
	makecontext(&small_ctx, on_small_stack, 0);
	if (swapcontext(&main_ctx, &small_ctx)) {
		perror("small_stack: swapcontext");
		return 1;
	}
	size_t deepest = 0;
	while (deepest < stack && (unsigned char)lo[deepest] == PATTERN)
		deepest++;
	printf("getppid=%ld write=%ld raw_getppid=%ld vfork=%ld stack_used=%ld\n", made_getppid,
	       made_write, made_raw, made_vfork, (long)(first_frame - (uintptr_t)(lo + deepest)));
	return 0;
}
