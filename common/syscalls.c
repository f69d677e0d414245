/* SPDX-License-Identifier: MIT */
/* Lookups over the generated per-architecture syscall tables. */
#include <stddef.h>
#include <string.h>

#include "syscalls.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const char *kp_host_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#else
#error "kprof: unsupported architecture (add a table in scripts/gen-syscalls.sh)"
#endif
}

const struct kp_syscall_entry *kp_syscall_table(const char *arch,
						unsigned *count)
{
	if (!arch || !*arch)
		arch = kp_host_arch();
	if (strcmp(arch, "x86_64") == 0) {
		*count = kp_syscalls_x86_64_count;
		return kp_syscalls_x86_64;
	}
	if (strcmp(arch, "aarch64") == 0) {
		*count = kp_syscalls_aarch64_count;
		return kp_syscalls_aarch64;
	}
	*count = 0;
	return NULL;
}

const char *kp_syscall_name(const char *arch, unsigned nr)
{
	unsigned count;
	const struct kp_syscall_entry *t = kp_syscall_table(arch, &count);
	for (unsigned i = 0; t && i < count; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

int kp_syscall_nr(const char *arch, const char *name)
{
	unsigned count;
	const struct kp_syscall_entry *t = kp_syscall_table(arch, &count);
	for (unsigned i = 0; t && i < count; i++)
		if (strcmp(t[i].name, name) == 0)
			return (int)t[i].nr;
	return -1;
}

/* Syscalls whose first argument is a descriptor (names as on x86_64;
 * those an architecture lacks are skipped). */
static const char *const fd_arg_names[] = {
	"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv",
	"pwritev", "preadv2", "pwritev2", "lseek", "close", "fsync",
	"fdatasync", "ftruncate", "fcntl", "ioctl", "flock", "fstat",
	"fstatfs", "getdents", "getdents64", "fchmod", "fchown", "fchdir",
	"fallocate", "fadvise64", "sync_file_range", "readahead", "syncfs",
	"sendfile", "splice", "tee", "vmsplice", "copy_file_range",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"accept", "accept4", "connect", "bind", "listen", "shutdown",
	"getsockopt", "setsockopt", "getsockname", "getpeername",
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl", "dup",
	"dup2", "dup3", "fsetxattr", "fgetxattr", "flistxattr",
	"fremovexattr", "inotify_add_watch", "inotify_rm_watch",
	"timerfd_settime", "timerfd_gettime", "fanotify_mark",
};

/*
 * Syscalls whose EAGAIN (EWOULDBLOCK is the same value on Linux) means
 * "the call would have blocked": a non-blocking descriptor, a lock or IPC
 * attempt that does not wait. Only these count a `retries`; any other
 * EAGAIN is an error of its errno (docs/FORMAT.md, `retries`, has the list
 * with the reasons and what is left out). Names as on x86_64; those an
 * architecture lacks (open on aarch64) are skipped. The descriptor's kind
 * does not change the answer: on every kind these calls return EAGAIN for
 * (pipes, sockets, FIFOs, ttys, eventfd, timerfd, signalfd, inotify; a
 * regular file only with RWF_NOWAIT or under a lease) it is a would-block.
 */
static const char *const would_block_names[] = {
	/* O_NONBLOCK descriptors, MSG_DONTWAIT, RWF_NOWAIT */
	"read", "readv", "pread64", "preadv", "preadv2",
	"write", "writev", "pwrite64", "pwritev", "pwritev2",
	"recvfrom", "recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg",
	"sendfile", "splice", "tee", "vmsplice", /* also SPLICE_F_NONBLOCK */
	"accept", "accept4",
	/* a unix socket's full backlog (inet: no free local port, see FORMAT.md) */
	"connect",
	/* O_NONBLOCK open of a file under a conflicting lease; RESOLVE_CACHED */
	"open", "openat", "openat2",
	/* lock attempts: F_SETLK, F_OFD_SETLK, F_SETLEASE; flock LOCK_NB */
	"fcntl", "flock",
	/* IPC_NOWAIT (semtimedop's expired timeout is EAGAIN too); O_NONBLOCK queues */
	"msgsnd", "semop", "semtimedop", "mq_timedsend", "mq_timedreceive",
	/* GRND_NONBLOCK before the pool is initialized */
	"getrandom",
};

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

bool kp_syscall_fd_arg(const char *arch, unsigned nr)
{
	const char *name = kp_syscall_name(arch, nr);
	return name && listed(fd_arg_names, ARRAY_LEN(fd_arg_names), name);
}

bool kp_syscall_would_block(const char *arch, unsigned nr)
{
	const char *name = kp_syscall_name(arch, nr);
	return name && listed(would_block_names, ARRAY_LEN(would_block_names), name);
}

const char *const *kp_syscall_would_block_names(unsigned *count)
{
	*count = ARRAY_LEN(would_block_names);
	return would_block_names;
}

/* Index of name in the table t (sorted by strcmp), or -1. */
static int find_sorted(const struct kp_syscall_entry *t, unsigned count,
		       const char *name)
{
	unsigned lo = 0, hi = count;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int c = strcmp(t[mid].name, name);
		if (c == 0)
			return (int)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Bit nr of bits (nbits numbers) for each of names that arch has. */
static void names_to_bits(const char *arch, const char *const *names, size_t n,
			  uint64_t *bits, unsigned nbits)
{
	unsigned count;
	const struct kp_syscall_entry *t = kp_syscall_table(arch, &count);
	for (unsigned i = 0; i < (nbits + 63) / 64; i++)
		bits[i] = 0;
	if (!t)
		return;
	/* The generated tables come sorted by name unless sort(1) ran in a
	 * locale that orders '_' differently: then the slow way. */
	bool sorted = true;
	for (unsigned i = 1; i < count && sorted; i++)
		sorted = strcmp(t[i - 1].name, t[i].name) < 0;
	for (size_t k = 0; k < n; k++) {
		int i = sorted ? find_sorted(t, count, names[k]) : -1;
		unsigned nr;
		if (i >= 0)
			nr = t[i].nr;
		else if (sorted || kp_syscall_nr(arch, names[k]) < 0)
			continue;
		else
			nr = (unsigned)kp_syscall_nr(arch, names[k]);
		if (nr < nbits)
			bits[nr / 64] |= 1ull << (nr % 64);
	}
}

void kp_syscall_fd_arg_bits(const char *arch, uint64_t *bits, unsigned nbits)
{
	names_to_bits(arch, fd_arg_names, ARRAY_LEN(fd_arg_names), bits, nbits);
}

void kp_syscall_would_block_bits(const char *arch, uint64_t *bits, unsigned nbits)
{
	names_to_bits(arch, would_block_names, ARRAY_LEN(would_block_names), bits,
		      nbits);
}
