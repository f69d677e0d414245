/* SPDX-License-Identifier: MIT */
/*
 * The descriptor kind table (fd_kinds.h): kept up to date from the
 * syscalls that create, duplicate and close descriptors, and completed
 * lazily: a descriptor the shim did not see being made (open at start-up;
 * inside libc: fopen, opendir, popen; or by a plain open(), see below) takes its kind from the program's own fstat of it
 * when that comes first, else from one fstat of the shim's the first time
 * a hooked call uses it. Forgetting an entry is always safe (it costs one
 * fstat later); keeping a wrong one is not, so whatever is uncertain is
 * forgotten rather than guessed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fd_kinds.h"
#include "raw.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

uint8_t kp_fd_kinds[KP_FD_TABLE];
uint64_t kp_fd_arg_bits[KP_SYSCALL_MAX / 64];

static unsigned kind_of_mode(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return KP_KIND_PIPE;
	case S_IFSOCK:
		return KP_KIND_SOCKET;
	case S_IFREG:
	case S_IFDIR:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFLNK:
		return KP_KIND_FILE;
	default:
		/* anonymous inodes (eventfd, epoll, timerfd, signalfd,
		 * inotify, pidfd, ...) have no file type bits */
		return KP_KIND_OTHER;
	}
}

unsigned kp_fd_kind_of(long fd)
{
	struct stat st;
	if (fd < 0 || kp_raw(SYS_fstat, fd, &st) != 0)
		return KP_KIND_NONE;
	return kind_of_mode(st.st_mode);
}

unsigned kp_fd_kind_lazy(long fd)
{
	unsigned kind = kp_fd_kind_of(fd);
	if (kind == KP_KIND_NONE)
		return KP_KIND_OTHER; /* not open: EBADF, and nothing to remember */
	if ((unsigned long)fd < KP_FD_TABLE)
		__atomic_store_n(&kp_fd_kinds[fd], (uint8_t)kind, __ATOMIC_RELAXED);
	return kind;
}

static void set_kind(long fd, unsigned kind)
{
	if ((unsigned long)fd < KP_FD_TABLE)
		__atomic_store_n(&kp_fd_kinds[fd], (uint8_t)kind, __ATOMIC_RELAXED);
}

static void forget(long fd)
{
	set_kind(fd, KP_KIND_NONE);
}

/* Leaves untouched pages of the table untouched (not resident). */
static void forget_range(unsigned long first, unsigned long last)
{
	if (last >= KP_FD_TABLE)
		last = KP_FD_TABLE - 1;
	for (unsigned long fd = first; fd <= last; fd++)
		if (__atomic_load_n(&kp_fd_kinds[fd], __ATOMIC_RELAXED))
			__atomic_store_n(&kp_fd_kinds[fd], 0, __ATOMIC_RELAXED);
}

static void copy_kind(long from, long to)
{
	unsigned kind = (unsigned long)from < KP_FD_TABLE ?
				__atomic_load_n(&kp_fd_kinds[from], __ATOMIC_RELAXED) :
				KP_KIND_NONE;
	set_kind(to, kind);
}

/*
 * open/openat: only what cannot be a FIFO, a socket or a device is known
 * to be a file without asking the inode: a directory, an O_TMPFILE, and a
 * file this call created (O_CREAT|O_EXCL). Anything else is left to one
 * fstat at the first use, so that a FIFO or a device opened by path gets
 * its true kind.
 */
