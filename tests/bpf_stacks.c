/* SPDX-License-Identifier: MIT */
/*
 * User stacks under kbpf-trace --stacks (built with frame pointers, see
 * the Makefile): main -> run_reads -> reader_function -> read() N times on
 * /dev/zero, and main -> writer_function -> write() 2N times to /dev/null,
 * so that the stacks of read and write name these functions, caller
 * first. bpf_stacks N prints reads=N writes=2N. bpf_stacks N fork makes
 * the reads in a fork()ed child (which inherits its parent's mappings)
 * and waits for it before writing.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) long reader_function(int fd, long n)
{
	char buf[64];
	long total = 0;
	for (long i = 0; i < n; i++)
		total += read(fd, buf, sizeof(buf));
	return total;
}

__attribute__((noinline)) long run_reads(int fd, long n)
{
	long total = reader_function(fd, n);
	__asm__ volatile("" ::: "memory"); /* no tail call */
	return total;
}

__attribute__((noinline)) long writer_function(int fd, long n)
{
	long total = 0;
	for (long i = 0; i < n; i++)
		total += write(fd, "x", 1);
	return total;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
	if (in < 0 || out < 0)
		return 1;
	long r;
	if (argc > 2 && strcmp(argv[2], "fork") == 0) {
		pid_t child = fork();
		if (child < 0)
			return 1;
		if (child == 0)
			_exit(run_reads(in, n) == 64 * n ? 0 : 1);
		int status;
		if (waitpid(child, &status, 0) != child || status != 0)
			return 1;
		r = 64 * n;
	} else {
		r = run_reads(in, n);
	}
	long w = writer_function(out, 2 * n);
	printf("reads=%ld writes=%ld\n", r / 64, w);
	return 0;
}
