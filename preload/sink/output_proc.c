/* SPDX-License-Identifier: MIT */
/*
 * The output process: where the trace's descriptor lives, so that the
 * program never sees it. Any descriptor in the program's table can be
 * found (/proc/self/fd, fcntl or fstat over the range, close_range,
 * F_DUPFD's choice of number, a child's inherited table), so the file or
 * socket is opened and written by a small process of our own that shares
 * the program's memory (CLONE_VM) but has a descriptor table of its own,
 * empty but for the trace. The program's threads still encode and
 * compress the records; they hand the output process a function to run
 * (open, write a buffer, cut a batch back) and wait for its result on a
 * futex, one round trip per batch.
 *
 * What it is, as the program could see it: a child process (named
 * kprof-out) that no wait() without __WALL/__WCLONE reports (its exit
 * signal is 0), that no ptracer follows (CLONE_UNTRACED), with every
 * signal blocked but the one its parent's death sends it. It ends with the
 * image that started it: at exit through the parent-death signal, at a
 * successful execve through the exec'ing thread's clear_child_tid (the
 * kernel zeroes and wakes that word when the thread leaves this memory:
 * exec_mm_release), which the exec hooks point at the request word just
 * before the call and restore if the call fails. The next image reaps it
 * (its pid travels in KPROF_EXEC_STREAM).
 *
 * The output process runs shim code only, on its own stack, with the TLS
 * of the thread that made it: nothing it runs may touch TLS (no errno, no
 * kp_tls_flags) or libc beyond memory and string functions, and its
 * syscalls are not the program's own calls (kp_raw_syscall6, uncounted).
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sink.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449 /* the same on x86_64 and arm64 */
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* the kernel's; glibc keeps it to itself */
#endif
#ifndef PR_GET_TID_ADDRESS
#define PR_GET_TID_ADDRESS 40
#endif

#define STACK_BYTES (128u << 10)
/* the output process's stack, in the library's zero pages (no mmap call) */
static char stack[STACK_BYTES] __attribute__((aligned(64)));
/* The parent-death signal; the output process's handlers are its own. */
#define DEATH_SIGNAL 64
#define KSIGSET_BYTES 8

enum { READY_NO, READY_YES, READY_FAILED };

long kp_outproc_clone(unsigned long flags, void *stack_top, int (*fn)(void *), void *arg);
void (*kp_outproc_on_death)(int pid);

void kp_outproc_restorer(void);

static struct {
	uint32_t req;  /* futex: number of the latest request; 0 = our image left */
	uint32_t done; /* futex: number of the latest request served */
	uint32_t ready;
	int (*fn)(void *);
	void *arg;
	int ret;
	int pid;	 /* the output process, 0 when there is none */
	int program_pid; /* its parent, as it checks after a parent-death signal */
	int lock;
	int reap_pid;	 /* an earlier image's output process, not reaped yet */
	int pidfd;	 /* the program, in the output process's table (or -errno) */
} ch;

static __thread int *saved_tid_address;
static __thread bool armed;

#define osys(nr, ...) kp_raw_syscall6((nr), KP_RAW_A(__VA_ARGS__))

struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* Bumped by the parent-death signal's handler (in the output process only). */
static uint32_t death_word;

static void on_death_signal(int sig)
{
	(void)sig;
	__atomic_fetch_add(&death_word, 1, __ATOMIC_RELEASE);
}


static void futex_wake(uint32_t *word)
{
	osys(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1);
}

/* An empty descriptor table of our own, without touching the program's. */
static int own_table(void)
{
	/* close_range(0, ~0, UNSHARE) copies no descriptor at all (5.9+) */
	if (osys(SYS_close_range, 0, ~0U, CLOSE_RANGE_UNSHARE) == 0)
		return 0;
	long err = osys(SYS_unshare, CLONE_FILES);
	if (err)
		return (int)err;
	/* a private copy now: closing it leaves the program's alone */
	return (int)osys(SYS_close_range, 0, ~0U, 0);
}

static int die_with_program(void)
{
	struct ksigaction sa = {
		.handler = on_death_signal,
		.flags = SA_RESTORER,
		.restorer = kp_outproc_restorer,
		.mask = ~0ULL,
	};
	long err = osys(SYS_rt_sigaction, DEATH_SIGNAL, &sa, NULL, KSIGSET_BYTES);
	if (!err)
		err = osys(SYS_prctl, PR_SET_PDEATHSIG, DEATH_SIGNAL);
	uint64_t mask = ~(1ULL << (DEATH_SIGNAL - 1));
	if (!err)
		err = osys(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, KSIGSET_BYTES);
	if (err)
		return (int)err;
	/* the parent may have gone before the prctl */
	return osys(SYS_getppid) == ch.program_pid ? 0 : -ESRCH;
}

