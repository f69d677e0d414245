/* SPDX-License-Identifier: MIT */
/*
 * The bottom of the shim, below every other file: the process-wide state
 * (configuration, filled once by lifecycle/init.c; what the process is), messages on
 * stderr, and the small files the shim reads itself (/proc), all with raw
 * syscalls. Nothing here calls up into the rest of the shim.
 */
#include <fcntl.h>
#include <string.h>

#include "base.h"

struct kp_config kp_config;
struct kp_proc kp_proc;

void kp_write_stderr(const char *s)
{
	kp_raw(SYS_write, 2, s, strlen(s));
}

void kp_debug(const char *msg)
{
	if (!kp_config.debug)
		return;
	kp_write_stderr("kprof: ");
	kp_write_stderr(msg);
	kp_write_stderr("\n");
}

ssize_t kp_read_file(const char *path, char *buf, size_t cap)
{
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fd;
	size_t len = 0;
	while (len < cap) {
		long n = kp_raw(SYS_read, fd, buf + len, cap - len);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	kp_raw(SYS_close, fd);
	return (ssize_t)len;
}

long kp_read_proc_stat(uint64_t pid, char *buf, size_t cap)
{
	char path[40] = "/proc/", num[24];
	strcat(path, kp_u64_dec(num, pid));
	strcat(path, "/stat");
	ssize_t n = kp_read_file(path, buf, cap - 1);
	if (n <= 0)
		return n < 0 ? (long)n : -EIO;
	buf[n] = 0;
	return (long)n;
}

/*
 * pid and ppid, as the program's getpid and getppid see them (two calls:
 * reading /proc/self/stat instead took 4 calls and, right after an exec,
 * about 1 ms on a 2-vCPU KVM guest).
 */
int kp_read_pids(uint64_t *pid, uint64_t *ppid)
{
	*pid = (uint64_t)kp_raw0(SYS_getpid);
	*ppid = (uint64_t)kp_raw0(SYS_getppid);
	return 0;
}

void kp_learn_pids(void)
{
	if (!kp_proc.pid)
		kp_proc.pid = (uint64_t)kp_raw0(SYS_getpid);
	if (!kp_proc.ppid)
		kp_proc.ppid = (uint64_t)kp_raw0(SYS_getppid);
}

void kp_read_line_file(const char *path, char *dst, size_t cap)
{
	ssize_t n = kp_read_file(path, dst, cap - 1);
	if (n < 0)
		n = 0;
	dst[n] = 0;
	char *nl = strchr(dst, '\n');
	if (nl)
		*nl = 0;
}

/*
 * True in a clone(CLONE_VM) child that shares our memory, TLS included: it
 * is told apart only by its pid. One syscall, asked only on exec and exit
 * paths and only once such a child was made.
 */
bool kp_foreign_process(void)
{
	if (!__atomic_load_n(&kp_proc.shared_vm, __ATOMIC_ACQUIRE) || !kp_proc.pid)
		return false;
	return (uint64_t)kp_raw0(SYS_getpid) != kp_proc.pid;
}
