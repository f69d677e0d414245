/* SPDX-License-Identifier: MIT */
/*
 * diff_writes W G [SIZE FILE]: writes W records of SIZE bytes (default 1)
 * to FILE (default /dev/null; a file is rewound before each write, so it
 * stays SIZE bytes long) and calls getppid() G times. Prints writes=W
 * getppid=G.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long w = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	long g = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	long size = argc > 3 ? strtol(argv[3], NULL, 10) : 1;
	const char *path = argc > 4 ? argv[4] : "/dev/null";
	bool rewind = argc > 4;
	char *buf = calloc(1, size > 0 ? (size_t)size : 1);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || !buf || size < 1)
		return 1;
	for (long i = 0; i < w; i++) {
		if (rewind && lseek(fd, 0, SEEK_SET) != 0)
			return 1;
		if (write(fd, buf, (size_t)size) != size)
			return 1;
	}
	for (long i = 0; i < g; i++)
		getppid();
	close(fd);
	free(buf);
	printf("writes=%ld getppid=%ld\n", w, g);
	return 0;
}
