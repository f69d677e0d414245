/* SPDX-License-Identifier: MIT */
/*
 * A fork child killed before it could write anything of its trace: the
 * child blocks in pause() at once, the parent makes 100 getppid calls,
 * kills the child with SIGKILL, reaps it and exits 0. Prints
 * "child=PID signal=9" (the child's pid and the signal that ended it).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	pid_t child = fork();
	if (child < 0) {
		perror("fork_kill: fork");
		return 99;
	}
	if (child == 0) {
		for (;;)
			pause();
	}
	for (int i = 0; i < 100; i++)
		getppid();
	int status = 0;
	if (kill(child, SIGKILL) || waitpid(child, &status, 0) != child) {
		perror("fork_kill: kill");
		return 99;
	}
	printf("child=%d signal=%d\n", (int)child, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return 0;
}
