/* SPDX-License-Identifier: MIT */
/*
 * Descriptors that libc closes itself (fclose, pclose, closedir) and that
 * libc then makes again under the same number (popen's pipe): every read
 * from the pipe must count as a pipe read, not under the kind the number
 * had before. Prints pid=, read.file=, read.pipe= (the reads it made).
 */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int pipe_reads, file_reads;

/* popen a writer of 3 bytes on the number fd just freed; read it to EOF */
static int read_popen(int fd)
{
	FILE *p = popen("printf abc", "r");
	if (!p || fileno(p) != fd) {
		fprintf(stderr, "popen did not reuse descriptor %d\n", fd);
		return -1;
	}
	char c;
	ssize_t n;
	do {
		n = read(fileno(p), &c, 1);
		pipe_reads++;
	} while (n == 1);
	return pclose(p) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	char c;
	FILE *f = fopen(argv[0], "r");
	if (!f)
		return 1;
	int fd = fileno(f);
	if (read(fd, &c, 1) != 1) /* classified as a file here */
		return 1;
	file_reads++;
	fclose(f);
	if (read_popen(fd))
		return 2;

	DIR *d = opendir("/");
	if (!d || dirfd(d) != fd) {
		fprintf(stderr, "opendir did not reuse descriptor %d\n", fd);
		return 3;
	}
	struct stat st;
	fstat(dirfd(d), &st); /* the program's own fstat: a file */
	closedir(d);
	if (read_popen(fd))
		return 4;
	printf("pid=%d\nread.file=%d\nread.pipe=%d\n", (int)getpid(), file_reads, pipe_reads);
	return 0;
}
