/* SPDX-License-Identifier: MIT */
/*
 * The program memory the shim reads after a call, each walk with a
 * buffer that ends where a PROT_NONE page begins and each pointer also
 * bad where the kernel answers EFAULT:
 *   recvmsg, recvmmsg  SCM_RIGHTS, SCM_CREDENTIALS and IP_TTL cmsgs whose
 *                      length is not a multiple of 8 at the very end of
 *                      the control buffer (the issue: a 20-byte
 *                      SCM_RIGHTS in a 20-byte buffer), truncated ones
 *                      (MSG_CTRUNC), entries recvmmsg did not fill
 *   pipe, pipe2, socketpair, fstat, fstatat, statx   their result buffers
 *   clone, clone3      clone_args and its size, the pidfd, a child stack
 *   execve, posix_spawn  path, argv, envp and its strings
 *   readv, writev, bind, connect, getsockname, openat  iovecs, sockaddrs,
 *                      paths (read by the kernel only)
 *   mmap, mprotect     executable mappings partly beyond their file's end
 *                      (rewrite mode scans new code)
 * One line per case with what the call returned: the output must be the
 * same plain and under the shim in both hook modes, byte for byte
 * (tests/t_shim_guard_walks.sh); the last but one line counts the calls
 * of each syscall made, for the trace. Exit 1 when a result is not the
 * one this kernel gives.
 * Usage: guard_walks [-n] [GROUP...] (main() lists the groups)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static size_t page;
static int bad_results;
/* -n: leave out the calls whose answer depends on address 0 being unmapped
 * (the kernel reads there; rewrite mode maps it, readable unless protection
 * keys make it execute-only) */
static bool no_null_reads;

/* calls made per syscall (also through syscall()); clone3_raw: made with
 * the program's own instruction, which symbol mode cannot see */
static unsigned n_recvmsg, n_recvmmsg, n_sendmsg, n_pipe2, n_socketpair, n_statx,
	n_clone, n_clone3, n_clone3_raw, n_execve, n_spawn;

/* n bytes that end exactly where a PROT_NONE page begins */
static void *guard_end(size_t n)
{
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + page, page, PROT_NONE)) {
		perror("guard_walks: mmap");
		exit(2);
	}
	memset(p, 0xa5, page);
	return p + page - n;
}

/* an address in a PROT_NONE page: EFAULT for the kernel */
static void *bad_ptr(void)
{
	return (char *)guard_end(0) + 64;
}

/* a NUL-terminated copy of s whose NUL is the last readable byte */
static char *guard_str(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(guard_end(n), s, n);
}

/* s without its NUL, ending at the PROT_NONE page: EFAULT for the kernel */
static char *guard_unterminated(const char *s)
{
	size_t n = strlen(s);
	return memcpy(guard_end(n), s, n);
}

/* One case's result: ret, errno when it failed; want_err 0: must succeed. */
static void result(const char *what, long ret, int want_err, const char *more)
{
	int e = ret < 0 ? errno : 0;
	if (more && !more[0])
		more = NULL;
	if (ret < 0)
		printf("%s: -1 %s%s%s\n", what, strerrorname_np(e) ? strerrorname_np(e) : "?",
		       more ? " " : "", more ? more : "");
	else
		printf("%s: ok%s%s\n", what, more ? " " : "", more ? more : "");
	if ((want_err && (ret >= 0 || e != want_err)) || (!want_err && ret < 0)) {
		printf("BAD %s: wanted %s\n", what, want_err ? strerrorname_np(want_err) : "success");
		bad_results++;
	}
}

static void expect(const char *what, int ok)
{
	if (!ok) {
		printf("BAD %s\n", what);
		bad_results++;
	}
}

