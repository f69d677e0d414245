/* SPDX-License-Identifier: MIT */
/*
 * What a sandbox does that the shim must survive (Chromium's, in small):
 *  - a clone(CLONE_VM|CLONE_VFORK|CLONE_SETTLS) child on a zeroed TLS
 *    that makes a libc call and leaves with _exit (the chroot helper);
 *  - a seccomp filter that kills the process (SECCOMP_RET_KILL_PROCESS)
 *    for calls the program itself never makes (process_vm_readv and
 *    process_vm_writev, prctl other than PR_SET_NAME, fork-shaped clones,
 *    openat), then threads, a pipe, writes and a clean exit under it.
 * Prints one line per step; run plain and under the shim, the output must
 * be the same.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int tls_child(void *arg)
{
	(void)arg;
	/* a libc call through the shim's hooks, then out without libc's exit */
	getppid();
	_exit(7);
}

static void zeroed_tls_clone(void)
{
	static char stack[64 << 10] __attribute__((aligned(16)));
	static char tls[16 << 10] __attribute__((aligned(64)));
	memset(tls, 0, sizeof(tls));
	pid_t pid = clone(tls_child, stack + sizeof(stack),
			  CLONE_VM | CLONE_VFORK | CLONE_SETTLS | SIGCHLD, NULL, NULL, tls + sizeof(tls) / 2,
			  NULL);
	int st = 0;
	if (pid > 0)
		waitpid(pid, &st, 0);
	printf("zeroed tls child: %s, status %d\n", pid > 0 ? "ran" : strerror(errno),
	       WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
}

#define KILL_IF(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static void filter_in(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_IF(SYS_process_vm_readv),
		KILL_IF(SYS_process_vm_writev),
		KILL_IF(SYS_openat),
		KILL_IF(SYS_fork),
		KILL_IF(SYS_execve),
		/* prctl: only PR_SET_NAME */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)) {
		perror("seccomp");
		exit(1);
	}
	printf("filter in\n");
}

static void *worker(void *arg)
{
	int *fds = arg;
	prctl(PR_SET_NAME, "worker");
	char buf[16];
	ssize_t n = read(fds[0], buf, 3); /* each write is 3 bytes */
	return (void *)(long)n;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	zeroed_tls_clone();
	filter_in();
	int fds[2];
	if (pipe(fds))
		return 1;
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, fds);
	for (int i = 0; i < 4; i++)
		if (write(fds[1], "abc", 3) != 3)
			return 1;
	long got = 0;
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		got += (long)r;
	}
	printf("threads read %ld bytes\n", got);
	/* a periodic flush would be due by now (KPROF_INTERVAL_MS=1) */
	usleep(20000);
	for (int i = 0; i < 100; i++)
		getppid();
	printf("done\n");
	return 3;
}
