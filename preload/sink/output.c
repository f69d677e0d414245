/* SPDX-License-Identifier: MIT */
/*
 * Where the record stream goes: a file per process image (a path template
 * with %p, or a file inside a directory), or a unix socket. The descriptor
 * lives in the output process (output_proc.c), never in the program's
 * table: the functions marked "trace side" below run there, with syscalls
 * that are not the program's own. Only when that process cannot be made
 * (clone refused: RLIMIT_NPROC, a seccomp filter) does the descriptor live
 * in the program, moved to a high number, guarded by the close and dup
 * hooks (symbols/fd_guard.c), checked with fstat before every batch and
 * reopened by path when the program closed it behind our back. Files are
 * created 0600 whatever the umask. All I/O is raw syscalls; zlib (loaded
 * for a gzip trace only: zlib_load.c) takes its memory from a private
 * arena so that deflate never calls malloc.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "sink.h"
#include "trace_dest.h"

#define ARENA_BYTES (1u << 20)
#define ZOUT_BYTES (256u << 10)

static struct {
	int fd;		  /* in the output process's table when remote */
	bool remote;	  /* the descriptor lives in the output process */
	bool tried_remote;
	bool after_death; /* the output process finishes the stream itself */
	bool warned_writer;
	int dir_err;	  /* what the trace side could not do, said by the caller */
	int unix_err;
	bool is_socket;
	bool gzip;
	bool broken;	  /* a stream we can no longer write consistently */
	bool warned_unix;
	bool local;	  /* this batch from the program's own process (kp_output_exec_local) */
	int stale_fd;	  /* the parent's descriptor in a fork child */
	dev_t dev;
	ino_t ino;
	uint64_t offset;  /* bytes in the file after the last good batch */
	uint64_t batch_start;
	char path[KP_PATH_MAX];
	z_stream z;
	bool z_ready;
	char *arena;
	size_t arena_used;
	unsigned char *zout;
} out = { .fd = -1, .stale_fd = -1 };

/*
 * The trace side's syscalls: made by the output process they are not the
 * program's, so not counted as the shim's own calls of this pid either.
 */
static long tsys6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	if (out.remote)
		return kp_raw_syscall6(nr, a1, a2, a3, a4, a5, a6);
	return kp_own_syscall6(nr, a1, a2, a3, a4, a5, a6);
}
#define tsys(nr, ...) tsys6((nr), KP_RAW_A(__VA_ARGS__))

static voidpf arena_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	size_t n = ((size_t)items * size + 15) & ~(size_t)15;
	if (!out.arena || out.arena_used + n > ARENA_BYTES)
		return Z_NULL;
	void *p = out.arena + out.arena_used;
	out.arena_used += n;
	return p;
}

static void arena_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	(void)p;
}

static void *raw_mmap(size_t n)
{
	long p = kp_raw(SYS_mmap, 0, n, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096)
		return NULL;
	return (void *)p;
}

/* The trace's descriptor in the program's table: -1 unless not remote. */
int kp_output_fd(void)
{
	return out.remote ? -1 : out.fd;
}

bool kp_output_is_ours(int fd)
{
	return fd >= 0 && !out.remote && fd == out.fd;
}

/* The program closes or reuses the number of the parent's descriptor. */
void kp_output_forget_stale(int fd)
{
	if (fd == out.stale_fd)
		out.stale_fd = -1;
}

