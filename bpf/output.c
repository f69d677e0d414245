/* SPDX-License-Identifier: MIT */
/*
 * Where records go: a directory with one file per process image
 * (DIR/<exe-basename>.<pid>.<n>.msgpack, the shim's naming), one file
 * holding every stream (records carry pid and stream, so they interleave),
 * or one connection to `kanalyze --listen` carrying every stream the same
 * way. Each file has one kp_writer; a failed write is remembered and
 * reported as a drop record once writing works again. A listener that
 * cannot be reached, or goes away, or stops reading, is replaced by the
 * fallback directory (see socket_lost()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "trace_dest.h"
#include "tracer.h"

/* Batches are flushed at once; a directory may hold thousands of sinks. */
#define SINK_BUFFER_BYTES (32 * 1024)
#define SHARED_BUFFER_BYTES (1024 * 1024)
/* A listener that takes no byte for this long is given up. */
#define LISTENER_STALL_MS 2000

static struct {
	char *path;
	bool is_dir;
	struct sink *shared;	/* single-file mode, or the listener's connection */
	struct sink *dead;	/* the connection, once lost (freed at close) */
	char *address;		/* "unix:PATH" as given */
	void (*on_lost)(struct sink *dead, const char *reason);
} out;

static uint64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Never blocks for long: the connection is non-blocking, and a listener
 * that takes nothing for LISTENER_STALL_MS (stopped, or swamped) counts
 * as gone, so that kbpf-trace goes on draining the kernel's buffers.
 */
static int send_all(struct sink *s, const char *buf, size_t len)
{
	uint64_t deadline = 0;
	while (len) {
		ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			deadline = 0;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (n == 0)
			return -EIO;
		uint64_t now = monotonic_ms();
		if (!deadline)
			deadline = now + LISTENER_STALL_MS;
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = s->fd, .events = POLLOUT };
		poll(&p, 1, (int)(deadline - now));
	}
	return 0;
}

static int write_all(void *ctx, const char *buf, size_t len)
{
	struct sink *s = ctx;
	if (s->is_socket)
		return send_all(s, buf, len);
	while (len) {
		ssize_t n = write(s->fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static struct sink *sink_new(int fd, size_t cap)
{
	struct sink *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->buf = malloc(cap);
	if (!s->buf) {
		free(s);
		return NULL;
	}
	s->fd = fd;
	kp_writer_init(&s->w, s->buf, cap, write_all, s);
	return s;
}

static void sink_free(struct sink *s)
{
	if (!s)
		return;
	sink_flush(s);
	if (s->dead)
		return; /* out.dead now: freed by output_close() */
	close(s->fd);
	free(s->buf);
	free(s);
}

/* Under sudo, the invoking user's uid (SUDO_UID), else -1. */
static long sudo_uid(void)
{
	const char *v = getenv("SUDO_UID");
	char *end = NULL;
	unsigned long uid = v && *v ? strtoul(v, &end, 10) : 0;
	return end && !*end ? (long)uid : -1;
}

/* mkdir -p, then the shim's check: a directory of ours, root's or (under
 * sudo) the invoking user's, reached through no link of another user's
 * (common/trace_dest.c). */
static int make_dir(const char *path)
{
	int err = kp_dest_mkdir(kp_dest_libc_sys, path);
	if (err) {
		fprintf(stderr, TOOL ": cannot create directory %s: %s\n", path,
			strerror(-err));
		return err;
	}
	err = kp_dest_check_dir(kp_dest_libc_sys, path, sudo_uid());
	if (err)
		fprintf(stderr, TOOL ": not tracing into %s: %s\n", path,
			err == -ELOOP ? "a symlink another user owns" :
			err == -EPERM ? "a directory another user owns" : strerror(-err));
	return err;
}

/*
 * The listener must be root's, our own user's, or (under sudo) the
 * invoking user's: a socket another user bound in a shared directory
 * would otherwise receive every traced command line, path and timing.
 */
static int connect_listener(const char *path)
{
	int fd = kp_dest_connect(kp_dest_libc_sys, path, sudo_uid());
	if (fd >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK)) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* From now on, new sinks are files in the fallback directory. */
static int use_fallback(void)
{
	char cwd[PATH_MAX], *dir;
	if (getcwd(cwd, sizeof(cwd)) && asprintf(&dir, "%s/" KP_DEST_FALLBACK_DIR, cwd) > 0) {
		free(out.path);
		out.path = dir;
	} else if (!out.path || strcmp(out.path, KP_DEST_FALLBACK_DIR) != 0) {
		free(out.path);
		out.path = strdup(KP_DEST_FALLBACK_DIR);
		if (!out.path)
			return -ENOMEM;
	}
	out.is_dir = true;
	return make_dir(out.path);
}

static int open_listener(const char *address)
{
	out.address = strdup(address);
	if (!out.address)
		return -ENOMEM;
	int fd = connect_listener(address + 5);
	if (fd < 0) {
		int err = use_fallback();
		fprintf(stderr, TOOL ": cannot connect to %s (%s); writing to %s/ "
			"instead\n", address,
			fd == -EPERM ? "the listener is another user's" :
			fd == -ECONNREFUSED || fd == -ENOENT ? "nobody listening?" :
							       strerror(-fd),
			out.path);
		return err;
	}
	out.shared = sink_new(fd, SHARED_BUFFER_BYTES);
	if (!out.shared) {
		close(fd);
		fprintf(stderr, TOOL ": out of memory\n");
		return -ENOMEM;
	}
	out.shared->is_socket = true;
	info(1, "streaming to %s\n", address);
	return 0;
}

void output_on_listener_lost(void (*fn)(struct sink *dead, const char *reason))
{
	out.on_lost = fn;
}

/*
 * The connection failed mid-run: say so once, switch to the fallback
 * directory, and let the collector move every stream there (each gets its
 * header again and a drop record for what went down with the connection).
 */
static void socket_lost(struct sink *s, int err)
{
	kp_writer_discard(&s->w);
	if (s->dead)
		return;
	s->dead = true;
	close(s->fd);
	s->fd = -1;
	out.shared = NULL;
	out.dead = s;
	char reason[160];
	snprintf(reason, sizeof(reason), "the listener on %s went away (%s)",
		 out.address,
		 err == -ETIMEDOUT ? "it took nothing for 2 s" : strerror(-err));
	int ferr = use_fallback();
	fprintf(stderr, TOOL ": %s; writing the rest to %s/%s\n", reason, out.path,
		ferr ? " (which failed)" : "");
	if (out.on_lost)
		out.on_lost(s, reason);
}

void sink_check(struct sink *s)
{
	if (!s->is_socket || s->dead)
		return;
	struct pollfd p = { .fd = s->fd, .events = POLLOUT };
	if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)))
		socket_lost(s, -EPIPE);
}

