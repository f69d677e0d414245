/* SPDX-License-Identifier: MIT */
/*
 * read() on every kind of descriptor, an exact number of times each, and
 * the counts it made printed as key=value lines for tests/t_shim_fd_kinds.sh:
 *   pipe    a pipe; a FIFO opened by path (O_RDWR); a pipe dup2()ed onto
 *           the number of a regular file (the kind follows the dup); a
 *           non-blocking pipe read empty (EAGAIN) EAGAIN_READS times, then
 *           once with data (one logical operation with that many retries)
 *   socket  a socketpair
 *   file    a regular file opened with open(); /dev/null (a character
 *           device); a file opened with fopen() (inside libc: the shim
 *           classifies it at its first read)
 *   other   an eventfd; a descriptor that is not open (EBADF)
 * Usage: fd_kinds DIR (a scratch directory for the files and the FIFO)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIPE_READS 30
#define FIFO_READS 4
#define DUP_READS 9
#define EAGAIN_READS 25
#define SOCKET_READS 20
#define FILE_READS 15
#define NULL_READS 12
#define FOPEN_READS 7
#define EVENTFD_READS 3
#define EBADF_READS 2

static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fd_kinds: %s: %s\n", what, strerror(errno));
		failed = 1;
	}
}

/* n reads of one byte each that must all return want */
static void reads(int fd, int n, ssize_t want, const char *what)
{
	char c;
	for (int i = 0; i < n; i++)
		check(read(fd, &c, 1) == want, what);
}

static void fill(int fd, int n)
{
	char buf[64];
	memset(buf, 'k', sizeof(buf));
	check(n <= (int)sizeof(buf) && write(fd, buf, (size_t)n) == n, "write");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fd_kinds DIR\n");
		return 2;
	}
	char path[4096], fifo[4096], fpath[4096];
	snprintf(path, sizeof(path), "%s/regular", argv[1]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", argv[1]);
	snprintf(fpath, sizeof(fpath), "%s/stdio", argv[1]);

	/* pipe */
	int p[2];
	check(pipe(p) == 0, "pipe");
	fill(p[1], PIPE_READS);
	reads(p[0], PIPE_READS, 1, "pipe read");

	/* FIFO by path: O_RDWR does not wait for a writer on Linux */
	check(mkfifo(fifo, 0600) == 0, "mkfifo");
	int f = open(fifo, O_RDWR);
	check(f >= 0, "open fifo");
	fill(f, FIFO_READS);
	reads(f, FIFO_READS, 1, "fifo read");

	/* socketpair */
	int s[2];
	check(socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0, "socketpair");
	fill(s[1], SOCKET_READS);
	reads(s[0], SOCKET_READS, 1, "socket read");

	/* regular file, then a pipe dup2()ed onto its number */
	int w = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	check(w >= 0, "create file");
	fill(w, FILE_READS);
	close(w);
	int r = open(path, O_RDONLY);
	check(r >= 0, "open file");
	reads(r, FILE_READS, 1, "file read");
	int q[2];
	check(pipe(q) == 0, "pipe 2");
	fill(q[1], DUP_READS);
	check(dup2(q[0], r) == r, "dup2 pipe onto the file's descriptor");
	reads(r, DUP_READS, 1, "read of the dup2()ed pipe");

	/* /dev/null: a character device is a file */
	int n = open("/dev/null", O_RDONLY);
	check(n >= 0, "open /dev/null");
	reads(n, NULL_READS, 0, "/dev/null read");

	/* fopen: the open happens inside libc */
	FILE *fw = fopen(fpath, "w");
	check(fw && fputs("kprof kinds", fw) >= 0 && fclose(fw) == 0, "fopen w");
	FILE *fr = fopen(fpath, "r");
	check(fr != NULL, "fopen r");
	if (fr)
		reads(fileno(fr), FOPEN_READS, 1, "read of fopen's descriptor");

	/* eventfd (other): a semaphore counter of 3 gives 3 reads of 1 */
	int e = eventfd(EVENTFD_READS, EFD_SEMAPHORE);
	check(e >= 0, "eventfd");
	for (int i = 0; i < EVENTFD_READS; i++) {
		uint64_t v;
		check(read(e, &v, sizeof(v)) == sizeof(v) && v == 1, "eventfd read");
	}
	/* a descriptor that is not open (other, EBADF) */
	for (int i = 0; i < EBADF_READS; i++) {
		char c;
		check(read(999, &c, 1) == -1 && errno == EBADF, "read of a closed descriptor");
	}

	/* non-blocking pipe: EAGAIN, EAGAIN, ..., then the data */
	int nb[2];
	check(pipe2(nb, O_NONBLOCK) == 0, "pipe2");
	int eagain = 0;
	for (int i = 0; i < EAGAIN_READS; i++) {
		char c;
		eagain += read(nb[0], &c, 1) == -1 && errno == EAGAIN;
	}
	check(eagain == EAGAIN_READS, "EAGAIN on the empty pipe");
	fill(nb[1], 1);
	reads(nb[0], 1, 1, "non-blocking pipe read");

	printf("read.pipe=%d\n", PIPE_READS + FIFO_READS + DUP_READS + EAGAIN_READS + 1);
	printf("read.pipe.retries=%d\n", EAGAIN_READS);
	printf("read.socket=%d\n", SOCKET_READS);
	printf("read.file=%d\n", FILE_READS + NULL_READS + FOPEN_READS);
	printf("read.other=%d\n", EVENTFD_READS + EBADF_READS);
	printf("read.other.errors=%d\n", EBADF_READS);
	printf("read=%d\n", PIPE_READS + FIFO_READS + DUP_READS + EAGAIN_READS + 1 +
			    SOCKET_READS + FILE_READS + NULL_READS + FOPEN_READS +
			    EVENTFD_READS + EBADF_READS);
	printf("eagain_ops=1\n");
	return failed;
}
