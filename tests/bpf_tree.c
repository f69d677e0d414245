/* SPDX-License-Identifier: MIT */
/*
 * A process tree with known counts, for kbpf-trace's fork/exec following.
 * The parent calls getppid 100 times and forks N children (default 3);
 * child i calls getppid 10*(i+1) times; one more child calls getppid 5
 * times, then execs this program as "bpf_tree exec", which calls getppid
 * 77 times. Every image prints "PID ORIGIN getppid COUNT" before ending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void calls(const char *origin, long n)
{
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("%d %s getppid %ld\n", (int)getpid(), origin, n);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		calls("exec", 77);
		return 0;
	}
	int children = argc > 1 ? atoi(argv[1]) : 3;
	calls("start", 100);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			calls("fork", 10L * (i + 1));
			_exit(0);
		}
	}
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		calls("fork", 5);
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	int status, failed = 0;
	while ((pid = wait(&status)) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return failed;
}