/* pidfd_info as of Linux 6.15 (PIDFD_INFO_SIZE_VER0) */
struct pidfd_info_v0 {
	uint64_t mask, cgroupid;
	uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
};
#define PIDFD_INFO_EXIT_BIT (1ULL << 3)
#define PIDFD_GET_INFO_V0 _IOWR(0xFF, 11, struct pidfd_info_v0)

/* The dead program's wait status from its pidfd; -1 if the kernel cannot tell. */
int kp_outproc_exit_code(void)
{
	if (ch.pidfd < 0)
		return -1;
	struct pidfd_info_v0 info = { .mask = PIDFD_INFO_EXIT_BIT };
	if (osys(SYS_ioctl, ch.pidfd, PIDFD_GET_INFO_V0, &info) != 0 ||
	    !(info.mask & PIDFD_INFO_EXIT_BIT))
		return -1;
	return info.exit_code;
}

static int stop_fn(void *unused)
{
	(void)unused;
	return 0;
}

/*
 * Waits for a request (ch.req no longer r) or a parent-death signal
 * (death_word no longer seen). Both words in one futex_waitv, so that a
 * signal handled just before the wait cannot be lost: the wait then
 * returns at once. Without futex_waitv (before 5.16, or refused by a
 * seccomp filter), a timed wait.
 */
static void wait_request(uint32_t r, uint32_t seen)
{
	struct futex_waitv w[2] = {
		/* shared: the kernel's clear_child_tid wake is not a private one */
		{ .val = r, .uaddr = (uintptr_t)&ch.req, .flags = FUTEX_32 },
		{ .val = seen, .uaddr = (uintptr_t)&death_word,
		  .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG },
	};
	static bool no_waitv;
	if (!no_waitv) {
		long e = osys(SYS_futex_waitv, w, 2, 0, NULL, 0);
		if (e >= 0 || e == -EAGAIN || e == -EINTR)
			return;
		no_waitv = true; /* ENOSYS, or a seccomp filter's EPERM */
	}
	/* the parent-death signal interrupts this one; one just before it
	 * waits for the timeout at most */
	struct timespec ts = { 0, 100000000 };
	long e = osys(SYS_futex, &ch.req, FUTEX_WAIT, r, &ts);
	if (e < 0 && e != -EAGAIN && e != -EINTR && e != -ETIMEDOUT)
		osys(SYS_nanosleep, &ts, NULL); /* never a busy loop */
}

static void serve(void)
{
	uint32_t served = __atomic_load_n(&ch.done, __ATOMIC_ACQUIRE);
	uint32_t seen = 0;
	for (;;) {
		/*
		 * A parent-death signal: the thread that made us ended. When
		 * other threads of the program live on, we were given to one
		 * of them and our parent is the same process; otherwise the
		 * program is gone.
		 */
		uint32_t r = __atomic_load_n(&ch.req, __ATOMIC_ACQUIRE);
		if (r == 0)
			return; /* the image that made us exec'd: nothing left to write */
		uint32_t deaths = __atomic_load_n(&death_word, __ATOMIC_ACQUIRE);
		if (deaths != seen) {
			seen = deaths;
			if (osys(SYS_getppid) != ch.program_pid) {
				if (kp_outproc_on_death)
					kp_outproc_on_death(ch.program_pid);
				return;
			}
		}
		if (r == served) {
			wait_request(r, seen);
			continue;
		}
		int (*fn)(void *) = ch.fn;
		ch.ret = fn(ch.arg);
		served = r;
		__atomic_store_n(&ch.done, r, __ATOMIC_RELEASE);
		futex_wake(&ch.done);
		if (fn == stop_fn)
			return;
	}
}