static __attribute__((noreturn)) void raw_exit(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("syscall" : : "a"(SYS_exit_group), "D"(0) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_exit_group;
	register long x0 __asm__("x0") = 0;
	__asm__ __volatile__("svc 0" : : "r"(x8), "r"(x0) : "memory");
#endif
	__builtin_unreachable();
}

/* ---- cmsgs ---- */

static int devnull;

/* one byte with nfds copies of /dev/null (SCM_RIGHTS) */
static void send_fds(int sock, int nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		for (int i = 0; i < nfds; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &devnull, sizeof(int));
	}
	n_sendmsg++;
	if (sendmsg(sock, &msg, 0) != 1) {
		perror("guard_walks: sendmsg");
		exit(2);
	}
}

/*
 * What the kernel wrote into msg's control buffer, walked with every read
 * inside the msg_controllen bytes it reported (the buffer may be
 * unaligned: headers are copied out); the descriptors received are closed.
 */
static void describe_cmsgs(const struct msghdr *msg, char *out, size_t cap)
{
	const char *p = msg->msg_control;
	size_t left = msg->msg_controllen, hdr = sizeof(struct cmsghdr);
	int n = 0, fds = 0, len = snprintf(out, cap, "controllen=%zu ctrunc=%d",
					  left, !!(msg->msg_flags & MSG_CTRUNC));
	while (p && left >= hdr) {
		struct cmsghdr c;
		memcpy(&c, p, hdr);
		if (c.cmsg_len < hdr || c.cmsg_len > left)
			break;
		n++;
		len += snprintf(out + len, cap - (size_t)len, " [%d/%d len=%zu]", c.cmsg_level,
				c.cmsg_type, (size_t)c.cmsg_len);
		if (c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_RIGHTS) {
			for (size_t off = hdr; off + sizeof(int) <= c.cmsg_len; off += sizeof(int)) {
				int fd;
				memcpy(&fd, p + off, sizeof(int));
				expect("received descriptor is open", fcntl(fd, F_GETFD) >= 0);
				close(fd);
				fds++;
			}
		}
		size_t step = CMSG_ALIGN(c.cmsg_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	snprintf(out + len, cap - (size_t)len, " cmsgs=%d fds=%d", n, fds);
}

/* One recvmsg of one byte; control_len bytes of control buffer at a guard. */
static void recv_case(const char *what, int sock, size_t control_len, bool via_syscall)
{
	char *data = guard_end(1);
	struct iovec *iov = guard_end(sizeof(*iov));
	struct msghdr *msg = guard_end(sizeof(*msg));
	*iov = (struct iovec){ data, 1 };
	*msg = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 1 };
	if (control_len) {
		msg->msg_control = guard_end(control_len);
		msg->msg_controllen = control_len;
	}
	n_recvmsg++;
	long r = via_syscall ? syscall(SYS_recvmsg, sock, msg, 0) : recvmsg(sock, msg, 0);
	char more[512] = "";
	if (r >= 0)
		describe_cmsgs(msg, more, sizeof(more));
	result(what, r, 0, more);
}

static void unix_pair(int type, int sv[2])
{
	n_socketpair++;
	if (socketpair(AF_UNIX, type, 0, sv)) {
		perror("guard_walks: socketpair");
		exit(2);
	}
}

static void cmsg_cases(void)
{
	int sv[2];
	unix_pair(SOCK_DGRAM, sv);
	/* the issue: CMSG_LEN(sizeof(int)) == 20 bytes, in a 20-byte buffer */
	send_fds(sv[0], 1);
	recv_case("recvmsg rights 20 in 20", sv[1], CMSG_LEN(sizeof(int)), false);
	send_fds(sv[0], 1);
	recv_case("syscall(recvmsg) rights 20 in 20", sv[1], CMSG_LEN(sizeof(int)), true);
	/* two descriptors, room for one: the kernel installs one (MSG_CTRUNC) */
	send_fds(sv[0], 2);
	recv_case("recvmsg rights 2 in 20", sv[1], 20, false);
	/* room for one and a half: controllen 22, cmsg_len 20 */
	send_fds(sv[0], 2);
	recv_case("recvmsg rights 2 in 22", sv[1], 22, false);
	/* room for none */
	send_fds(sv[0], 1);
	recv_case("recvmsg rights 1 in 16", sv[1], 16, false);
	send_fds(sv[0], 3);
	recv_case("recvmsg rights 3 in 28", sv[1], 28, false);
	/* a big buffer: one cmsg written, controllen 24 (with its padding) */
	send_fds(sv[0], 1);
	recv_case("recvmsg rights 1 in 4096", sv[1], 4096, false);
	/* no descriptors: nothing written */
	send_fds(sv[0], 0);
	recv_case("recvmsg no cmsg in 20", sv[1], 20, false);

	/* a control pointer the kernel cannot write: it drops the descriptor */
	send_fds(sv[0], 1);
	{
		char byte;
		struct iovec iov = { &byte, 1 };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = bad_ptr(), .msg_controllen = 20 };
		n_recvmsg++;
		long r = recvmsg(sv[1], &msg, 0);
		char more[64];
		snprintf(more, sizeof(more), "controllen=%zu ctrunc=%d", (size_t)msg.msg_controllen,
			 !!(msg.msg_flags & MSG_CTRUNC));
		result("recvmsg control in PROT_NONE", r, 0, more);
	}
	/* the msghdr itself, then its iovec, in a PROT_NONE page */
	send_fds(sv[0], 1);
	n_recvmsg++;
	result("recvmsg msghdr in PROT_NONE", recvmsg(sv[1], bad_ptr(), 0), EFAULT, NULL);
	n_recvmsg++;
	result("syscall(recvmsg) msghdr in PROT_NONE", syscall(SYS_recvmsg, sv[1], bad_ptr(), 0),
	       EFAULT, NULL);
	{
		struct msghdr msg = { .msg_iov = bad_ptr(), .msg_iovlen = 1,
				      .msg_control = guard_end(20), .msg_controllen = 20 };
		n_recvmsg++;
		result("recvmsg iovec in PROT_NONE", recvmsg(sv[1], &msg, 0), EFAULT, NULL);
	}
	/* the datagram is still queued: take it and its descriptor */
	recv_case("recvmsg rights 20 in 20, again", sv[1], 20, false);
	close(sv[0]);
	close(sv[1]);

	/* SCM_CREDENTIALS (28 bytes, 32 with padding), then SCM_RIGHTS */
	unix_pair(SOCK_DGRAM, sv);
	int on = 1;
	if (setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
		perror("guard_walks: SO_PASSCRED");
		exit(2);
	}
	send_fds(sv[0], 1);
	recv_case("recvmsg creds and rights in 52", sv[1], CMSG_SPACE(sizeof(struct ucred)) + 20,
		  false);
	/* creds cut to 20 bytes (cmsg_len 20), the descriptor dropped */
	send_fds(sv[0], 1);
	recv_case("recvmsg creds cut in 20", sv[1], 20, false);
	send_fds(sv[0], 1);
	recv_case("syscall(recvmsg) creds cut in 36", sv[1], 36, true);
	send_fds(sv[0], 0);
	recv_case("recvmsg creds in 28", sv[1], 28, false);
	close(sv[0]);
	close(sv[1]);

	/* IP_TTL over UDP (the shape of Python's RFC 3542 tests): 20 bytes */
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(u, (struct sockaddr *)&a, &alen) ||
	    setsockopt(u, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on))) {
		perror("guard_walks: udp");
		exit(2);
	}
	for (int i = 0; i < 3; i++)
		if (sendto(u, "y", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1) {
			perror("guard_walks: sendto");
			exit(2);
		}
	recv_case("recvmsg udp ttl 20 in 20", u, CMSG_LEN(sizeof(int)), false);
	recv_case("recvmsg udp ttl cut in 18", u, 18, false);
	recv_case("syscall(recvmsg) udp ttl 20 in 24", u, 24, true);
	close(u);
}

