/* SPDX-License-Identifier: MIT */
/*
 * Reads an empty non-blocking pipe N times (argv[1], default 500). Every
 * read must fail with EAGAIN; prints eagain=N (the retries a profiler must
 * show) and exits 1 if any read did something else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
	int fds[2];
	if (pipe2(fds, O_NONBLOCK)) {
		perror("eagain_pipe: pipe2");
		return 1;
	}
	long eagain = 0;
	char c;
	for (long i = 0; i < n; i++) {
		errno = 0;
		ssize_t r = read(fds[0], &c, 1);
		if (r == -1 && errno == EAGAIN)
			eagain++;
		else
			fprintf(stderr, "eagain_pipe: read %ld returned %zd errno %d\n", i, r, errno);
	}
	close(fds[0]);
	close(fds[1]);
	printf("eagain=%ld\n", eagain);
	return eagain == n ? 0 : 1;
}
