/* SPDX-License-Identifier: MIT */
/*
 * syscall_io: the cost of the basic I/O syscalls and of OFD record locks.
 * Prints key=value metric lines for krunner's syscall-io suite, one line
 * per value (programs/sampler.h: batches calibrated to --min-time-ms, a
 * warm-up discarded, --samples values per metric):
 *   pipe_mbps            --bytes (default 1 MB = 1,000,000 bytes) written
 *                        through a pipe to a forked child that reads and
 *                        checks them; from the first write to the reaped
 *                        child; MB/s = 10^6 bytes per second. Both ends
 *                        run on one CPU (the one each batch starts
 *                        on): across two, the figure is where the
 *                        scheduler puts the reader (1.6 or 5.3 GB/s from
 *                        one transfer to the next on a 2-vCPU guest)
 *   file_write_mbps      --bytes written to a new file in the page cache
 *                        (no fsync: the syscall path, not the disk)
 *   file_read_mbps       the same file read back
 *   syscall_latency_us   one getpid() round trip
 *   lock_many_files_{acquire,conflict,replace,unlock}_us_per_op
 *       64 files holding one to three separated records each (127 records),
 *       every file opened twice (128 open file descriptions): acquire =
 *       F_OFD_SETLK write lock, conflict = F_OFD_GETLK from the other,
 *       independently opened description (must report the conflict),
 *       replace = write lock to read lock under the same owner, unlock
 *   lock_dense_file_{acquire,conflict,replace,unlock}_us_per_op
 *       the same four operations on 256 separated ranges of one file
 * Lock costs are per record: a cycle over every record is one operation.
 * Usage: syscall_io [--bytes=N] [--dir=DIR] [--samples=N] [--warmups=N]
 *                   [--min-time-ms=N] [--iterations=N]
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"

#define CHUNK_BYTES 65536
#define MANY_FILES 64
#define MANY_RECORDS 127
#define DENSE_RANGES 256
#define DIR_MAX 3072		/* scratch directory path; file names fit after it */

enum lock_phase { PHASE_ACQUIRE, PHASE_CONFLICT, PHASE_REPLACE, PHASE_UNLOCK, PHASES };
static const char *const phase_names[PHASES] = { "acquire", "conflict", "replace", "unlock" };

struct lock_record {
	int holder_fd;	/* the description that owns the lock */
	int probe_fd;	/* an independent description of the same file */
	off_t start;
	off_t len;
};

static size_t io_bytes = 1000000;
static char chunk[CHUNK_BYTES];

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int write_all(int fd, size_t bytes)
{
	while (bytes) {
		size_t want = bytes < CHUNK_BYTES ? bytes : CHUNK_BYTES;
		ssize_t n = write(fd, chunk, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		bytes -= (size_t)n;
	}
	return 0;
}

/* Reads to EOF; the byte count, or -1. */
static ssize_t read_all(int fd, char *buf)
{
	ssize_t total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK_BYTES);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return total;
		total += n;
	}
}

/* One transfer through a pipe to a child that checks it: ns into ns[0]. */
static int pipe_op(void *arg, int64_t *ns)
{
	(void)arg;
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static char buf[CHUNK_BYTES];
		close(fds[1]);
		_exit(read_all(fds[0], buf) == (ssize_t)io_bytes ? 0 : 1);
	}
	close(fds[0]);
	int64_t t0 = now_ns();
	int err = write_all(fds[1], io_bytes);
	close(fds[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ns[0] += now_ns() - t0;
	if (err || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "syscall_io: pipe transfer failed\n");
		return -1;
	}
	return 0;
}

static int file_write_op(void *path, int64_t *ns)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int64_t t0 = now_ns();
	int err = write_all(fd, io_bytes);
	ns[0] += now_ns() - t0;
	close(fd);
	return err ? -1 : 0;
}

static int file_read_op(void *path, int64_t *ns)
{
	static char buf[CHUNK_BYTES];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int64_t t0 = now_ns();
	ssize_t got = read_all(fd, buf);
	ns[0] += now_ns() - t0;
	close(fd);
	if (got != (ssize_t)io_bytes) {
		fprintf(stderr, "syscall_io: read back %zd bytes, wrote %zu\n", got, io_bytes);
		return -1;
	}
	return 0;
}

/* 100 getpid() per operation: the clock reads stay out of the figure. */
#define GETPID_PER_OP 100
static int getpid_op(void *arg, int64_t *ns)
{
	(void)arg;
	volatile pid_t sink = 0;
	int64_t t0 = now_ns();
	for (int i = 0; i < GETPID_PER_OP; i++)
		sink += getpid();
	(void)sink;
	ns[0] += now_ns() - t0;
	return 0;
}

/* MB/s of io_bytes moved in mean_ns */
static double mbps(double mean_ns, void *arg)
{
	(void)arg;
	return (double)io_bytes / 1e6 / (mean_ns / 1e9);
}

