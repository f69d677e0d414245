/* SPDX-License-Identifier: MIT */
/*
 * Calls in two phases with a pause the test controls: bpf_phases N M
 * makes N getppid() calls, prints "ready", reads its stdin until end of
 * file, then makes M more getppid() calls and prints "calls=N+M".
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	long m = argc > 2 ? strtol(argv[2], NULL, 10) : 100;
	char buf[64];

	for (long i = 0; i < n; i++)
		getppid();
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	for (long i = 0; i < m; i++)
		getppid();
	printf("calls=%ld\n", n + m);
	return 0;
}