/* ---- recvmmsg ---- */

/* vlen entries at a guard, each with a control buffer of control_len at
 * a guard; the entries from queued on are never filled and hold garbage:
 * a control pointer into PROT_NONE and a huge msg_controllen */
static void recvmmsg_case(const char *what, int sock, unsigned vlen, unsigned queued,
			  size_t control_len, bool via_syscall)
{
	struct mmsghdr *v = guard_end(vlen * sizeof(*v));
	for (unsigned i = 0; i < vlen; i++) {
		struct iovec *iov = guard_end(sizeof(*iov));
		*iov = (struct iovec){ guard_end(1), 1 };
		v[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = iov, .msg_iovlen = 1 } };
		v[i].msg_hdr.msg_control = i < queued ? guard_end(control_len) : bad_ptr();
		v[i].msg_hdr.msg_controllen = i < queued ? control_len : 1 << 20;
	}
	n_recvmmsg++;
	long r = via_syscall ? syscall(SYS_recvmmsg, sock, v, vlen, MSG_DONTWAIT, NULL)
			     : recvmmsg(sock, v, vlen, MSG_DONTWAIT, NULL);
	char more[1024] = "";
	size_t len = 0;
	for (long i = 0; i < r && len < sizeof(more) - 200; i++) {
		len += (size_t)snprintf(more + len, sizeof(more) - len, "%s#%ld ", i ? " " : "", i);
		describe_cmsgs(&v[i].msg_hdr, more + len, sizeof(more) - len);
		len = strlen(more);
	}
	result(what, r, 0, more);
	expect("recvmmsg filled what was queued", r == (long)queued);
}

