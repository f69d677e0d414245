/* SPDX-License-Identifier: MIT */
/* Writes W one-byte records to /dev/null and calls getppid() G times:
 * diff_writes W G. Prints writes=W getppid=G. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long w = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	long g = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	for (long i = 0; i < w; i++)
		if (write(fd, "x", 1) != 1)
			return 1;
	for (long i = 0; i < g; i++)
		getppid();
	close(fd);
	printf("writes=%ld getppid=%ld\n", w, g);
	return 0;
}
