/* SPDX-License-Identifier: MIT */
/*
 * Starts children with environments of their own, as daemons do: a
 * posix_spawn of env(1) with only LANG and PATH, and a fork + chdir("/") +
 * execve of sh with only A=1, whose env | sort shows what it got. A
 * profiler that follows process trees must still trace both, and write
 * into the same place although the child's working directory changed.
 */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char *argv[] = { "/usr/bin/env", NULL };
	char *envp[] = { "LANG=C", "PATH=/bin", NULL };
	pid_t pid;
	int status;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) ||
	    waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		char *sh_argv[] = { "sh", "-c", "env | sort", NULL };
		char *sh_envp[] = { "A=1", NULL };
		if (chdir("/") == 0)
			execve("/bin/sh", sh_argv, sh_envp);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	return 0;
}
