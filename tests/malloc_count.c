/* SPDX-License-Identifier: MIT */
/*
 * Counts heap allocations made while hooked calls run: this executable
 * defines malloc, calloc, realloc and the aligned allocators itself, so
 * every allocation in the process — the shim's, libc's internal ones, ours
 * — comes here first (the executable precedes libkprof.so and libc in the
 * symbol lookup order) and is counted per thread before it goes on to
 * glibc's __libc_* allocator. Run under LD_PRELOAD=libkprof.so.
 *
 * Prints, for --calls=N (default 100000) calls of each of getppid, 1-byte
 * read of /dev/zero, EAGAIN read of an empty non-blocking pipe and 1-byte
 * write to /dev/null:
 *   main_calls=4N main_mallocs=M      on the main thread (already attached)
 *   thread_calls=4N thread_mallocs=M  on a new thread, from its first
 *                                     hooked call (the shim attaches it)
 *   control_mallocs=M                 opendir()+closedir() in the same
 *                                     window: libc's own malloc reaches the
 *                                     counter, so 0 above means none
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

static __thread unsigned long thread_mallocs;

void *malloc(size_t size)
{
	thread_mallocs++;
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	thread_mallocs++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	thread_mallocs++;
	return __libc_realloc(p, size);
}

void *memalign(size_t align, size_t size)
{
	thread_mallocs++;
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	thread_mallocs++;
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	thread_mallocs++;
	void *p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *p)
{
	__libc_free(p);
}

static long calls = 100000;
static int zero_fd, null_fd, pipe_fds[2];
static int bad;

static void hooked_calls(long n)
{
	char c = 0;
	for (long i = 0; i < n; i++) {
		if (getppid() <= 0)
			bad = 1;
		if (read(zero_fd, &c, 1) != 1)
			bad = 1;
		if (read(pipe_fds[0], &c, 1) != -1 || errno != EAGAIN)
			bad = 1;
		if (write(null_fd, &c, 1) != 1)
			bad = 1;
	}
}

static unsigned long result_thread;

static void *thread_main(void *arg)
{
	(void)arg;
	unsigned long before = thread_mallocs;
	hooked_calls(calls);	/* the first call attaches this thread */
	result_thread = thread_mallocs - before;
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--calls=", 8) == 0) {
			calls = strtol(argv[i] + 8, NULL, 10);
		} else {
			fprintf(stderr, "usage: malloc_count [--calls=N]\n");
			return 2;
		}
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	null_fd = open("/dev/null", O_WRONLY);
	if (zero_fd < 0 || null_fd < 0 || pipe2(pipe_fds, O_NONBLOCK) < 0) {
		perror("malloc_count: setup");
		return 1;
	}
	hooked_calls(1);	/* warm: this thread attached, real functions resolved */

	unsigned long before = thread_mallocs;
	hooked_calls(calls);
	unsigned long main_mallocs = thread_mallocs - before;

	before = thread_mallocs;
	DIR *d = opendir("/");
	if (d)
		closedir(d);
	unsigned long control = thread_mallocs - before;

	pthread_t tid;
	int err = pthread_create(&tid, NULL, thread_main, NULL);
	if (err) {
		fprintf(stderr, "malloc_count: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(tid, NULL);
	if (bad) {
		fprintf(stderr, "malloc_count: a hooked call returned a wrong result\n");
		return 1;
	}
	printf("main_calls=%ld main_mallocs=%lu\n", 4 * calls, main_mallocs);
	printf("thread_calls=%ld thread_mallocs=%lu\n", 4 * calls, result_thread);
	printf("control_mallocs=%lu\n", control);
	return 0;
}
