/* SPDX-License-Identifier: MIT */
/*
 * Every way a process can start another, each child with its own known
 * number of getppid() calls and exit status:
 *   vfork + execv of itself ("leaf 11")                 -> 11 calls, exit 11
 *   posix_spawn of itself ("leaf 12")                   -> 12 calls, exit 12
 *   clone(CLONE_VM | SIGCHLD) on its own stack: 13 calls, _exit(13)
 *   clone(SIGCHLD) (no CLONE_VM) on its own stack: 14 calls, returns 14
 *   clone(CLONE_VM | CLONE_VFORK | SIGCHLD): execv "leaf 15" -> 15 calls, exit 15
 * The parent makes 10 calls, checks every status and prints
 * "pid=<pid> ok" and one line per child: "child=<how> pid=<pid>".
 * "chain N": N calls, then execs "chain N-1"; "chain 0" exits 0.
 */
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char *self;

static void calls(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
}

static int clone_vm_child(void *arg)
{
	(void)arg;
	calls(13);
	_exit(13);
}

static int clone_plain_child(void *arg)
{
	(void)arg;
	calls(14);
	return 14;
}

static int clone_vfork_child(void *arg)
{
	char *args[] = { self, "leaf", "15", NULL };
	(void)arg;
	execv(self, args);
	_exit(127);
}

static int check(const char *how, pid_t pid, int want)
{
	int st;
	if (pid <= 0) {
		fprintf(stderr, "spawn_kinds: %s: could not start\n", how);
		return 1;
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		fprintf(stderr, "spawn_kinds: %s: status %#x, want exit %d\n", how, st, want);
		return 1;
	}
	printf("child=%s pid=%d\n", how, (int)pid);
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 2 && strcmp(argv[1], "leaf") == 0) {
		int n = atoi(argv[2]);
		calls(n);
		return n;
	}
	if (argc > 2 && strcmp(argv[1], "chain") == 0) {
		int n = atoi(argv[2]);
		calls(n);
		if (n == 0)
			return 0;
		char next[16];
		snprintf(next, sizeof(next), "%d", n - 1);
		char *args[] = { self, "chain", next, NULL };
		execv(self, args);
		perror("spawn_kinds: execv");
		return 127;
	}
	static char stacks[3][256 << 10] __attribute__((aligned(16)));
	int bad = 0;
	calls(10);
	fflush(stdout);

	pid_t p = vfork();
	if (p == 0) {
		char *args[] = { self, "leaf", "11", NULL };
		execv(self, args);
		_exit(127);
	}
	bad |= check("vfork", p, 11);

	char *args[] = { self, "leaf", "12", NULL };
	if (posix_spawn(&p, self, NULL, NULL, args, environ))
		p = -1;
	bad |= check("posix_spawn", p, 12);

	fflush(stdout);
	p = clone(clone_vm_child, stacks[0] + sizeof(stacks[0]), CLONE_VM | SIGCHLD, NULL);
	bad |= check("clone_vm", p, 13);
	fflush(stdout);
	p = clone(clone_plain_child, stacks[1] + sizeof(stacks[1]), SIGCHLD, NULL);
	bad |= check("clone", p, 14);
	fflush(stdout);
	p = clone(clone_vfork_child, stacks[2] + sizeof(stacks[2]),
		  CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	bad |= check("clone_vfork", p, 15);
	printf("pid=%d %s\n", (int)getpid(), bad ? "failed" : "ok");
	return bad;
}
