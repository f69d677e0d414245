/* SPDX-License-Identifier: MIT */
/* Reads /dev/zero from one function and writes /dev/null from another, so
 * that the call sites of read() and write() are these functions:
 * sites_calls N prints reads=N writes=2N. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long reader_function(int fd, long n)
{
	char buf[64];
	long total = 0;
	for (long i = 0; i < n; i++)
		total += read(fd, buf, sizeof(buf));
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
	long r = reader_function(in, n);
	long w = writer_function(out, 2 * n);
	printf("reads=%ld writes=%ld\n", r / 64, w);
	return 0;
}