static void recvmmsg_cases(void)
{
	int sv[2];
	unix_pair(SOCK_DGRAM, sv);
	send_fds(sv[0], 1);
	send_fds(sv[0], 1);
	recvmmsg_case("recvmmsg 2 x rights 20 in 20", sv[1], 2, 2, 20, false);
	send_fds(sv[0], 1);
	send_fds(sv[0], 2);
	recvmmsg_case("syscall(recvmmsg) 2 x rights in 20", sv[1], 2, 2, 20, true);
	/* room for 4, 2 queued: entries 2 and 3 stay as they were */
	send_fds(sv[0], 2);
	send_fds(sv[0], 1);
	recvmmsg_case("recvmmsg 2 of 4 in 22", sv[1], 4, 2, 22, false);
	send_fds(sv[0], 1);
	recvmmsg_case("recvmmsg 1 of 3 in 20", sv[1], 3, 1, 20, false);
	send_fds(sv[0], 1);
	n_recvmmsg++;
	result("recvmmsg vector in PROT_NONE",
	       recvmmsg(sv[1], bad_ptr(), 2, MSG_DONTWAIT, NULL), EFAULT, NULL);
	/* the datagram stays queued */
	recvmmsg_case("recvmmsg 1 of 1 in 20", sv[1], 1, 1, 20, false);
	close(sv[0]);
	close(sv[1]);
}

/* ---- results written into the caller's memory ---- */

static void close_pair(long r, const int *fds)
{
	if (r == 0) {
		close(fds[0]);
		close(fds[1]);
	}
}

static void pair_cases(void)
{
	int *fds = guard_end(2 * sizeof(int));
	n_pipe2++;
	long r = pipe2(fds, O_CLOEXEC);
	result("pipe2 at a guard", r, 0, NULL);
	close_pair(r, fds);
	n_pipe2++;
	r = syscall(SYS_pipe2, fds, 0);
	result("syscall(pipe2) at a guard", r, 0, NULL);
	close_pair(r, fds);
	n_pipe2++;
	r = pipe(fds);
	result("pipe at a guard", r, 0, NULL);
	close_pair(r, fds);
	n_pipe2++;
	result("pipe2 in PROT_NONE", pipe2(bad_ptr(), 0), EFAULT, NULL);
	n_pipe2++;
	result("pipe in PROT_NONE", pipe(bad_ptr()), EFAULT, NULL);
	n_pipe2++;
	result("syscall(pipe2) in PROT_NONE", syscall(SYS_pipe2, bad_ptr(), 0), EFAULT, NULL);
	/* room for one of the two descriptors */
	n_pipe2++;
	result("pipe2 half at a guard", pipe2(guard_end(sizeof(int)), 0), EFAULT, NULL);
	n_pipe2++;
	result("pipe2 NULL", pipe2(NULL, 0), EFAULT, NULL);

	n_socketpair++;
	r = socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
	result("socketpair at a guard", r, 0, NULL);
	close_pair(r, fds);
	n_socketpair++;
	result("socketpair in PROT_NONE", socketpair(AF_UNIX, SOCK_STREAM, 0, bad_ptr()), EFAULT,
	       NULL);
	n_socketpair++;
	result("socketpair half at a guard",
	       socketpair(AF_UNIX, SOCK_STREAM, 0, guard_end(sizeof(int))), EFAULT, NULL);
}

