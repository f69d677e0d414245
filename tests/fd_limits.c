/* SPDX-License-Identifier: MIT */
/*
 * Descriptor limits and umask, as a program may set them itself.
 * "nofile": lowers its soft RLIMIT_NOFILE to 64, opens /dev/null until
 *   EMFILE, prints how many it got and the first and last descriptor,
 *   calls getppid() 100 times and exits with every descriptor still open.
 * "umask": sets umask 0777, creates a file, prints its mode, calls
 *   getppid() 100 times.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "nofile") == 0) {
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = 64;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return 2;
		int n = 0, first = -1, last = -1, fd;
		while ((fd = open("/dev/null", O_RDONLY)) >= 0) {
			if (first < 0)
				first = fd;
			last = fd;
			n++;
		}
		int e = errno;
		for (int i = 0; i < 100; i++)
			getppid();
		printf("opened=%d first=%d last=%d errno=%s\n", n, first, last,
		       e == EMFILE ? "EMFILE" : strerror(e));
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "umask") == 0) {
		umask(0777);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0666);
		struct stat st;
		if (fd < 0 || fstat(fd, &st))
			return 2;
		close(fd);
		for (int i = 0; i < 100; i++)
			getppid();
		printf("mode=%03o umask=%03o\n", (unsigned)(st.st_mode & 0777), (unsigned)umask(0777));
		return 0;
	}
	fprintf(stderr, "usage: fd_limits nofile | umask FILE\n");
	return 1;
}
