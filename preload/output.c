/*
 * Where the record stream goes: a file per process image (a path template
 * with %p, or a file inside a directory), or a unix socket. The descriptor
 * is opened at start (a fork child, which makes no syscall at fork time,
 * opens its own at its first flush), moved to a high number out of the
 * program's way, created 0600 whatever the umask, checked
 * with fstat before every batch and reopened by path when the program
 * closed it behind our back. All I/O is raw syscalls; zlib's memory comes
 * from a private arena so that deflate never calls malloc.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <zlib.h>

#include "kprof.h"

#define ARENA_BYTES (1u << 20)
#define ZOUT_BYTES (256u << 10)

static struct {
	int fd;
	bool is_socket;
	bool gzip;
	bool broken;	  /* a stream we can no longer write consistently */
	bool warned_unix;
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

int kp_output_fd(void)
{
	return out.fd;
}

bool kp_output_is_ours(int fd)
{
	return fd >= 0 && fd == out.fd;
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

static int remember_identity(void)
{
	struct stat st;
	long err = kp_raw(SYS_fstat, out.fd, &st);
	if (err)
		return (int)err;
	out.dev = st.st_dev;
	out.ino = st.st_ino;
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

static void append_u64(char *dst, size_t cap, uint64_t v)
{
	char tmp[24];
	int i = 23;
	tmp[i] = 0;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	append(dst, cap, tmp + i);
}

static int mkdir_p(const char *dir)
{
	char tmp[KP_PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != 0)
			continue;
		char c = tmp[i];
		tmp[i] = 0;
		long err = kp_raw(SYS_mkdir, tmp, 0700);
		if (err && err != -EEXIST)
			return (int)err;
		if (!err) /* the program's umask (0777...) must not lock us out */
			kp_raw(SYS_chmod, tmp, 0700);
		tmp[i] = c;
	}
	return 0;
}

static int open_excl(const char *path)
{
	long fd = kp_raw(SYS_openat, AT_FDCWD, path,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) /* 0600 whatever the program's umask */
		kp_raw(SYS_fchmod, fd, 0600);
	return (int)fd;
}

/* KPROF_OUT with %p: expand, then NAME.1.msgpack, NAME.2.msgpack ... */
static int open_template(const char *tmpl)
{
	char base[KP_PATH_MAX] = "";
	for (const char *p = tmpl; *p; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			append_u64(base, sizeof(base), kp_proc.pid);
			p++;
		} else {
			char c[2] = { *p, 0 };
			append(base, sizeof(base), c);
		}
	}
	const char *suffix = ends_with(base, ".msgpack.gz") ? ".msgpack.gz" :
			     ends_with(base, ".msgpack")    ? ".msgpack" :
			     ends_with(base, ".gz")	    ? ".gz" : "";
	size_t stem_len = strlen(base) - strlen(suffix);
	for (unsigned n = 0; n < 1000; n++) {
		char path[KP_PATH_MAX];
		memcpy(path, base, stem_len);
		path[stem_len] = 0;
		if (n) {
			append(path, sizeof(path), ".");
			append_u64(path, sizeof(path), n);
		}
		append(path, sizeof(path), suffix);
		int fd = open_excl(path);
		if (fd == -EEXIST)
			continue;
		if (fd >= 0)
			memcpy(out.path, path, sizeof(path));
		return fd;
	}
	return -EEXIST;
}

/*
 * The trace directory must be one we can trust: not a symlink planted by
 * someone else (a link we own is followed), and owned by us or by root (a
 * directory another user made in /tmp could be theirs to read or swap).
 */