/* A number near the soft RLIMIT_NOFILE (capped: a huge table costs memory). */
static long high_fd_floor(void)
{
	struct rlimit rl;
	long soft = 1024;
	if (kp_raw(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY)
		soft = (long)rl.rlim_cur;
	if (soft > 65536)
		soft = 65536;
	long floor = soft - 32;
	return floor < 10 ? 10 : floor;
}

/* Moves fd to a high number; returns the new fd (or fd when that fails). */
static int move_high(int fd, long not_this)
{
	long floor = high_fd_floor();
	long nfd = kp_raw(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor);
	if (nfd == not_this && nfd >= 0) {
		long again = kp_raw(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor + 1);
		kp_raw(SYS_close, nfd);
		nfd = again;
	}
	if (nfd < 0)
		return fd;
	kp_raw(SYS_close, fd);
	return (int)nfd;
}

static void move_away_locked(void);

/* Under the flush lock: a flush in another thread may be writing to it. */
void kp_output_move_away(void)
{
	bool locked = kp_flush_lock_wait();
	move_away_locked();
	if (locked)
		kp_flush_unlock();
}

static void move_away_locked(void)
{
	if (out.fd < 0)
		return;
	int old = out.fd;
	int nfd = move_high(old, old);
	if (nfd == old) {
		/* could not move it: give the number up, reopen at next flush */
		kp_raw(SYS_close, old);
		out.fd = -1;
		if (out.is_socket)
			out.broken = true;
		return;
	}
	out.fd = nfd;
}

/* Trace side. */
static int remember_identity(int fd, bool size_too)
{
	struct stat st;
	long err = tsys(SYS_fstat, fd, &st);
	if (err)
		return (int)err;
	out.dev = st.st_dev;
	out.ino = st.st_ino;
	if (size_too)
		out.offset = (uint64_t)st.st_size;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void append(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(dst);
	while (*s && n + 1 < cap)
		dst[n++] = *s++;
	dst[n] = 0;
}

/* The first free head[.N]suffix (common/trace_dest.c), its name kept. */
static int open_numbered(const char *head, bool dot_zero, const char *suffix)
{
	char path[KP_PATH_MAX];
	int fd = kp_dest_create(tsys6, path, sizeof(path), head, dot_zero, suffix);
	if (fd >= 0)
		memcpy(out.path, path, sizeof(path));
	return fd;
}

/* KPROF_OUT with %p: expand, then NAME.1.msgpack, NAME.2.msgpack ... */
static int open_template(const char *tmpl)
{
	char base[KP_PATH_MAX] = "";
	for (const char *p = tmpl; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			char num[24];
			append(base, sizeof(base), kp_u64_dec(num, kp_proc.pid));
			p++;
		} else {
			char c[2] = { *p, 0 };
			append(base, sizeof(base), c);
		}
	}
	const char *suffix = kp_dest_suffix(base);
	base[strlen(base) - strlen(suffix)] = 0;
	return open_numbered(base, false, suffix);
}

/* KPROF_OUT a directory: DIR/<exe>.<pid>.<n>.msgpack[.gz], in a directory
 * that is ours (common/trace_dest.h). */
static int open_in_dir(const char *dir, bool gzip)
{
	int err = kp_dest_mkdir(tsys6, dir);
	if (!err)
		err = kp_dest_check_dir(tsys6, dir, -1);
	if (err) {
		out.dir_err = err; /* said by the caller: the trace side has no stderr */
		return err;
	}
	char head[KP_PATH_MAX];
	if (!kp_dest_head(head, sizeof(head), dir, kp_proc.exe, kp_proc.pid))
		return -ENAMETOOLONG;
	return open_numbered(head, true, gzip ? ".msgpack.gz" : ".msgpack");
}

/* The listener must be ours (or root's). */
static int open_unix(const char *path)
{
	return kp_dest_connect(tsys6, path, -1);
}

static int gzip_start(void)
{
	if (!out.arena) {
		out.arena = raw_mmap(ARENA_BYTES);
		out.zout = raw_mmap(ZOUT_BYTES);
		if (!out.arena || !out.zout)
			return -ENOMEM;
	}
	out.arena_used = 0;
	memset(&out.z, 0, sizeof(out.z));
	out.z.zalloc = arena_alloc;
	out.z.zfree = arena_free;
	if (kp_zlib.init2(&out.z, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
			  (int)sizeof(out.z)) != Z_OK)
		return -ENOMEM;
	out.z_ready = true;
	return 0;
}

/* Closes the parent's descriptor, if the child did not reuse its number. */
static void close_stale(void)
{
	struct stat st;
	if (out.stale_fd >= 0 && kp_raw(SYS_fstat, out.stale_fd, &st) == 0 &&
	    st.st_dev == out.dev && st.st_ino == out.ino)
		kp_raw(SYS_close, out.stale_fd);
	out.stale_fd = -1;
}

/*
 * Trace side: the descriptor of our file again (append to it: the program
 * closed it behind our back, or the output process was replaced), else
 * one of the destination KPROF_OUT names. The descriptor, or -errno.
 */
static int open_fn(void *arg)
{
	(void)arg;
	out.dir_err = out.unix_err = 0;
	if (out.path[0]) {
		long fd = tsys(SYS_openat, AT_FDCWD, out.path,
			       O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			remember_identity((int)fd, true);
		return (int)fd;
	}
	const char *dest = kp_config.out;
	int fd;
	out.is_socket = false;
	if (strncmp(dest, "unix:", 5) == 0) {
		fd = open_unix(dest + 5);
		if (fd >= 0) {
			out.is_socket = true;
		} else {
			out.unix_err = fd;
			fd = open_in_dir(kp_config.fallback_dir, kp_config.gzip);
		}
	} else if (strstr(dest, "%p")) {
		fd = open_template(dest);
	} else {
		fd = open_in_dir(dest, kp_config.gzip || ends_with(dest, ".gz"));
	}
	if (fd >= 0 && !out.is_socket && remember_identity(fd, false) != 0) {
		tsys(SYS_close, fd);
		return -EIO;
	}
	return fd;
}

static int close_fn(void *arg)
{
	(void)arg;
	if (out.fd >= 0)
		tsys(SYS_close, out.fd);
	out.fd = -1;
	return 0;
}

/* What the trace side could not do, on the program's stderr, once each. */
static void say_open_problems(void)
{
	const char *dest = kp_config.out;
	if (out.unix_err && !out.warned_unix) {
		out.warned_unix = true;
		kp_write_stderr("kprof: cannot connect to ");
		kp_write_stderr(dest);
		kp_write_stderr(out.unix_err == -EPERM ?
					" (the listener is another user's); writing to " :
					" (nobody listening?); writing to ");
		kp_write_stderr(kp_config.fallback_dir);
		kp_write_stderr("/ instead\n");
	}
	static bool warned_dir;
	if ((out.dir_err == -ELOOP || out.dir_err == -EPERM) && !warned_dir) {
		warned_dir = true;
		kp_write_stderr("kprof: not tracing into ");
		kp_write_stderr(out.unix_err ? kp_config.fallback_dir : dest);
		kp_write_stderr(out.dir_err == -ELOOP ? ": a symlink another user owns\n" :
							": a directory another user owns\n");
	}
}

/*
 * Runs fn on the trace side: in the output process when there is one.
 * When it went away (killed by the program, say), the descriptor went
 * with it: the batch fails (and is counted as dropped), and the next one
 * reopens the file from the program's own process.
 */
static int trace_call(int (*fn)(void *), void *arg)
{
	if (!out.remote || out.after_death)
		return fn(arg);
	int r = kp_outproc_call(fn, arg);
	if (kp_outproc_pid())
		return r;
	out.remote = false;
	out.fd = -1;
	if (out.is_socket)
		out.broken = true;
	/*
	 * Not on the program's stderr: a program that kills or stops its
	 * children did it, and must see nothing of ours; the batch is
	 * counted in the next one's `drop` record (reason below), which
	 * kanalyze reports.
	 */
	if (!out.warned_writer) {
		out.warned_writer = true;
		kp_debug("the output process went away (killed or stopped); "
			 "the trace goes on from the program's own process");
	}
	return -ECHILD;
}

static void start_output_process(void)
{
	if (out.tried_remote || out.local)
		return;
	out.tried_remote = true;
	/*
	 * Under a seccomp filter a clone may be what kills the program
	 * (systemd's SystemCallFilter=~@process): the descriptor then stays
	 * in the program's table, as it did before the output process.
	 */
	if (kp_config.valgrind) {
		/* it supports only a thread's or a fork's clone, and exits
		 * ("Unsupported clone() flags") at any other */
		kp_debug("running under valgrind: the trace descriptor lives in the "
			 "program's table");
		return;
	}
	if (kp_raw(SYS_prctl, PR_GET_SECCOMP) == 2) {
		kp_debug("a seccomp filter is in force: the trace descriptor lives in the "
			 "program's table");
		return;
	}
	out.remote = kp_outproc_start() == 0;
	if (!out.remote)
		kp_debug("cannot start the output process: the trace descriptor "
			 "lives in the program's table");
}

/* A trace path (not a socket) whose name asks for gzip. */
static bool gzip_by_name(void)
{
	return strncmp(kp_config.out, "unix:", 5) != 0 && ends_with(kp_config.out, ".gz");
}

bool kp_output_gzip_wanted(void)
{
	return kp_config.gzip || gzip_by_name();
}

int kp_output_open(void)
{
	if (out.fd >= 0)
		return 0;
	if (out.stale_fd >= 0)
		close_stale();
	if (out.broken)
		return -EPIPE;
	start_output_process();
	bool reopen = out.path[0] != 0;
	int fd = trace_call(open_fn, NULL);
	if (fd == -ECHILD && !out.remote)
		fd = open_fn(NULL); /* the output process died on the way */
	say_open_problems();
	if (fd < 0)
		return fd;
	/* a descriptor of this batch only needs no high number: nothing of
	 * the program's runs before it is closed */
	out.fd = out.remote || out.local ? fd : move_high(fd, -1);
	if (reopen)
		return 0;
	out.offset = 0;
	/* without libz (kp_zlib_load said so at start-up): plain records */
	out.gzip = (kp_config.gzip || (!out.is_socket && gzip_by_name())) && kp_zlib.deflate;
	int err = out.gzip ? gzip_start() : 0;
	if (err) {
		trace_call(close_fn, NULL);
		out.fd = -1;
		out.broken = true;
	}
	return err;
}

int kp_output_begin_batch(void)
{
	kp_outproc_reap();
	int err = kp_output_open();
	if (err)
		return err;
	if (!out.remote) {
		struct stat st;
		long r = kp_raw(SYS_fstat, out.fd, &st);
		if (r || st.st_dev != out.dev || st.st_ino != out.ino) {
			/* not ours any more: never touch that descriptor again */
			out.fd = -1;
			if (out.is_socket || !out.path[0]) {
				out.broken = true;
				return -EBADF;
			}
			err = kp_output_open();
			if (err)
				return err;
		}
	}
	out.batch_start = out.offset;
	return 0;
}

/* Trace side. */
static int write_all(const char *buf, size_t len)
{
	while (len) {
		long n;
		if (out.is_socket)
			n = tsys(SYS_sendto, out.fd, buf, len, MSG_NOSIGNAL, NULL, 0);
		else
			n = tsys(SYS_write, out.fd, buf, len);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		out.offset += (uint64_t)n;
	}
	return 0;
}

struct write_req {
	const char *buf;
	size_t len;
};

static int write_fn(void *arg)
{
	const struct write_req *r = arg;
	return write_all(r->buf, r->len);
}

/*
 * The output process went away during a write (the program killed or
 * stopped it): a file goes on from the program's own process, from what
 * it holds. The file's size says whether the chunk got written (whole or
 * in part, then cut back): the stream, gzip included (its state is ours),
 * stays exactly what it would have been. A socket cannot be resumed.
 */
static int resume_locally(const char *buf, size_t len, uint64_t before)
{
	if (out.is_socket || kp_output_open() != 0)
		return -ECHILD;
	if (out.offset == before + len)
		return 0;
	if (out.offset != before) {
		kp_raw(SYS_ftruncate, out.fd, before);
		kp_raw(SYS_lseek, out.fd, 0, SEEK_END);
		out.offset = before;
	}
	return buf ? write_all(buf, len) : 0;
}

static int write_out(const char *buf, size_t len)
{
	struct write_req r = { buf, len };
	uint64_t before = out.offset;
	int err = trace_call(write_fn, &r);
	return err == -ECHILD ? resume_locally(buf, len, before) : err;
}

static int deflate_run(const char *buf, size_t len, int mode)
{
	out.z.next_in = (Bytef *)buf;
	out.z.avail_in = (uInt)len;
	for (;;) {
		out.z.next_out = out.zout;
		out.z.avail_out = ZOUT_BYTES;
		int zr = kp_zlib.deflate(&out.z, mode);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		size_t have = ZOUT_BYTES - out.z.avail_out;
		if (have) {
			int err = write_out((const char *)out.zout, have);
			if (err)
				return err;
		}
		if (mode == Z_FINISH ? zr == Z_STREAM_END :
				       (out.z.avail_in == 0 && out.z.avail_out != 0))
			return 0;
	}
}

int kp_output_write(void *ctx, const char *buf, size_t len)
{
	(void)ctx;
	if (out.fd < 0)
		return -EBADF;
	if (out.gzip)
		return deflate_run(buf, len, Z_NO_FLUSH);
	return write_out(buf, len);
}

int kp_output_end_batch(bool finish)
{
	if (!out.gzip)
		return 0;
	int err = deflate_run(NULL, 0, finish ? Z_FINISH : Z_SYNC_FLUSH);
	if (!err && finish)
		kp_zlib.reset(&out.z); /* a later batch starts a new gzip member */
	return err;
}

/* Trace side: see kp_output_abort_batch(). */
static int abort_fn(void *arg)
{
	(void)arg;
	if (out.gzip || out.is_socket) {
		out.broken = true;
		return close_fn(NULL);
	}
	if (out.offset != out.batch_start) {
		tsys(SYS_ftruncate, out.fd, out.batch_start);
		tsys(SYS_lseek, out.fd, out.batch_start, SEEK_SET);
		out.offset = out.batch_start;
	}
	return 0;
}

/*
 * A batch failed part way (ENOSPC...). A plain file is cut back to the
 * last record boundary so that it stays readable; a gzip or socket stream
 * cannot be repaired and is given up.
 */
void kp_output_abort_batch(void)
{
	if (out.fd < 0)
		return;
	if (trace_call(abort_fn, NULL) == -ECHILD && resume_locally(NULL, 0, out.batch_start) == 0)
		abort_fn(NULL);
}

/*
 * In the output process, after the program died. A batch it was writing
 * when it died is cut back (a plain file) or makes the stream unfinishable
 * (gzip, whose state died half way; a socket).
 */
bool kp_output_after_death(bool mid_batch)
{
	if (!out.remote || out.fd < 0 || out.broken)
		return false;
	if (mid_batch && (out.gzip || out.is_socket))
		return false;
	out.after_death = true;
	if (mid_batch)
		abort_fn(NULL);
	return true;
}

/* The destination was refused (another user's link or directory): said once. */
bool kp_output_refused(void)
{
	return out.dir_err == -ELOOP || out.dir_err == -EPERM;
}

const char *kp_output_path(void)
{
	return out.path[0] ? out.path : kp_config.out;
}

/*
 * No syscall here. The output process is the parent's: the child makes its
 * own at its first flush. A descriptor in the program's table (no output
 * process) is the parent's too: the child closes it at its first flush.
 */
void kp_output_after_fork(void)
{
	out.stale_fd = out.remote ? -1 : out.fd;
	out.fd = -1;
	out.remote = false;
	out.tried_remote = false;
	out.broken = false;
	out.path[0] = 0;
	out.offset = 0;
	out.z_ready = false;
	kp_outproc_after_fork();
}

/*
 * The final batch before an execve, when no output process was started
 * (a fork child that execs, as shells and make do thousands of times):
 * written from the program's own process, from the open to the close,
 * rather than by an output process made for one batch (a clone, its
 * set-up and a round trip: about 1.5 ms per fork and exec on a 2-vCPU
 * KVM guest). Only with one thread (a fork child has one): nothing of the
 * program's runs while the descriptor is open, and it is closed before
 * the exec. Not for a socket, whose connection would end with the batch.
 */
bool kp_output_exec_local(void)
{
	out.local = !out.remote && out.fd < 0 && !out.tried_remote && __libc_single_threaded &&
		    strncmp(kp_config.out, "unix:", 5) != 0;
	return out.local;
}

bool kp_output_local(void)
{
	return out.local && out.fd >= 0;
}

/* After the exec record, just before the execve itself. */
void kp_output_before_exec(void)
{
	if (out.local) {
		/* a failed execve reopens by path (from an output process) */
		out.local = false;
		if (out.fd >= 0)
			kp_raw(SYS_close, out.fd);
		out.fd = -1;
		return;
	}
	if (!out.remote || kp_outproc_exec_arm())
		return;
	/* stopped instead: a failed execve starts another and reopens by path */
	out.fd = -1;
	out.remote = false;
	out.tried_remote = false;
	if (out.is_socket)
		out.broken = true;
}

void kp_output_close(void)
{
	if (out.fd >= 0)
		trace_call(close_fn, NULL);
	out.fd = -1;
	kp_outproc_stop();
	out.remote = false;
	out.broken = true; /* never reopened */
}

/* execve failed after the final flush: the stream goes on in the same file. */
void kp_output_exec_failed(void)
{
	kp_outproc_exec_failed();
}
