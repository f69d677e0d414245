/* SPDX-License-Identifier: MIT */
/*
 * Statically linked: no dynamic loader, so no LD_PRELOAD shim can see its
 * calls; kbpf-trace sees them from the kernel side. Makes N (default
 * 1000) raw getppid syscalls and prints how many it made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("getppid %ld\n", n);
	return 0;
}