/*
 * "unix:PATH" is a listener; an existing directory, or a path ending in
 * '/', or a new path without a ".msgpack" suffix is a directory; anything
 * else is one file.
 */
int output_open(const char *path)
{
	struct stat st;
	size_t len = strlen(path);
	int err;

	if (strncmp(path, "unix:", 5) == 0)
		return open_listener(path);
	out.path = strdup(path);
	if (!out.path)
		return -ENOMEM;
	if (stat(path, &st) == 0)
		out.is_dir = S_ISDIR(st.st_mode);
	else
		out.is_dir = path[len - 1] == '/' ||
			     !(len > 8 && strcmp(path + len - 8, ".msgpack") == 0);
	if (out.is_dir) {
		return make_dir(path);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, TOOL ": cannot create %s: %s\n", path, strerror(-err));
		return err;
	}
	out.shared = sink_new(fd, SHARED_BUFFER_BYTES);
	if (!out.shared) {
		close(fd);
		fprintf(stderr, TOOL ": out of memory\n");
		return -ENOMEM;
	}
	return 0;
}

bool output_is_dir(void)
{
	return out.is_dir;
}

const char *output_path(void)
{
	return out.path;
}

struct sink *output_sink(const char *exe, pid_t pid)
{
	if (!out.is_dir && !out.shared)
		return NULL; /* the fallback directory could not be made */
	if (!out.is_dir) {
		out.shared->users++;
		return out.shared;
	}
	char head[PATH_MAX], name[PATH_MAX];
	int fd = -ENAMETOOLONG;
	if (kp_dest_head(head, sizeof(head), out.path, exe, (uint64_t)pid))
		fd = kp_dest_create(kp_dest_libc_sys, name, sizeof(name), head, true,
				    ".msgpack");
	if (fd < 0) {
		fprintf(stderr, TOOL ": cannot create a trace file for pid %d in %s: %s\n",
			(int)pid, out.path, strerror(-fd));
		return NULL;
	}
	struct sink *s = sink_new(fd, SINK_BUFFER_BYTES);
	if (!s)
		close(fd);
	else
		s->users = 1;
	return s;
}

void output_release(struct sink *s)
{
	if (!s)
		return;
	if (s->dead) {
		s->users--;
		return;
	}
	if (--s->users == 0 && s != out.shared)
		sink_free(s);
	else
		sink_flush(s);
}

void sink_flush(struct sink *s)
{
	int err = kp_writer_flush(&s->w);
	if (!err) {
		s->records_flushed = s->w.records;
		s->flushes++;
		return;
	}
	if (s->is_socket) {
		socket_lost(s, err);
		return;
	}
	/* What this batch held is gone; say so in the next batch. */
	s->lost_records += s->w.records - s->records_flushed;
	s->records_flushed = s->w.records;
	snprintf(s->lost_reason, sizeof(s->lost_reason), "write failed: %s",
		 strerror(-err));
	kp_writer_discard(&s->w);
}

void output_close(void)
{
	struct sink *s = out.shared;
	out.shared = NULL;
	sink_free(s);
	if (out.dead) {
		free(out.dead->buf);
		free(out.dead);
		out.dead = NULL;
	}
	free(out.path);
	out.path = NULL;
	free(out.address);
	out.address = NULL;
}
