/* SPDX-License-Identifier: MIT */
/*
 * Calls of libc functions that the shim may make as raw syscalls (raw = 2
 * in hooks.def), with failures: the results and errno must be libc's.
 * Prints each call's result and errno; the counts of calls and errors it
 * made go to stdout as well (calls=, errors=).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int calls, errors;

static void show(const char *what, long r)
{
	int e = errno;
	calls++;
	if (r == -1)
		errors++;
	printf("%s=%ld errno=%s\n", what, r, r == -1 ? strerror(e) : "-");
	errno = 0;
}

int main(void)
{
	struct stat st;
	int fds[2];
	errno = 0;
	show("lseek_bad", (long)lseek(-1, 0, SEEK_SET));
	show("dup_bad", dup(-1));
	show("unlink_missing", unlink("/nonexistent/kprof"));
	show("fstatat_missing", fstatat(AT_FDCWD, "/nonexistent/kprof", &st, 0));
	show("kill_self_0", kill(getpid(), 0));
	show("pipe2", pipe2(fds, O_CLOEXEC));
	show("lseek_pipe", (long)lseek(fds[0], 0, SEEK_CUR)); /* ESPIPE */
	errno = 42; /* a success leaves errno alone */
	long r = getppid() > 0;
	printf("getppid_ok=%ld errno_kept=%d\n", r, errno == 42);
	calls++;
	printf("calls=%d errors=%d\n", calls, errors);
	return 0;
}