static void stat_cases(void)
{
	struct stat *st = guard_end(sizeof(*st));
	result("fstat at a guard", fstat(devnull, st), 0, NULL);
	expect("fstat: a character device", S_ISCHR(st->st_mode));
	result("syscall(fstat) at a guard", syscall(SYS_fstat, devnull, st), 0, NULL);
	result("fstat in PROT_NONE", fstat(devnull, bad_ptr()), EFAULT, NULL);
	result("syscall(fstat) in PROT_NONE", syscall(SYS_fstat, devnull, bad_ptr()), EFAULT, NULL);
	result("fstat cut by a guard", fstat(devnull, guard_end(64)), EFAULT, NULL);
	result("fstat NULL", syscall(SYS_fstat, devnull, NULL), EFAULT, NULL);
	result("fstatat \"\" at a guard", fstatat(devnull, guard_str(""), st, AT_EMPTY_PATH), 0,
	       NULL);
	result("syscall(newfstatat) NULL path",
	       syscall(SYS_newfstatat, devnull, NULL, st, AT_EMPTY_PATH), 0, NULL);
	result("fstatat path in PROT_NONE", fstatat(devnull, bad_ptr(), st, AT_EMPTY_PATH), EFAULT,
	       NULL);
	result("fstatat buffer in PROT_NONE", fstatat(devnull, "", bad_ptr(), AT_EMPTY_PATH),
	       EFAULT, NULL);
	result("syscall(newfstatat) buffer in PROT_NONE",
	       syscall(SYS_newfstatat, devnull, "", bad_ptr(), AT_EMPTY_PATH), EFAULT, NULL);

	struct statx *sx = guard_end(sizeof(*sx));
	n_statx++;
	result("statx at a guard", statx(devnull, guard_str(""), AT_EMPTY_PATH, STATX_TYPE, sx), 0,
	       NULL);
	expect("statx: a character device", S_ISCHR(sx->stx_mode));
	n_statx++;
	result("statx in PROT_NONE", statx(devnull, "", AT_EMPTY_PATH, STATX_TYPE, bad_ptr()),
	       EFAULT, NULL);
	n_statx++;
	result("statx cut by a guard", statx(devnull, "", AT_EMPTY_PATH, STATX_TYPE, guard_end(128)),
	       EFAULT, NULL);
	n_statx++;
	result("statx path in PROT_NONE", statx(devnull, bad_ptr(), AT_EMPTY_PATH, STATX_TYPE, sx),
	       EFAULT, NULL);
	n_statx++;
	result("syscall(statx) NULL path",
	       syscall(SYS_statx, devnull, NULL, AT_EMPTY_PATH, STATX_TYPE, sx), 0, NULL);
}

/* ---- clone and clone3 ---- */

static void reap(long pid)
{
	if (pid > 0) {
		int status;
		while (waitpid((pid_t)pid, &status, __WALL) < 0 && errno == EINTR)
			;
	}
}

/* clone3 with the program's own instruction: the child (on its own stack,
 * which it never touches itself) leaves at once */
static long clone3_raw(struct clone_args *ca, size_t size)
{
	n_clone3_raw++;
#if defined(__x86_64__)
	long r;
	__asm__ __volatile__("syscall\n\t"
			     "test %%rax, %%rax\n\t"
			     "jnz 1f\n\t"
			     "mov %[exit], %%eax\n\t"
			     "xor %%edi, %%edi\n\t"
			     "syscall\n"
			     "1:"
			     : "=a"(r)
			     : "0"(SYS_clone3), "D"(ca), "S"(size), [exit] "i"(SYS_exit_group)
			     : "rcx", "r11", "memory");
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
#else
	(void)ca;
	(void)size;
	errno = ENOSYS;
	return -1;
#endif
}

