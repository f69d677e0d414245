/* SPDX-License-Identifier: MIT */
/*
 * Descriptor calls of every kind, N of each, through libc's exported
 * functions only (what both producers see): bpf_kinds N makes
 *   pipe    N read() of a pipe with data, N read() of an empty
 *           non-blocking pipe (EAGAIN), N write() to a pipe
 *   socket  N recv() and N read() of a socketpair, N send()
 *   file    N pread64() and N read() of a regular file (after lseek),
 *           N lseek(), N write() to /dev/null (a character device)
 *   other   N read() of an eventfd, N read() of a closed descriptor
 *           (EBADF), N epoll_wait() on an empty epoll set
 * and N getppid() (no descriptor). With N = 0 it makes only the set-up
 * calls, so that a test can subtract everything but the N-fold calls.
 * Prints nothing (stdio writes from inside libc).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
	int p[2], nb[2], s[2], failed = 0;
	char c = 'k', buf[16];
	uint64_t v;
	struct epoll_event ee;

	if (pipe(p) || pipe2(nb, O_NONBLOCK) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return 1;
	int file = open(argv[0], O_RDONLY), null = open("/dev/null", O_WRONLY);
	int ev = eventfd((unsigned)n, EFD_SEMAPHORE), ep = epoll_create1(0);
	if (file < 0 || null < 0 || ev < 0 || ep < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		failed |= write(p[1], &c, 1) != 1;
		failed |= read(p[0], &c, 1) != 1;
		failed |= read(nb[0], &c, 1) != -1 || errno != EAGAIN;
		failed |= send(s[1], "kp", 2, 0) != 2;
		failed |= recv(s[0], &c, 1, 0) != 1;
		failed |= read(s[0], &c, 1) != 1;
		failed |= pread(file, buf, 4, 0) != 4;
		failed |= lseek(file, 0, SEEK_SET) != 0;
		failed |= read(file, buf, 4) != 4;
		failed |= write(null, buf, 4) != 4;
		failed |= read(ev, &v, sizeof(v)) != sizeof(v);
		failed |= read(999, &c, 1) != -1 || errno != EBADF;
		failed |= epoll_wait(ep, &ee, 1, 0) != 0;
		getppid();
	}
	return failed;
}