static void opened(long fd, long flags)
{
	if ((flags & O_DIRECTORY) || (flags & O_TMPFILE) == O_TMPFILE ||
	    (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		set_kind(fd, KP_KIND_FILE);
	else
		forget(fd);
}

/* An int the kernel wrote at addr (the program's, maybe unaligned). */
static int int_at(long addr)
{
	int v;
	memcpy(&v, (const void *)addr, sizeof(v));
	return v;
}

/*
 * Descriptors passed in SCM_RIGHTS messages are new here: kinds unknown.
 * The walk reads only the msg_controllen bytes the kernel says it wrote
 * (it rewrites the field on return; the program's buffer may be longer,
 * or end where its memory does). The last cmsg need not be padded: an
 * SCM_RIGHTS of one descriptor is 20 bytes and may fill a 20-byte buffer,
 * so the step to the next header (its length rounded up to 8) can pass
 * the end and is checked as a size before it is taken. A cmsg the kernel
 * cut (MSG_CTRUNC) says how much of it was written: for SCM_RIGHTS
 * exactly the descriptors it installed, and only whole ints are read.
 * Headers are copied out: the buffer need not be aligned.
 */
static void received(const struct msghdr *msg)
{
	if (!msg)
		return;
	const char *p = msg->msg_control;
	size_t left = msg->msg_controllen;
	while (p && left >= sizeof(struct cmsghdr)) {
		struct cmsghdr c;
		memcpy(&c, p, sizeof(c));
		if (c.cmsg_len < sizeof(struct cmsghdr) || c.cmsg_len > left)
			break;
		if (c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_RIGHTS) {
			for (size_t off = CMSG_LEN(0); off + sizeof(int) <= c.cmsg_len;
			     off += sizeof(int))
				forget(int_at((long)(p + off)));
		}
		size_t step = CMSG_ALIGN(c.cmsg_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
}

static void note_close(unsigned nr, const long args[6], long ret)
{
	if (nr == __NR_close) {
		/* closed even when it fails with EINTR or EIO */
		if (ret != -EBADF)
			forget(args[0]);
	} else if (ret == 0 && !((unsigned long)args[2] & CLOSE_RANGE_CLOEXEC)) {
		forget_range((unsigned long)(unsigned)args[0],
			     (unsigned long)(unsigned)args[1]);
	}
}

void kp_fd_kinds_stat(long fd, unsigned mode)
{
	set_kind(fd, kind_of_mode(mode));
}

/*
 * fstatat(fd, "", st, AT_EMPTY_PATH) and statx alike: stat of fd itself.
 * After success only: the kernel read the path's first byte (or took
 * NULL, as it does since 6.11 with AT_EMPTY_PATH).
 */
static bool of_fd_itself(long path, long flags)
{
	return (flags & AT_EMPTY_PATH) && (!path || !*(const char *)path);
}

void kp_fd_kinds_note(unsigned nr, const long args[6], long ret)
{
	if (nr == __NR_close || nr == __NR_close_range) {
		note_close(nr, args, ret);
		return;
	}
	if (ret < 0)
		return;
	/* the cases: KP_FD_NOTED (fd_kinds.h), the hooks call only for those */
	switch (nr) {
#ifdef __NR_open
	case __NR_open:
		opened(ret, args[1]);
		break;
#endif
	case __NR_openat:
		opened(ret, args[2]);
		break;
#ifdef __NR_creat
	case __NR_creat:
#endif
	case __NR_open_by_handle_at:
	case __NR_mq_open:
	case __NR_bpf:
	case __NR_seccomp:
#ifdef __NR_openat2
	case __NR_openat2:
#endif
#ifdef __NR_open_tree
	case __NR_open_tree:
	case __NR_fsopen:
	case __NR_fsmount:
	case __NR_fspick:
#endif
#ifdef __NR_pidfd_getfd
	case __NR_pidfd_getfd:
#endif
#ifdef __NR_memfd_secret
	case __NR_memfd_secret:
#endif
#ifdef __NR_landlock_create_ruleset
	case __NR_landlock_create_ruleset:
#endif
		/* a descriptor of some kind, or (bpf, seccomp, landlock) a
		 * plain number: either way nothing stale may stay */
		forget(ret);
		break;
	case __NR_memfd_create:
		set_kind(ret, KP_KIND_FILE);
		break;
#ifdef __NR_pipe
	case __NR_pipe:
#endif
	case __NR_pipe2:
		/* ret 0: the kernel wrote both (it fails the call if it cannot) */
		set_kind(int_at(args[0]), KP_KIND_PIPE);
		set_kind(int_at(args[0] + (long)sizeof(int)), KP_KIND_PIPE);
		break;
	case __NR_socketpair:
		set_kind(int_at(args[3]), KP_KIND_SOCKET);
		set_kind(int_at(args[3] + (long)sizeof(int)), KP_KIND_SOCKET);
		break;
	case __NR_socket:
	case __NR_accept:
	case __NR_accept4:
		set_kind(ret, KP_KIND_SOCKET);
		break;
#ifdef __NR_eventfd
	case __NR_eventfd:
#endif
#ifdef __NR_epoll_create
	case __NR_epoll_create:
#endif
#ifdef __NR_signalfd
	case __NR_signalfd:
#endif
#ifdef __NR_inotify_init
	case __NR_inotify_init:
#endif
	case __NR_eventfd2:
	case __NR_epoll_create1:
	case __NR_timerfd_create:
	case __NR_signalfd4:
	case __NR_inotify_init1:
	case __NR_fanotify_init:
	case __NR_userfaultfd:
	case __NR_perf_event_open:
	case __NR_io_uring_setup:
#ifdef __NR_pidfd_open
	case __NR_pidfd_open:
#endif
		set_kind(ret, KP_KIND_OTHER);
		break;
	/*
	 * The program's own fstat of a descriptor tells its kind for free
	 * (open, then fstat, then read: the usual sequence); the buffer is
	 * read after success only, when the kernel has written all of it
	 */
	case __NR_fstat:
		kp_fd_kinds_stat(args[0], ((const struct stat *)args[1])->st_mode);
		break;
	case __NR_newfstatat:
		if (of_fd_itself(args[1], args[3]))
			kp_fd_kinds_stat(args[0], ((const struct stat *)args[2])->st_mode);
		break;
	case __NR_statx: {
		const struct statx *stx = (const struct statx *)args[4];
		if (of_fd_itself(args[1], args[2]) && (stx->stx_mask & STATX_TYPE))
			kp_fd_kinds_stat(args[0], stx->stx_mode);
		break;
	}
	case __NR_dup:
		copy_kind(args[0], ret);
		break;
#ifdef __NR_dup2
	case __NR_dup2:
#endif
	case __NR_dup3:
		if (args[0] != args[1])
			copy_kind(args[0], ret);
		break;
	case __NR_fcntl:
		if (args[1] == F_DUPFD || args[1] == F_DUPFD_CLOEXEC)
			copy_kind(args[0], ret);
		break;
	case __NR_recvmsg:
		/* it succeeded: the kernel read the msghdr and wrote into it */
		received((const struct msghdr *)args[1]);
		break;
	case __NR_recvmmsg: {
		/* only the first ret entries were filled (each its own
		 * msg_controllen); the others hold what the program left */
		const struct mmsghdr *v = (const struct mmsghdr *)args[1];
		unsigned long filled = (unsigned long)ret;
		if (filled > (unsigned long)(unsigned)args[2])
			filled = (unsigned)args[2];
		for (unsigned long i = 0; v && i < filled; i++)
			received(&v[i].msg_hdr);
		break;
	}
	case __NR_clone:
		/* the parent gets a pidfd at parent_tid (args[2] on x86_64
		 * and aarch64 alike); the call fails if it cannot be written */
		if (ret > 0 && ((unsigned long)args[0] & CLONE_PIDFD) && args[2])
			set_kind(int_at(args[2]), KP_KIND_OTHER);
		break;
	case __NR_clone3: {
		/* struct clone_args: flags, then the pidfd pointer; a parent's
		 * success means the kernel read args[1] >= 64 bytes of it and
		 * wrote the pidfd */
		uint64_t ca[2];
		if (ret > 0 && args[0] && (unsigned long)args[1] >= sizeof(ca)) {
			memcpy(ca, (const void *)args[0], sizeof(ca));
			if ((ca[0] & CLONE_PIDFD) && ca[1])
				set_kind(int_at((long)ca[1]), KP_KIND_OTHER);
		}
		break;
	}
	default:
		break;
	}
}

int kp_fd_scan(void (*fn)(void *ctx, int fd, unsigned kind), void *ctx)
{
	long dfd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/fd",
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return (int)dfd;
	char buf[4096];
	for (;;) {
		long n = kp_raw(SYS_getdents64, dfd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			long fd = 0;
			for (const char *p = d->d_name; *p; p++)
				fd = fd * 10 + (*p - '0');
			if (fd == dfd)
				continue;
			/* the kind the table knows (from the call that made it),
			 * else the descriptor's own: one fstat each */
			unsigned kind = fd < KP_FD_TABLE ? __atomic_load_n(&kp_fd_kinds[fd],
									 __ATOMIC_RELAXED)
							 : KP_KIND_NONE;
			if (kind == KP_KIND_NONE)
				kind = kp_fd_kind_of(fd);
			if (kind != KP_KIND_NONE)
				fn(ctx, (int)fd, kind);
		}
	}
	kp_raw(SYS_close, dfd);
	return 0;
}

/*
 * The descriptors open at start are classified at their first use, as
 * those made inside libc are: a scan of /proc/self/fd here cost an open,
 * two getdents64 and an fstat per descriptor in every process image,
 * most of them never used (a shell's 0, 1 and 2 in /bin/true).
 */
void kp_fd_kinds_init(void)
{
	kp_syscall_fd_arg_bits(NULL, kp_fd_arg_bits, KP_SYSCALL_MAX);
}