static int outproc_main(void *unused)
{
	(void)unused;
	int err = own_table();
	if (!err)
		err = die_with_program();
	if (err) {
		__atomic_store_n(&ch.ready, READY_FAILED, __ATOMIC_RELEASE);
		futex_wake(&ch.done);
		return 1;
	}
	osys(SYS_prctl, PR_SET_NAME, "kprof-out");
	/* what the program dies of outlives its reaping here (6.15+) */
	ch.pidfd = (int)osys(SYS_pidfd_open, ch.program_pid, 0);
	/* no core file of ours, whatever happens (an rlimit is per process) */
	struct rlimit no_core = { 0, 0 };
	osys(SYS_prlimit64, 0, RLIMIT_CORE, &no_core, NULL);
	__atomic_store_n(&ch.ready, READY_YES, __ATOMIC_RELEASE);
	serve();
	return 0;
}

static void lock(void)
{
	for (;;) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&ch.lock, &expect, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		struct timespec ts = { 0, 20000 };
		kp_raw(SYS_nanosleep, &ts, NULL);
	}
}

static void unlock(void)
{
	__atomic_store_n(&ch.lock, 0, __ATOMIC_RELEASE);
}

/* Whether the output process has exited (reaping it if so). */
static bool gone(void)
{
	if (__atomic_load_n(&ch.ready, __ATOMIC_ACQUIRE) == READY_FAILED) {
		kp_raw(SYS_wait4, ch.pid, NULL, __WCLONE, NULL); /* exiting now */
		return true;
	}
	long r = kp_raw(SYS_wait4, ch.pid, NULL, WNOHANG | __WCLONE, NULL);
	return r == ch.pid || r == -ECHILD;
}

/*
 * Whether the output process is stopped (SIGSTOP to the program's children
 * or its process group): then it is given up for good, killed, and the
 * trace goes on from the program's own process; waiting for it could last
 * as long as the stop, which the program cannot know it caused.
 */
static bool stopped(void)
{
	char buf[256];
	if (kp_read_proc_stat((uint64_t)ch.pid, buf, sizeof(buf)) < 0)
		return false;
	const char *p = strrchr(buf, ')'); /* "pid (comm) STATE ..." */
	if (!p || p[1] != ' ' || (p[2] != 'T' && p[2] != 't'))
		return false;
	kp_raw(SYS_kill, ch.pid, SIGKILL);
	kp_raw(SYS_wait4, ch.pid, NULL, __WCLONE, NULL);
	return true;
}

int kp_outproc_start(void)
{
	if (ch.pid)
		return 0;
	ch.program_pid = (int)kp_raw0(SYS_getpid);
	ch.req = ch.done = 1;
	ch.ready = READY_NO;
	/* born with every signal blocked: the program's handlers are in its copy */
	uint64_t all = ~0ULL, old;
	kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, KSIGSET_BYTES);
	long pid = kp_outproc_clone(CLONE_VM | CLONE_FILES | CLONE_UNTRACED,
				    stack + STACK_BYTES, outproc_main, NULL);
	if (kp_own_counting()) /* not through kp_raw: counted here */
		__atomic_fetch_add(&kp_own_calls[SYS_clone], 1, __ATOMIC_RELAXED);
	kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, KSIGSET_BYTES);
	if (pid < 0)
		return (int)pid;
	ch.pid = (int)pid;
	return 0;
}

int kp_outproc_pid(void)
{
	return ch.pid;
}

/* Whether /proc/self/task/TID/children names a child but the output process. */
static bool task_has_other_child(const char *tid)
{
	char path[64] = "/proc/self/task/", buf[512];
	strcat(path, tid);
	strcat(path, "/children");
	ssize_t n = kp_read_file(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return true; /* cannot tell: as without the shim */
	buf[n] = 0;
	for (char *p = buf; *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!*p)
			break;
		long pid = 0;
		while (*p >= '0' && *p <= '9')
			pid = pid * 10 + (*p++ - '0');
		if (pid != ch.pid)
			return true;
	}
	return false;
}

bool kp_outproc_only_child(int options)
{
	if (!ch.pid || !(options & (__WALL | __WCLONE)))
		return false;
	long fd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/task",
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[4096];
	bool other = false;
	long n;
	while (!other && (n = kp_raw(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n && !other;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] != '.')
				other = task_has_other_child(d->d_name);
		}
	}
	kp_raw(SYS_close, fd);
	return !other;
}

/*
 * Waits for request r, done being `before` when it was made; -EPIPE when
 * the output process is gone. The first wait is made even when the answer
 * is already there (it returns at once): a call costs the program's pid
 * exactly one futex wake and one futex wait, which the `own` record of a
 * final batch counts ahead (own_calls.c).
 */
