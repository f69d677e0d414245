/* SPDX-License-Identifier: MIT */
/*
 * A program that is rough with descriptors, as daemons are: it closes every
 * descriptor 0-1023 (one by one and with close_range), dup2()s a pipe onto
 * every descriptor from 3001 to the soft limit (where a preload shim keeps
 * its trace descriptor), closes them again with close_range and closefrom,
 * and checks that its own descriptors still behave. The trace of it must be
 * complete. argv[1]: ms to sleep first (default 1100), so that a periodic
 * flush has opened the trace descriptor before the abuse starts.
 * Prints getppid=1010 and fds=ok on the descriptor it saved (>= 3000).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int report = -1;

static void say(const char *s)
{
	if (write(report, s, strlen(s)) < 0)
		_exit(3);
}

static void check(int ok, const char *what)
{
	if (!ok) {
		say("fds=broken: ");
		say(what);
		say("\n");
		_exit(1);
	}
}

int main(int argc, char **argv)
{
	long sleep_ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1100;
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
	setrlimit(RLIMIT_NOFILE, &rl);
	int limit = (int)rl.rlim_cur;

	for (int i = 0; i < 10; i++)
		getppid();
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);

	report = fcntl(1, F_DUPFD_CLOEXEC, 3000);
	if (report < 0) {
		perror("fd_abuse: F_DUPFD");
		return 2;
	}
	for (int fd = 0; fd < 512; fd++)
		close(fd);
	close_range(512, 1023, 0);

	int p[2];
	check(pipe(p) == 0, "pipe");
	check(p[0] == 0 && p[1] == 1, "lowest descriptors reused");
	for (int fd = 3001; fd < limit; fd++)
		check(dup2(p[0], fd) == fd, "dup2 onto a high descriptor");
	int mid = 3001 + (limit - 3001) / 2;
	check(close_range(3001, (unsigned)mid, 0) == 0, "close_range");
	closefrom(mid + 1);
	check(fcntl(3001, F_GETFD) == -1, "high descriptors closed");

	check(write(p[1], "x", 1) == 1, "pipe write");
	char c = 0;
	check(read(p[0], &c, 1) == 1 && c == 'x', "pipe read");
	int n = open("/dev/null", O_WRONLY);
	check(n == 2, "open gets the lowest free descriptor");
	check(write(n, "abc", 3) == 3, "write /dev/null");
	check(close(n) == 0 && close(p[0]) == 0 && close(p[1]) == 0, "close");

	for (int i = 0; i < 1000; i++)
		getppid();
	say("getppid=1010\nfds=ok\n");
	return 0;
}