static int check_dir(const char *dir)
{
	long fd = kp_raw(SYS_openat, AT_FDCWD, dir,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	long euid = kp_raw0(SYS_geteuid);
	if (fd == -ELOOP || fd == -ENOTDIR) { /* O_DIRECTORY: a link says ENOTDIR */
		if (kp_raw(SYS_newfstatat, AT_FDCWD, dir, &st, AT_SYMLINK_NOFOLLOW))
			return (int)fd;
		if (!S_ISLNK(st.st_mode))
			return -ENOTDIR;
		if ((long)st.st_uid != euid)
			return -ELOOP;
		fd = kp_raw(SYS_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return (int)fd;
	long err = kp_raw(SYS_fstat, fd, &st);
	kp_raw(SYS_close, fd);
	if (err)
		return (int)err;
	if ((long)st.st_uid != euid && st.st_uid != 0)
		return -EPERM;
	return 0;
}

/* KPROF_OUT a directory: DIR/<exe>.<pid>.<n>.msgpack[.gz] */
static int open_in_dir(const char *dir, bool gzip)
{
	int err = mkdir_p(dir);
	if (!err)
		err = check_dir(dir);
	if (err) {
		static bool warned;
		if ((err == -ELOOP || err == -EPERM) && !warned) {
			warned = true;
			kp_write_stderr("kprof: not tracing into ");
			kp_write_stderr(dir);
			kp_write_stderr(err == -ELOOP ? ": a symlink another user owns\n" :
							": a directory another user owns\n");
		}
		return err;
	}
	const char *exe = strrchr(kp_proc.exe, '/');
	exe = exe ? exe + 1 : kp_proc.exe;
	if (!*exe)
		exe = "unknown";
	for (unsigned n = 0; n < 1000; n++) {
		char path[KP_PATH_MAX] = "";
		append(path, sizeof(path), dir);
		append(path, sizeof(path), "/");
		append(path, sizeof(path), exe);
		append(path, sizeof(path), ".");
		append_u64(path, sizeof(path), kp_proc.pid);
		append(path, sizeof(path), ".");
		append_u64(path, sizeof(path), n);
		append(path, sizeof(path), gzip ? ".msgpack.gz" : ".msgpack");
		int fd = open_excl(path);
		if (fd == -EEXIST)
			continue;
		if (fd >= 0)
			memcpy(out.path, path, sizeof(path));
		return fd;
	}
	return -EEXIST;
}

static int open_unix(const char *path)
{
	struct sockaddr_un sa;
	size_t n = strlen(path);
	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, n);
	long fd = kp_raw(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return (int)fd;
	long err = kp_raw(SYS_connect, fd, &sa, sizeof(sa));
	/*
	 * The listener must be ours (or root's): a socket another user bound
	 * in a shared directory would otherwise receive our command lines,
	 * paths and timings.
	 */
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (!err)
		err = kp_raw(SYS_getsockopt, fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	if (!err && cred.uid != 0 && (long)cred.uid != kp_raw0(SYS_geteuid))
		err = -EPERM;
	if (err) {
		kp_raw(SYS_close, fd);
		return (int)err;
	}
	return (int)fd;
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
	if (deflateInit2(&out.z, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
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

int kp_output_open(void)
{
	if (out.fd >= 0)
		return 0;
	if (out.stale_fd >= 0)
		close_stale();
	if (out.broken)
		return -EPIPE;
	if (out.path[0]) {
		/* ours, closed behind our back: append to it again */
		long fd = kp_raw(SYS_openat, AT_FDCWD, out.path,
				 O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return (int)fd;
		out.fd = move_high((int)fd, -1);
		struct stat st;
		if (kp_raw(SYS_fstat, out.fd, &st) == 0) {
			out.dev = st.st_dev;
			out.ino = st.st_ino;
			out.offset = (uint64_t)st.st_size;
		}
		return 0;
	}
	const char *dest = kp_config.out;
	bool gzip = kp_config.gzip || ends_with(dest, ".gz");
	int fd;
	out.is_socket = false;
	if (strncmp(dest, "unix:", 5) == 0) {
		fd = open_unix(dest + 5);
		if (fd >= 0) {
			out.is_socket = true;
			gzip = kp_config.gzip;
		} else {
			if (!out.warned_unix) {
				out.warned_unix = true;
				kp_write_stderr("kprof: cannot connect to ");
				kp_write_stderr(dest);
				kp_write_stderr(fd == -EPERM ?
						" (the listener is another user's); writing to " :
						" (nobody listening?); writing to ");
				kp_write_stderr(kp_config.fallback_dir);
				kp_write_stderr("/ instead\n");
			}
			gzip = kp_config.gzip;
			fd = open_in_dir(kp_config.fallback_dir, gzip);
		}
	} else if (strstr(dest, "%p")) {
		fd = open_template(dest);
	} else {
		fd = open_in_dir(dest, gzip);
	}
	if (fd < 0)
		return fd;
	out.fd = move_high(fd, -1);
	out.offset = 0;
	out.gzip = gzip;
	int err = remember_identity();
	if (!err && gzip)
		err = gzip_start();
	if (err) {
		kp_raw(SYS_close, out.fd);
		out.fd = -1;
		out.broken = true;
	}
	return err;
}

int kp_output_begin_batch(void)
{
	int err = kp_output_open();
	if (err)
		return err;
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
	out.batch_start = out.offset;
	return 0;
}

static int write_all(const char *buf, size_t len)
{
	while (len) {
		long n;
		if (out.is_socket)
			n = kp_raw(SYS_sendto, out.fd, buf, len, MSG_NOSIGNAL, NULL, 0);
		else
			n = kp_raw(SYS_write, out.fd, buf, len);
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

static int deflate_run(const char *buf, size_t len, int mode)
{
	out.z.next_in = (Bytef *)buf;
	out.z.avail_in = (uInt)len;
	for (;;) {
		out.z.next_out = out.zout;
		out.z.avail_out = ZOUT_BYTES;
		int zr = deflate(&out.z, mode);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		size_t have = ZOUT_BYTES - out.z.avail_out;
		if (have) {
			int err = write_all((const char *)out.zout, have);
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
	return write_all(buf, len);
}

int kp_output_end_batch(bool finish)
{
	if (!out.gzip)
		return 0;
	int err = deflate_run(NULL, 0, finish ? Z_FINISH : Z_SYNC_FLUSH);
	if (!err && finish)
		deflateReset(&out.z); /* a later batch starts a new gzip member */
	return err;
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
	if (out.gzip || out.is_socket) {
		out.broken = true;
		kp_raw(SYS_close, out.fd);
		out.fd = -1;
		return;
	}
	if (out.offset != out.batch_start) {
		kp_raw(SYS_ftruncate, out.fd, out.batch_start);
		kp_raw(SYS_lseek, out.fd, out.batch_start, SEEK_SET);
		out.offset = out.batch_start;
	}
}

/* No syscall here: the child closes the parent's descriptor at its first flush. */
void kp_output_after_fork(void)
{
	out.stale_fd = out.fd;
	out.fd = -1;
	out.broken = false;
	out.path[0] = 0;
	out.offset = 0;
	out.z_ready = false;
}

/* execve failed after the final flush: the stream goes on in the same file. */
void kp_output_exec_failed(void)
{
}
