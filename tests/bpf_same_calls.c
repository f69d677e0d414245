/* SPDX-License-Identifier: MIT */
/*
 * Deterministic calls through libc's exported functions, none of which
 * the dynamic loader or libc's own start-up and exit make: the shim and
 * kbpf-trace must count each of them exactly alike. Prints nothing (stdio
 * writes from inside libc, which only kbpf-trace would see).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	int p[2], s[2], failed = 0;
	char buf[64] = "kprof";
	struct iovec iov = { buf, 8 };

	for (int i = 0; i < 300; i++)
		getppid();
	for (int i = 0; i < 50; i++)
		sched_yield();
	for (int i = 0; i < 30; i++)
		failed |= unlink("/nonexistent/kprof") == 0; /* ENOENT */
	if (pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, s))
		return 1;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	for (int i = 0; i < 25; i++)
		failed |= readv(p[0], &iov, 1) != -1 || errno != EAGAIN;
	for (int i = 0; i < 40; i++) {
		failed |= writev(p[1], &iov, 1) != 8;
		failed |= readv(p[0], &iov, 1) != 8;
	}
	for (int i = 0; i < 20; i++) {
		failed |= send(s[0], buf, 8, 0) != 8;
		failed |= recv(s[1], buf, 8, 0) != 8;
	}
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = s[1] };
	epoll_ctl(ep, EPOLL_CTL_ADD, s[1], &ev);
	for (int i = 0; i < 15; i++)
		epoll_wait(ep, &ev, 1, 0);
	for (int i = 0; i < 12; i++)
		failed |= dup2(p[0], 100) != 100;
	for (int i = 0; i < 10; i++)
		kill(getpid(), 0);
	for (int i = 0; i < 5; i++) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 20; i++)
		lseek(p[1], 0, SEEK_SET); /* ESPIPE */
	return failed;
}
