/* SPDX-License-Identifier: MIT */
/*
 * Trace destinations shared by the two producers (trace_dest.h). Only
 * string functions of libc that make no syscall are used here: the shim
 * calls this from its output process, where libc must not be entered.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "trace_dest.h"

long kp_dest_libc_sys(long nr, long a1, long a2, long a3, long a4, long a5,
		      long a6)
{
	long r = syscall(nr, a1, a2, a3, a4, a5, a6);
	return r == -1 ? -errno : r;
}

#define SYS(nr, a1, a2, a3, a4)                                                \
	sys((nr), (long)(a1), (long)(a2), (long)(a3), (long)(a4), 0, 0)

/* Appends s to dst (cap bytes); false when it does not fit. */
static bool append(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(dst), m = strlen(s);
	if (n + m >= cap)
		return false;
	memcpy(dst + n, s, m + 1);
	return true;
}

static bool append_u64(char *dst, size_t cap, uint64_t v)
{
	char buf[24];
	char *p = buf + sizeof(buf) - 1;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return append(dst, cap, p);
}

int kp_dest_mkdir(kp_dest_sys_fn sys, const char *dir)
{
	char tmp[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != 0)
			continue;
		char c = tmp[i];
		tmp[i] = 0;
		long err = SYS(SYS_mkdirat, AT_FDCWD, tmp, 0700, 0);
		if (err && err != -EEXIST)
			return (int)err;
		if (!err) /* the program's umask (0777...) must not lock us out */
			SYS(SYS_fchmodat, AT_FDCWD, tmp, 0700, 0);
		tmp[i] = c;
	}
	return 0;
}

int kp_dest_check_dir(kp_dest_sys_fn sys, const char *dir, long also_uid)
{
	long fd = SYS(SYS_openat, AT_FDCWD, dir,
		      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	struct stat st;
	long euid = SYS(SYS_geteuid, 0, 0, 0, 0);
	if (fd == -ELOOP || fd == -ENOTDIR) { /* O_DIRECTORY: a link says ENOTDIR */
		if (SYS(SYS_newfstatat, AT_FDCWD, dir, &st, AT_SYMLINK_NOFOLLOW))
			return (int)fd;
		if (!S_ISLNK(st.st_mode))
			return -ENOTDIR;
		if ((long)st.st_uid != euid && (also_uid < 0 || (long)st.st_uid != also_uid))
			return -ELOOP;
		fd = SYS(SYS_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return (int)fd;
	long err = SYS(SYS_fstat, fd, &st, 0, 0);
	SYS(SYS_close, fd, 0, 0, 0);
	if (err)
		return (int)err;
	if ((long)st.st_uid != euid && st.st_uid != 0 &&
	    (also_uid < 0 || (long)st.st_uid != also_uid))
		return -EPERM;
	return 0;
}

bool kp_dest_head(char *head, size_t cap, const char *dir, const char *exe,
		  uint64_t pid)
{
	const char *base = exe ? strrchr(exe, '/') : NULL;
	base = base ? base + 1 : (exe ? exe : "");
	if (!*base)
		base = "unknown";
	if (!cap)
		return false;
	head[0] = 0;
	return append(head, cap, dir) && append(head, cap, "/") &&
	       append(head, cap, base) && append(head, cap, ".") &&
	       append_u64(head, cap, pid);
}

int kp_dest_create(kp_dest_sys_fn sys, char *path, size_t cap, const char *head,
		   bool dot_zero, const char *suffix)
{
	for (unsigned n = 0; n < KP_DEST_NAMES; n++) {
		if (!cap)
			return -ENAMETOOLONG;
		path[0] = 0;
		bool fits = append(path, cap, head);
		if (n || dot_zero)
			fits = fits && append(path, cap, ".") && append_u64(path, cap, n);
		if (!fits || !append(path, cap, suffix))
			return -ENAMETOOLONG;
		long fd = SYS(SYS_openat, AT_FDCWD, path,
			      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd == -EEXIST)
			continue;
		if (fd >= 0) /* 0600 whatever the program's umask */
			SYS(SYS_fchmod, fd, 0600, 0, 0);
		return (int)fd;
	}
	return -EEXIST;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *kp_dest_suffix(const char *name)
{
	return ends_with(name, ".msgpack.gz") ? ".msgpack.gz" :
	       ends_with(name, ".msgpack")    ? ".msgpack" :
	       ends_with(name, ".gz")	      ? ".gz" : "";
}

int kp_dest_connect(kp_dest_sys_fn sys, const char *path, long also_uid)
{
	struct sockaddr_un sa;
	size_t n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	long fd = SYS(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0);
	if (fd < 0)
		return (int)fd;
	long err = SYS(SYS_connect, fd, &sa, sizeof(sa), 0);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (!err)
		err = sys(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, (long)&cred,
			  (long)&len, 0);
	if (!err && cred.uid != 0 && (long)cred.uid != SYS(SYS_geteuid, 0, 0, 0, 0) &&
	    (also_uid < 0 || (long)cred.uid != also_uid))
		err = -EPERM;
	if (err) {
		SYS(SYS_close, fd, 0, 0, 0);
		return (int)err;
	}
	return (int)fd;
}