/* clone3 through syscall(): a child without a stack of its own */
static long clone3_libc(struct clone_args *ca, size_t size)
{
	n_clone3++;
	long r = syscall(SYS_clone3, ca, size);
	if (r == 0)
		raw_exit();
	return r;
}

static int clone_child(void *unused)
{
	(void)unused;
	raw_exit();
}

static void clone_cases(void)
{
	struct clone_args *ca = guard_end(CLONE_ARGS_SIZE_VER0);
	memset(ca, 0, CLONE_ARGS_SIZE_VER0);
	ca->exit_signal = SIGCHLD;
	result("clone3 size 32", clone3_libc(ca, 32), EINVAL, NULL);
	result("clone3 size 0", clone3_libc(ca, 0), EINVAL, NULL);
	result("clone3 args in PROT_NONE", clone3_libc(bad_ptr(), CLONE_ARGS_SIZE_VER0), EFAULT,
	       NULL);
	if (!no_null_reads)
		result("clone3 args NULL", clone3_libc(NULL, CLONE_ARGS_SIZE_VER0), EFAULT, NULL);
	/* 64 readable bytes, 88 claimed */
	result("clone3 size 88 cut by a guard", clone3_libc(ca, CLONE_ARGS_SIZE_VER2), EFAULT, NULL);
	/* the whole struct at a guard, the pidfd in the last bytes of another */
	int *pidfd = guard_end(sizeof(int));
	ca->flags = CLONE_PIDFD;
	ca->pidfd = (uintptr_t)pidfd;
	long r = clone3_libc(ca, CLONE_ARGS_SIZE_VER0);
	result("clone3 pidfd at a guard", r, 0, NULL);
	if (r > 0)
		close(*pidfd);
	reap(r);
	ca->pidfd = (uintptr_t)bad_ptr();
	result("clone3 pidfd in PROT_NONE", clone3_libc(ca, CLONE_ARGS_SIZE_VER0), EFAULT, NULL);

	/* with a child stack, as posix_spawn makes them (a process child of
	 * its own on a stack the shim prepares differently in each mode) */
	ca->flags = CLONE_VM | CLONE_VFORK;
	ca->pidfd = 0;
	size_t stack_size = 16 * page;
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	ca->stack = (uintptr_t)stack;
	ca->stack_size = stack_size;
#if defined(__x86_64__)
	r = clone3_raw(ca, CLONE_ARGS_SIZE_VER0);
	result("clone3 own stack", r, 0, NULL);
	reap(r);
	/* 64 bytes of the struct readable, 88 claimed, with a stack */
	struct clone_args *cut = guard_end(CLONE_ARGS_SIZE_VER0);
	memcpy(cut, ca, CLONE_ARGS_SIZE_VER0);
	result("clone3 stack, size 88 cut by a guard", clone3_raw(cut, CLONE_ARGS_SIZE_VER2), EFAULT,
	       NULL);
	result("clone3 stack, args in PROT_NONE", clone3_raw(bad_ptr(), CLONE_ARGS_SIZE_VER0),
	       EFAULT, NULL);
	/* a stack the child cannot use: the parent gets its pid all the same
	 * (the child dies of it under rewrite mode, whose hook needs a stack
	 * for the child's exit: only the parent's side is compared) */
	ca->stack = (uintptr_t)bad_ptr() - 64;
	ca->stack_size = 64;
	r = clone3_raw(ca, CLONE_ARGS_SIZE_VER0);
	result("clone3 stack in PROT_NONE", r, 0, NULL);
	reap(r);
#endif
	munmap(stack, stack_size);

	/* glibc's clone() puts fn and arg in the 16 bytes under the stack
	 * it is given: a stack of exactly those 16 bytes, PROT_NONE below
	 * (the child's fate is left out: under the shim it starts in the
	 * shim's own code, which needs more) */
	char *low = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			 0);
	mprotect(low, page, PROT_NONE);
	n_clone++;
	r = clone(clone_child, low + page + 16, SIGCHLD, NULL);
	result("clone() with a 16-byte stack", r, 0, NULL);
	reap(r);
	munmap(low, 2 * page);

	/* clone's pidfd goes to parent_tid */
	int *ptid = guard_end(sizeof(int));
	n_clone++;
	r = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, NULL, ptid, NULL, 0);
	if (r == 0)
		raw_exit();
	result("clone pidfd at a guard", r, 0, NULL);
	if (r > 0)
		close(*ptid);
	reap(r);
	n_clone++;
	r = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, NULL, bad_ptr(), NULL, 0);
	if (r == 0)
		raw_exit();
	result("clone pidfd in PROT_NONE", r, EFAULT, NULL);
}