static double getpid_us(double mean_ns, void *arg)
{
	(void)arg;
	return mean_ns / GETPID_PER_OP / 1e3;
}

static int set_lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start,
			    .l_len = len, .l_pid = 0 };
	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* One cycle of the four phases over every record; adds ns per phase. */
static int lock_cycle(const struct lock_record *records, int n, int64_t phase_ns[PHASES])
{
	int64_t t0 = now_ns();
	for (int i = 0; i < n; i++)
		if (set_lock(records[i].holder_fd, F_WRLCK, records[i].start, records[i].len) < 0)
			return -errno;
	int64_t t1 = now_ns();
	for (int i = 0; i < n; i++) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
				    .l_start = records[i].start, .l_len = records[i].len };
		if (fcntl(records[i].probe_fd, F_OFD_GETLK, &fl) < 0)
			return -errno;
		if (fl.l_type != F_WRLCK || fl.l_start != records[i].start) {
			fprintf(stderr, "syscall_io: F_OFD_GETLK missed the write lock at %lld\n",
				(long long)records[i].start);
			return -EPROTO;
		}
	}
	int64_t t2 = now_ns();
	for (int i = 0; i < n; i++)
		if (set_lock(records[i].holder_fd, F_RDLCK, records[i].start, records[i].len) < 0)
			return -errno;
	int64_t t3 = now_ns();
	for (int i = 0; i < n; i++)
		if (set_lock(records[i].holder_fd, F_UNLCK, records[i].start, records[i].len) < 0)
			return -errno;
	int64_t t4 = now_ns();
	phase_ns[PHASE_ACQUIRE] += t1 - t0;
	phase_ns[PHASE_CONFLICT] += t2 - t1;
	phase_ns[PHASE_REPLACE] += t3 - t2;
	phase_ns[PHASE_UNLOCK] += t4 - t3;
	return 0;
}

struct lock_set {
	const struct lock_record *records;
	int n;
};

static int lock_op(void *arg, int64_t *ns)
{
	const struct lock_set *set = arg;
	int err = lock_cycle(set->records, set->n, ns);
	if (err)
		fprintf(stderr, "syscall_io: lock cycle: %s\n", strerror(-err));
	return err ? -1 : 0;
}

/* us per record of a cycle's phase */
static double per_record_us(double mean_ns, void *arg)
{
	return mean_ns / ((const struct lock_set *)arg)->n / 1e3;
}

/* The four phase metrics of a lock set named name ("lock_dense_file"). */
static void lock_metrics(const char *name, char names[PHASES][64],
			 struct sampler_metric metrics[PHASES])
{
	for (int p = 0; p < PHASES; p++) {
		snprintf(names[p], 64, "%s_%s_us_per_op", name, phase_names[p]);
		metrics[p] = (struct sampler_metric){ names[p], per_record_us };
	}
}

static int open_pair(const char *path, int *holder, int *probe)
{
	*holder = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*holder < 0)
		return -errno;
	*probe = open(path, O_RDWR | O_CLOEXEC);
	if (*probe < 0)
		return -errno;
	return 0;
}

/* 64 files, file i holding 1 + i % 3 records: 127 records, 128 descriptions. */
static int lock_many_files(const char dir[DIR_MAX], struct lock_record records[MANY_RECORDS])
{
	int n = 0;
	for (int f = 0; f < MANY_FILES; f++) {
		char path[4096];
		int holder, probe;
		snprintf(path, sizeof(path), "%s/lock-%02d", dir, f);
		int err = open_pair(path, &holder, &probe);
		if (err)
			return err;
		for (int r = 0; r < 1 + f % 3; r++) {
			if (n == MANY_RECORDS)
				return -EOVERFLOW;
			records[n++] = (struct lock_record){ holder, probe, (off_t)r * 4096, 512 };
		}
	}
	return n == MANY_RECORDS ? 0 : -EPROTO;
}

/* 256 separated ranges of 8 bytes, 16 bytes apart, on one file. */
static int lock_dense_file(const char dir[DIR_MAX], struct lock_record records[DENSE_RANGES])
{
	char path[4096];
	int holder, probe;
	snprintf(path, sizeof(path), "%s/lock-dense", dir);
	int err = open_pair(path, &holder, &probe);
	if (err)
		return err;
	for (int i = 0; i < DENSE_RANGES; i++)
		records[i] = (struct lock_record){ holder, probe, (off_t)i * 16, 8 };
	return 0;
}

/* Closes the descriptions of records (records of one file are adjacent). */
static void close_records(const struct lock_record *records, int n)
{
	for (int i = 0; i < n; i++)
		if (records[i].holder_fd >= 0 &&
		    (i == 0 || records[i].holder_fd != records[i - 1].holder_fd)) {
			close(records[i].holder_fd);
			close(records[i].probe_fd);
		}
}

