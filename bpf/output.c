/*
 * Where records go: a directory with one file per process image
 * (DIR/<exe-basename>.<pid>.<n>.msgpack, the shim's naming), or one file
 * holding every stream (records carry pid and stream, so they interleave).
 * Each file has one kp_writer; a failed write is remembered and reported
 * as a drop record once writing works again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer.h"

/* Batches are flushed at once; a directory may hold thousands of sinks. */
#define SINK_BUFFER_BYTES (32 * 1024)
#define SHARED_BUFFER_BYTES (1024 * 1024)

static struct {
	char *path;
	bool is_dir;
	struct sink *shared;	/* single-file mode */
} out;

static int write_all(void *ctx, const char *buf, size_t len)
{
	struct sink *s = ctx;
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
	close(s->fd);
	free(s->buf);
	free(s);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * An existing directory, or a path ending in '/', or a new path without a
 * ".msgpack" suffix is a directory; anything else is one file.
 */
int output_open(const char *path)
{
	struct stat st;
	size_t len = strlen(path);
	int err;

	out.path = strdup(path);
	if (!out.path)
		return -ENOMEM;
	if (stat(path, &st) == 0)
		out.is_dir = S_ISDIR(st.st_mode);
	else
		out.is_dir = path[len - 1] == '/' ||
			     !(len > 8 && strcmp(path + len - 8, ".msgpack") == 0);
	if (out.is_dir) {
		err = mkdir_p(path);
		if (err) {
			fprintf(stderr, TOOL ": cannot create directory %s: %s\n",
				path, strerror(-err));
			return err;
		}
		return 0;
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
	if (!out.is_dir) {
		out.shared->users++;
		return out.shared;
	}
	const char *base = exe && *exe ? strrchr(exe, '/') : NULL;
	base = base ? base + 1 : (exe && *exe ? exe : "unknown");
	for (unsigned n = 0; n < 10000; n++) {
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "%s/%s.%d.%u.msgpack", out.path,
			 base, (int)pid, n);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			fprintf(stderr, TOOL ": cannot create %s: %s\n", name,
				strerror(errno));
			return NULL;
		}
		struct sink *s = sink_new(fd, SINK_BUFFER_BYTES);
		if (!s)
			close(fd);
		else
			s->users = 1;
		return s;
	}
	return NULL;
}

void output_release(struct sink *s)
{
	if (!s)
		return;
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
	sink_free(out.shared);
	out.shared = NULL;
	free(out.path);
	out.path = NULL;
}