/* ---- exec ---- */

/* through a pointer: libc declares execve's arguments non-null, and a
 * sanitizer (make SAN=1) checks that at direct calls */
static int (*volatile execve_fn)(const char *, char *const[], char *const[]) = execve;

static void exec_case(const char *what, const char *path, char *const argv[], char *const envp[])
{
	n_execve++;
	result(what, execve_fn(path, argv, envp), EFAULT, NULL);
}

static void exec_cases(void)
{
	static char *const argv[] = { "true", NULL };
	char *const good_env[] = { "A=b", NULL };
	exec_case("execve path in PROT_NONE", bad_ptr(), argv, good_env);
	if (!no_null_reads)
		exec_case("execve path NULL", NULL, argv, good_env);
	exec_case("execve path unterminated at a guard", guard_unterminated("/bin/true"), argv,
		  good_env);
	exec_case("execve argv in PROT_NONE", "/bin/true", bad_ptr(), good_env);
	exec_case("execve envp in PROT_NONE", "/bin/true", argv, bad_ptr());
	/* two strings and no NULL before the guard */
	char **env = guard_end(2 * sizeof(char *));
	env[0] = "A=b";
	env[1] = "C=d";
	exec_case("execve envp unterminated at a guard", "/bin/true", argv, env);
	char *const bad_string[] = { "A=b", bad_ptr(), NULL };
	exec_case("execve envp string in PROT_NONE", "/bin/true", argv, bad_string);
	const char *tails[] = { "A=b", "LD_PRELOAD=/nowhere.so", "KPROF_OUT=/nowhere",
				"KPROF_EXEC_STREAM=1:2", "KPROF_INTERVAL_MS=5", "" };
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		char what[96];
		snprintf(what, sizeof(what), "execve envp \"%s\" unterminated at a guard", tails[i]);
		char *const e[] = { "A=b", guard_unterminated(tails[i]), NULL };
		exec_case(what, "/bin/true", argv, e);
	}
	/* a terminated envp ending at a guard, and a bad argv string */
	char **env_end = guard_end(2 * sizeof(char *));
	env_end[0] = guard_str("LD_PRELOAD=/nowhere.so");
	env_end[1] = NULL;
	char *const bad_arg[] = { "true", bad_ptr(), NULL };
	exec_case("execve envp at a guard, argv string in PROT_NONE", "/bin/true", bad_arg, env_end);

	/* posix_spawn: the child's execve fails, spawn reports its errno */
	char *const *spawn_envs[] = { bad_ptr(), env, bad_string };
	const char *spawn_what[] = { "posix_spawn envp in PROT_NONE",
				     "posix_spawn envp unterminated at a guard",
				     "posix_spawn envp string in PROT_NONE" };
	for (int i = 0; i < 3; i++) {
		pid_t pid = 0;
		n_spawn++;
		int e = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, spawn_envs[i]);
		errno = e;
		result(spawn_what[i], e ? -1 : 0, EFAULT, NULL);
		if (!e)
			reap(pid);
	}
}

/* ---- memory the kernel alone reads ---- */

