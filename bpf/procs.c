/* SPDX-License-Identifier: MIT */
/*
 * The process images being traced, keyed by (tgid, image number), and
 * what user space learns about a process from /proc: executable, argv,
 * parent, open descriptors by kind, threads blocked in pipe I/O.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "syscalls.h"
#include "tracer.h"

#define IMAGE_BUCKETS 4096

struct image_node {
	struct image im;
	struct image_node *next;
};

static struct image_node *buckets[IMAGE_BUCKETS];
static unsigned n_live;

static unsigned bucket_of(uint32_t tgid, uint32_t image)
{
	return (tgid * 2654435761u + image) % IMAGE_BUCKETS;
}

struct image *image_find(uint32_t tgid, uint32_t image)
{
	for (struct image_node *n = buckets[bucket_of(tgid, image)]; n; n = n->next)
		if (n->im.tgid == tgid && n->im.image == image)
			return &n->im;
	return NULL;
}

struct image *image_new(uint32_t tgid, uint32_t image)
{
	struct image_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->im.tgid = tgid;
	n->im.image = image;
	n->im.stream = random_stream_id();
	unsigned b = bucket_of(tgid, image);
	n->next = buckets[b];
	buckets[b] = n;
	n_live++;
	return &n->im;
}

static void image_release(struct image *im)
{
	free(im->exe);
	for (unsigned i = 0; i < im->argc; i++)
		free(im->argv[i]);
	free(im->argv);
	free(im->exited_tids);
	free(im->names);
	free(im->done_tids);
	output_release(im->sink);
}

void image_free(struct image *im)
{
	unsigned b = bucket_of(im->tgid, im->image);
	for (struct image_node **p = &buckets[b]; *p; p = &(*p)->next) {
		if (&(*p)->im != im)
			continue;
		struct image_node *n = *p;
		*p = n->next;
		image_release(&n->im);
		free(n);
		n_live--;
		return;
	}
}

void images_each(void (*fn)(struct image *im, void *ctx), void *ctx)
{
	for (unsigned b = 0; b < IMAGE_BUCKETS; b++) {
		struct image_node *n = buckets[b];
		while (n) {
			struct image_node *next = n->next;
			fn(&n->im, ctx);
			n = next;
		}
	}
}

unsigned images_live(void)
{
	return n_live;
}

uint64_t random_stream_id(void)
{
	uint64_t id = 0;
	while (id == 0) {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);
	}
	return id;
}

uint64_t now_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool proc_exists(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return access(path, F_OK) == 0;
}

/* Reads a whole small /proc file; returns its length or -errno. */
static ssize_t read_proc(pid_t pid, const char *name, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = 0;
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return (ssize_t)len;
}

void image_set_argv_from_block(struct image *im, const char *args, unsigned len)
{
	unsigned argc = 0;
	for (unsigned i = 0; i < len; i++)
		if (args[i] == 0 || i == len - 1)
			argc++;
	char **argv = calloc(argc + 1, sizeof(*argv));
	if (!argv)
		return;
	unsigned n = 0;
	for (unsigned i = 0; i < len && n < argc;) {
		unsigned end = i;
		while (end < len && args[end])
			end++;
		argv[n++] = strndup(args + i, end - i);
		i = end + 1;
	}
	for (unsigned i = 0; i < im->argc; i++)
		free(im->argv[i]);
	free(im->argv);
	im->argv = argv;
	im->argc = n;
}

int image_fill_from_proc(struct image *im)
{
	char path[64], exe[PATH_MAX];
	pid_t pid = (pid_t)im->tgid;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		free(im->exe);
		im->exe = strdup(exe);
	}
	if (!im->argv) {
		static char args[65536];
		ssize_t len = read_proc(pid, "cmdline", args, sizeof(args));
		if (len > 0)
			image_set_argv_from_block(im, args, (unsigned)len);
	}
	if (!im->ppid) {
		char stat[1024];
		ssize_t len = read_proc(pid, "stat", stat, sizeof(stat) - 1);
		if (len > 0) {
			stat[len] = 0;
			/* "pid (comm) state ppid": comm may hold spaces and ')' */
			char *p = strrchr(stat, ')');
			int ppid;
			if (p && sscanf(p + 1, " %*c %d", &ppid) == 1)
				im->ppid = (uint32_t)ppid;
		}
	}
	return im->exe ? 0 : -ENOENT;
}

/* As the kernel side's inode_kind(): index into fds[] (file, pipe, socket, other). */
static int fd_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return 1;
	case S_IFSOCK:
		return 2;
	case S_IFREG:
	case S_IFDIR:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFLNK:
		return 0;
	default:
		return 3; /* anonymous inodes: fstat() shows no type */
	}
}

void proc_fds(pid_t pid, uint64_t fds[4])
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	memset(fds, 0, 4 * sizeof(fds[0]));
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		/* stat follows the link to the open file itself. */
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0)
			fds[fd_kind(st.st_mode)]++;
		else
			fds[3]++;
	}
	closedir(d);
}

static bool fd_is_pipe(pid_t pid, long fd)
{
	char path[96];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, fd);
	return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* /proc/PID/task/TID/syscall: "nr arg0 ..." of a blocked thread. */
void proc_pending_pipes(pid_t pid, uint64_t *readers, uint64_t *writers)
{
	static int nr_read = -2, nr_write, nr_readv, nr_writev;
	char path[64];

	if (nr_read == -2) {
		nr_read = kp_syscall_nr(NULL, "read");
		nr_write = kp_syscall_nr(NULL, "write");
		nr_readv = kp_syscall_nr(NULL, "readv");
		nr_writev = kp_syscall_nr(NULL, "writev");
	}
	*readers = *writers = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		char name[300], line[256];
		long nr, fd;
		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "task/%s/syscall", de->d_name);
		ssize_t len = read_proc(pid, name, line, sizeof(line) - 1);
		if (len <= 0)
			continue;
		line[len] = 0;
		if (sscanf(line, "%ld %lx", &nr, &fd) != 2 || !fd_is_pipe(pid, fd))
			continue;
		if (nr == nr_read || nr == nr_readv)
			(*readers)++;
		else if (nr == nr_write || nr == nr_writev)
			(*writers)++;
	}
	closedir(d);
}
