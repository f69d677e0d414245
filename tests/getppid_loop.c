/* SPDX-License-Identifier: MIT */
/* Calls getppid() N times (argv[1], default 1000) and says so: getppid=N. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	for (long i = 0; i < n; i++)
		getppid();
	printf("getppid=%ld\n", n);
	return 0;
}