static void remove_scratch(const char dir[DIR_MAX])
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/io-file", dir);
	unlink(path);
	for (int f = 0; f < MANY_FILES; f++) {
		snprintf(path, sizeof(path), "%s/lock-%02d", dir, f);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/lock-dense", dir);
	unlink(path);
	rmdir(dir);
}

/* The pipe's two ends on one CPU (the one the batch starts on), the
 * other groups as the process was: set around each pipe batch. */
static cpu_set_t all_cpus;
static bool may_pin;

static int pin_here(void *arg)
{
	(void)arg;
	cpu_set_t one;
	int cpu = sched_getcpu();
	if (!may_pin || cpu < 0)
		return 0;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) == 0 ? 0 : (may_pin = false, 0);
}

static int unpin(void *arg)
{
	(void)arg;
	if (may_pin && sched_setaffinity(0, sizeof(all_cpus), &all_cpus) < 0) {
		perror("syscall_io: sched_setaffinity");
		return -1;
	}
	return 0;
}

/* Every metric, the groups' samples taken in turn. 0 or -EIO. */
static int measure(const struct sampler_args *sa, const char *file,
		   struct lock_set *many, struct lock_set *dense)
{
	static char many_names[PHASES][64], dense_names[PHASES][64];
	static const struct sampler_metric pipe_m = { "pipe_mbps", mbps },
		write_m = { "file_write_mbps", mbps }, read_m = { "file_read_mbps", mbps },
		getpid_m = { "syscall_latency_us", getpid_us };
	struct sampler_metric many_m[PHASES], dense_m[PHASES];
	lock_metrics("lock_many_files", many_names, many_m);
	lock_metrics("lock_dense_file", dense_names, dense_m);
	struct sampler_group groups[] = {
		{ &pipe_m, 1, pipe_op, NULL, pin_here, unpin, 0 },
		{ &write_m, 1, file_write_op, (void *)file, NULL, NULL, 0 },
		{ &read_m, 1, file_read_op, (void *)file, NULL, NULL, 0 },
		{ &getpid_m, 1, getpid_op, NULL, NULL, NULL, 0 },
		{ many_m, PHASES, lock_op, many, NULL, NULL, 0 },
		{ dense_m, PHASES, lock_op, dense, NULL, NULL, 0 },
	};
	int failed;
	if (sampler_run_groups(sa, groups, (int)(sizeof(groups) / sizeof(groups[0])), &failed)) {
		fprintf(stderr, "syscall_io: %s: measurement failed\n",
			groups[failed].metrics[0].name);
		return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sampler_args sa = SAMPLER_DEFAULTS;
	const char *base = getenv("TMPDIR");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!base || !*base)
		base = "/tmp";
	for (int i = 1; i < argc; i++) {
		int taken = sampler_parse_arg(&sa, argv[i]);
		if (taken < 0) {
			fprintf(stderr, "syscall_io: bad value in %s\n", argv[i]);
			return 1;
		}
		if (taken)
			continue;
		if (strncmp(argv[i], "--bytes=", 8) == 0)
			io_bytes = strtoull(argv[i] + 8, NULL, 10);
		else if (strncmp(argv[i], "--dir=", 6) == 0)
			base = argv[i] + 6;
		else {
			fprintf(stderr, "syscall_io: unknown argument %s\n", argv[i]);
			return 1;
		}
	}
	if (io_bytes == 0) {
		fprintf(stderr, "usage: syscall_io [--bytes=N] [--dir=DIR] " SAMPLER_USAGE "\n");
		return 1;
	}
	memset(chunk, 'k', sizeof(chunk));
	char dir[DIR_MAX], file[4096];
	if (strlen(base) > DIR_MAX - 32) {
		fprintf(stderr, "syscall_io: directory name too long: %s\n", base);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/syscall_io.XXXXXX", base);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "syscall_io: cannot create a directory in %s: %s\n",
			base, strerror(errno));
		return 1;
	}
	snprintf(file, sizeof(file), "%s/io-file", dir);

	may_pin = sched_getaffinity(0, sizeof(all_cpus), &all_cpus) == 0;
	static struct lock_record many_records[MANY_RECORDS], dense_records[DENSE_RANGES];
	for (int i = 0; i < MANY_RECORDS; i++)
		many_records[i].holder_fd = -1;
	for (int i = 0; i < DENSE_RANGES; i++)
		dense_records[i].holder_fd = -1;
	struct lock_set many = { many_records, MANY_RECORDS }, dense = { dense_records, DENSE_RANGES };
	int err = lock_many_files(dir, many_records);
	if (!err)
		err = lock_dense_file(dir, dense_records);
	if (err)
		fprintf(stderr, "syscall_io: lock files: %s\n", strerror(-err));
	else
		err = measure(&sa, file, &many, &dense);
	close_records(many_records, MANY_RECORDS);
	close_records(dense_records, DENSE_RANGES);
	remove_scratch(dir);
	return err ? 1 : 0;
}
