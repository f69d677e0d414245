/* SPDX-License-Identifier: MIT */
/*
 * A small process tree with exactly known calls per process:
 *   parent: 100 getppid, fork (child A), posix_spawn of itself (child B),
 *           waits for both;
 *   child A (fork): 200 getppid, then execs itself in "exec" mode;
 *   A after exec: 300 getppid, exits 3;
 *   B (posix_spawn, "spawned" mode): 400 getppid, exits 4.
 * Each process prints its role, pid and ppid, e.g. "role=parent pid=10
 * ppid=9 getppid=100"; the parent checks the exit statuses.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void calls(const char *role, int n)
{
	for (int i = 0; i < n; i++)
		getppid();
	printf("role=%s pid=%d ppid=%d getppid=%d\n", role, (int)getpid(),
	       (int)getppid(), n);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		calls("exec", 300 - 1);
		return 3;
	}
	if (argc > 1 && strcmp(argv[1], "spawned") == 0) {
		calls("spawned", 400 - 1);
		return 4;
	}
	calls("parent", 100 - 1);
	pid_t a = fork();
	if (a < 0) {
		perror("proc_tree: fork");
		return 1;
	}
	if (a == 0) {
		calls("forked", 200 - 1);
		char *args[] = { argv[0], "exec", NULL };
		execv("/proc/self/exe", args);
		perror("proc_tree: execv");
		_exit(127);
	}
	pid_t b;
	char *args[] = { argv[0], "spawned", NULL };
	int err = posix_spawn(&b, "/proc/self/exe", NULL, NULL, args, environ);
	if (err) {
		fprintf(stderr, "proc_tree: posix_spawn: %s\n", strerror(err));
		return 1;
	}
	int sa, sb;
	if (waitpid(a, &sa, 0) != a || waitpid(b, &sb, 0) != b) {
		perror("proc_tree: waitpid");
		return 1;
	}
	printf("children=%d,%d status=%d,%d\n", (int)a, (int)b, WEXITSTATUS(sa),
	       WEXITSTATUS(sb));
	return WEXITSTATUS(sa) == 3 && WEXITSTATUS(sb) == 4 ? 0 : 1;
}