static void kernel_read_cases(void)
{
	int p[2];
	n_pipe2++;
	if (pipe(p)) {
		perror("guard_walks: pipe");
		exit(2);
	}
	struct iovec *iov = guard_end(sizeof(*iov));
	*iov = (struct iovec){ guard_str("zz"), 2 };
	result("writev iovec at a guard", writev(p[1], iov, 1), 0, NULL);
	result("writev iovec in PROT_NONE", writev(p[1], bad_ptr(), 1), EFAULT, NULL);
	*iov = (struct iovec){ guard_end(2), 2 };
	result("readv iovec at a guard", readv(p[0], iov, 1), 0, NULL);
	result("readv iovec in PROT_NONE", readv(p[0], bad_ptr(), 1), EFAULT, NULL);
	close(p[0]);
	close(p[1]);

	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un *sun = guard_end(sizeof(*sun));
	socklen_t *len = guard_end(sizeof(*len));
	*len = sizeof(*sun);
	result("bind address in PROT_NONE", bind(s, bad_ptr(), sizeof(*sun)), EFAULT, NULL);
	result("connect address in PROT_NONE", connect(s, bad_ptr(), sizeof(*sun)), EFAULT, NULL);
	result("getsockname at a guard", getsockname(s, (struct sockaddr *)sun, len), 0, NULL);
	result("getsockname length in PROT_NONE", getsockname(s, (struct sockaddr *)sun, bad_ptr()),
	       EFAULT, NULL);
	close(s);

	char *name = guard_str("guard_walks.file");
	int fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	result("open path at a guard", fd, 0, NULL);
	if (fd >= 0) {
		close(fd);
		unlink(name);
	}
	result("open path in PROT_NONE", open(bad_ptr(), O_RDONLY), EFAULT, NULL);
	result("openat path unterminated at a guard",
	       openat(AT_FDCWD, guard_unterminated("guard_walks.file"), O_RDONLY), EFAULT, NULL);
}

/* ---- executable mappings partly past their file's end ---- */

static void exec_map_cases(void)
{
	int fd = memfd_create("guard_walks", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)page)) {
		perror("guard_walks: memfd");
		exit(2);
	}
	/* the second page is past the end: SIGBUS for whoever touches it */
	void *p = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	result("mmap exec past the file's end", p == MAP_FAILED ? -1 : 0, 0, NULL);
	if (p != MAP_FAILED)
		munmap(p, 2 * page);
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	result("mmap past the file's end", p == MAP_FAILED ? -1 : 0, 0, NULL);
	if (p != MAP_FAILED) {
		result("mprotect exec past the file's end",
		       mprotect(p, 2 * page, PROT_READ | PROT_EXEC), 0, NULL);
		munmap(p, 2 * page);
	}
	close(fd);
}

static const struct {
	const char *name;
	void (*run)(void);
} groups[] = {
	{ "cmsg", cmsg_cases },		{ "recvmmsg", recvmmsg_cases },
	{ "pairs", pair_cases },	{ "stat", stat_cases },
	{ "clone", clone_cases },	{ "exec", exec_cases },
	{ "kernel", kernel_read_cases }, { "execmap", exec_map_cases },
};

/* Usage: guard_walks [-n] [GROUP...] (default: every group, in this order) */
int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = (size_t)sysconf(_SC_PAGESIZE);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0) {
		perror("guard_walks: /dev/null");
		return 2;
	}
	int first = 1;
	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		no_null_reads = true;
		first = 2;
	}
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		bool wanted = argc <= first;
		for (int i = first; i < argc; i++)
			wanted |= strcmp(argv[i], groups[g].name) == 0;
		if (wanted)
			groups[g].run();
	}
	printf("count recvmsg=%u recvmmsg=%u sendmsg=%u pipe2=%u socketpair=%u statx=%u "
	       "clone=%u clone3=%u clone3_raw=%u execve=%u posix_spawn=%u\n",
	       n_recvmsg, n_recvmmsg, n_sendmsg, n_pipe2, n_socketpair, n_statx, n_clone, n_clone3,
	       n_clone3_raw, n_execve, n_spawn);
	printf("%s\n", bad_results ? "some results differ from the kernel's" : "all results as the kernel gives");
	return bad_results ? 1 : 0;
}
