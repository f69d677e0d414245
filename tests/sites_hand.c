/* SPDX-License-Identifier: MIT */
/*
 * Calls every hand-written hook of the shim that returns (open, close,
 * fclose, closedir, dup2, dup3, close_range, closefrom, fcntl, ioctl,
 * prctl, mremap, renameat2, fork, posix_spawn, syscall()) N times from one
 * function, hand_calls(), so that kanalyze --sites must name it for each
 * of their syscalls. syscall(2) is called from raw_calls() for getppid and
 * for close (which the shim's syscall() hands on to its close hook), and
 * getpid from hot_calls() after eleven other sites.
 * sites_hand N DIR prints "ok" when every call did what it should.
 */
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int check(int ok, const char *what)
{
	if (!ok)
		fprintf(stderr, "sites_hand: %s failed\n", what);
	return ok ? 0 : 1;
}

__attribute__((noinline)) int hand_calls(const char *dir, long n)
{
	int bad = 0;
	char a[4096], b[4096];
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	for (long i = 0; i < n; i++) {
		int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		bad += check(fd >= 0, "open");
		bad += check(fcntl(fd, F_GETFD) >= 0, "fcntl");
		int nb = 0;
		bad += check(ioctl(fd, FIONREAD, &nb) == 0, "ioctl");
		bad += check(dup2(fd, 100) == 100, "dup2");
		bad += check(dup3(fd, 101, O_CLOEXEC) == 101, "dup3");
		bad += check(close_range(100, 100, 0) == 0, "close_range");
		closefrom(101);
		bad += check(close(fd) == 0, "close");
		bad += check(renameat2(AT_FDCWD, a, AT_FDCWD, b, 0) == 0, "renameat2");
		FILE *f = fopen(b, "r");
		bad += check(f && fclose(f) == 0, "fclose");
		DIR *d = opendir(dir);
		bad += check(d && closedir(d) == 0, "closedir");
		char name[16];
		bad += check(prctl(PR_GET_NAME, name) == 0, "prctl");
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *q = p == MAP_FAILED ? p : mremap(p, 4096, 8192, MREMAP_MAYMOVE);
		bad += check(q != MAP_FAILED && munmap(q, 8192) == 0, "mremap");
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		int st;
		bad += check(pid > 0 && waitpid(pid, &st, 0) == pid && st == 0, "fork");
		char *argv[] = { "true", NULL };
		bad += check(posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0 &&
				     waitpid(pid, &st, 0) == pid && st == 0,
			     "posix_spawn");
	}
	return bad;
}

__attribute__((noinline)) int raw_calls(const char *dir, long n)
{
	int bad = 0;
	for (long i = 0; i < n; i++) {
		bad += check(syscall(SYS_getppid) == getppid(), "syscall(SYS_getppid)");
		int fd = open(dir, O_RDONLY | O_DIRECTORY);
		bad += check(fd >= 0 && syscall(SYS_close, fd) == 0, "syscall(SYS_close)");
	}
	return bad;
}

/* Eleven sites of getpid called once each (a process's start-up does
 * that), then the hot one: it must still be a site of its own. */
#define ONCE(k)                                                                \
	__attribute__((noinline)) static int once_##k(void)                   \
	{                                                                      \
		return getpid() > k ? 0 : 1; /* k: no two alike to merge */ \
	}
ONCE(0) ONCE(1) ONCE(2) ONCE(3) ONCE(4) ONCE(5) ONCE(6) ONCE(7) ONCE(8) ONCE(9) ONCE(10)

__attribute__((noinline)) int hot_calls(long n)
{
	int bad = once_0() + once_1() + once_2() + once_3() + once_4() + once_5() +
		  once_6() + once_7() + once_8() + once_9() + once_10();
	for (long i = 0; i < n; i++)
		bad += check(getpid() > 0, "getpid");
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sites_hand N DIR\n");
		return 2;
	}
	long n = strtol(argv[1], NULL, 10);
	int bad = hand_calls(argv[2], n) + raw_calls(argv[2], n) + hot_calls(n);
	if (bad)
		return 1;
	puts("ok");
	return 0;
}