static int wait_done(uint32_t r, uint32_t before)
{
	for (uint32_t d = before;; d = __atomic_load_n(&ch.done, __ATOMIC_ACQUIRE)) {
		if (d == r)
			return 0;
		if (__atomic_load_n(&ch.ready, __ATOMIC_ACQUIRE) == READY_FAILED && gone())
			return -EPIPE;
		/* a slow disk or listener is waited for; a dead process is not,
		 * nor a stopped one (the program stopped its children) */
		struct timespec ts = { 0, 200000000 };
		long e = kp_raw(SYS_futex, &ch.done, FUTEX_WAIT_PRIVATE, d, &ts);
		if (e == -ETIMEDOUT && (gone() || stopped()))
			return -EPIPE;
	}
}

int kp_outproc_call(int (*fn)(void *), void *arg)
{
	lock();
	if (!ch.pid) {
		unlock();
		return -ESRCH;
	}
	ch.fn = fn;
	ch.arg = arg;
	uint32_t before = __atomic_load_n(&ch.done, __ATOMIC_ACQUIRE);
	uint32_t r = __atomic_load_n(&ch.req, __ATOMIC_RELAXED) + 1;
	if (r == 0)
		r = 1;
	__atomic_store_n(&ch.req, r, __ATOMIC_RELEASE);
	kp_raw(SYS_futex, &ch.req, FUTEX_WAKE, 1); /* a shared futex: see wait_request() */
	int err = wait_done(r, before);
	int ret = ch.ret;
	if (err)
		ch.pid = 0;
	unlock();
	return err ? err : ret;
}

/* Ends the output process now (it closes nothing: its table dies with it). */
void kp_outproc_stop(void)
{
	int pid = ch.pid;
	if (!pid)
		return;
	if (kp_outproc_call(stop_fn, NULL) == 0)
		kp_raw(SYS_wait4, pid, NULL, __WCLONE, NULL);
	ch.pid = 0;
}

/*
 * Just before execve: if it succeeds, the kernel zeroes ch.req and wakes
 * the output process, which then exits. false: that cannot be arranged
 * (no PR_GET_TID_ADDRESS to restore glibc's word after a failure), and
 * the output process was stopped instead.
 */
bool kp_outproc_exec_arm(void)
{
	if (!ch.pid || armed)
		return true;
	int *old = NULL;
	if (kp_raw(SYS_prctl, PR_GET_TID_ADDRESS, &old) != 0) {
		kp_outproc_stop();
		return false;
	}
	saved_tid_address = old;
	armed = true;
	kp_raw(SYS_set_tid_address, &ch.req);
	return true;
}

/* execve failed: the thread's word is glibc's again, the process stays. */
void kp_outproc_exec_failed(void)
{
	if (!armed)
		return;
	kp_raw(SYS_set_tid_address, saved_tid_address);
	armed = false;
}

/* A fork child: the output process is its parent's; it makes its own. */
void kp_outproc_after_fork(void)
{
	memset(&ch, 0, sizeof(ch));
	armed = false;
}

/* The image before an execve left its output process to us to reap (at our first batch). */
void kp_outproc_reap_later(int pid)
{
	ch.reap_pid = pid;
}

void kp_outproc_reap(void)
{
	if (!ch.reap_pid)
		return;
	/* __WALL: its exit signal became SIGCHLD when our exec made us a new image */
	long r = kp_raw(SYS_wait4, ch.reap_pid, NULL, WNOHANG | __WALL, NULL);
	if (r == ch.reap_pid || r == -ECHILD)
		ch.reap_pid = 0;
}

/*
 * At start-up, before main: the earlier image's output process, woken by
 * our exec, is reaped before the program can see it. It exits as soon as
 * it runs, but on a busy machine that can be after the program set its
 * handlers, and the kernel then sends us SIGCHLD for it (a child whose
 * parent exec'd since it was made signals SIGCHLD whatever its exit
 * signal): procps' ps dies of that. So it is waited for, sleeping (its
 * CPU may be ours), up to 50 ms: one that is stopped is left for later.
 */
void kp_outproc_reap_at_start(void)
{
	for (int i = 0; ch.reap_pid && i < 500; i++) {
		kp_outproc_reap();
		if (!ch.reap_pid)
			break;
		struct timespec ts = { 0, 100000 };
		kp_raw(SYS_nanosleep, &ts, NULL);
	}
}
