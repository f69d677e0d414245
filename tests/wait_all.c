/* SPDX-License-Identifier: MIT */
/*
 * Waits for any child with __WALL, as strace and some init systems do:
 * one fork child reaped, then wait4 (WNOHANG and blocking), waitpid and
 * waitid(P_ALL) with no child left, each of which must fail with ECHILD
 * (the shim's output process, a clone child, must not make them wait or
 * return 0). Prints one line per call.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *what, long r)
{
	printf("%s %ld %s\n", what, r, r < 0 ? strerror(errno) : "");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t p = fork();
	if (p == 0)
		_exit(3);
	int st = 0;
	pid_t r = wait4(-1, &st, __WALL, NULL);
	printf("reaped_child %d status %d\n", r == p, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	say("wait4_nohang", wait4(-1, &st, __WALL | WNOHANG, NULL));
	say("wait4", wait4(-1, &st, __WALL, NULL));
	say("waitpid_wclone", waitpid(-1, &st, __WCLONE));
	say("waitpid_pgid", waitpid(0, &st, __WALL));
	siginfo_t si;
	say("waitid", waitid(P_ALL, 0, &si, WEXITED | __WALL));
	return 0;
}
