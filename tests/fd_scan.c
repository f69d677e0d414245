/* SPDX-License-Identifier: MIT */
/*
 * A program that looks for descriptors it did not open, the ways real
 * programs do (test_subprocess, closefrom emulations, daemons): the
 * entries of /proc/self/fd, fcntl(F_GETFD) and fstat over the whole soft
 * RLIMIT_NOFILE range, the number F_DUPFD gives from a high floor,
 * close_range over everything above stderr, and what a child sees after
 * fork and exec. It prints what it found; run plain and under the shim,
 * the output must be the same.
 *   fd_scan           the scan, then the same in an exec'd child
 *   fd_scan --child   the scan only
 */
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void list_proc_fd(const char *who)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		perror("opendir");
		exit(1);
	}
	int self = dirfd(d);
	printf("%s /proc/self/fd:", who);
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != self)
			printf(" %s", e->d_name);
	printf("\n");
	closedir(d);
}

static void probe_range(const char *who)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	long n_fcntl = 0, n_fstat = 0, highest = -1;
	for (long fd = 0; fd < (long)rl.rlim_cur; fd++) {
		struct stat st;
		if (fcntl((int)fd, F_GETFD) != -1) {
			n_fcntl++;
			highest = fd;
		}
		if (fstat((int)fd, &st) == 0)
			n_fstat++;
	}
	printf("%s open by fcntl: %ld, by fstat: %ld, highest %ld (of %ld)\n", who, n_fcntl,
	       n_fstat, highest, (long)rl.rlim_cur);
	/* the lowest free number from a floor near the limit */
	long floor = (long)rl.rlim_cur - 64;
	int dup = fcntl(0, F_DUPFD, floor);
	printf("%s F_DUPFD from %ld: %ld\n", who, floor, dup >= 0 ? (long)dup - floor : -1L);
	if (dup >= 0)
		close(dup);
}

int main(int argc, char **argv)
{
	bool child = argc > 1 && strcmp(argv[1], "--child") == 0;
	const char *who = child ? "child" : "parent";
	list_proc_fd(who);
	probe_range(who);
	if (child) {
		/* everything above stderr closed: what is left must be stdio */
		if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
			perror("close_range");
		list_proc_fd("child after close_range");
		probe_range("child after close_range");
		return 0;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		list_proc_fd("fork child");
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "--child", (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
