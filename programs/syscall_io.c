/*
 * syscall_io: the cost of the basic I/O syscalls and of OFD record locks.
 * Prints key=value metric lines for krunner's syscall-io suite:
 *   pipe_mbps            --bytes (default 1 MB = 1,000,000 bytes) written
 *                        through a pipe to a forked child that reads and
 *                        checks them; from the first write to the reaped
 *                        child; MB/s = 10^6 bytes per second
 *   file_write_mbps      --bytes written to a new file in the page cache
 *                        (no fsync: the syscall path, not the disk)
 *   file_read_mbps       the same file read back
 *   syscall_latency_us   mean getpid() round trip over 1000 calls
 * Each of these is the median of --repeat=N measurements (default 5).
 *   lock_many_files_{acquire,conflict,replace,unlock}_us_per_op
 *       64 files holding one to three separated records each (127 records),
 *       every file opened twice (128 open file descriptions): acquire =
 *       F_OFD_SETLK write lock, conflict = F_OFD_GETLK from the other,
 *       independently opened description (must report the conflict),
 *       replace = write lock to read lock under the same owner, unlock
 *   lock_dense_file_{acquire,conflict,replace,unlock}_us_per_op
 *       the same four operations on 256 separated ranges of one file
 * Lock costs are means over --lock-iterations=N cycles (default 20).
 * Usage: syscall_io [--bytes=N] [--repeat=N] [--lock-iterations=N] [--dir=DIR]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES 65536
#define GETPID_CALLS 1000
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *values, int n)
{
	qsort(values, n, sizeof(*values), cmp_double);
	return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
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

static double pipe_mbps_once(void)
{
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
	int64_t ns = now_ns() - t0;
	if (err || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "syscall_io: pipe transfer failed\n");
		return -1;
	}
	return (double)io_bytes / 1e6 / ((double)ns / 1e9);
}

static double file_write_mbps_once(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int64_t t0 = now_ns();
	int err = write_all(fd, io_bytes);
	int64_t ns = now_ns() - t0;
	close(fd);
	return err ? -1 : (double)io_bytes / 1e6 / ((double)ns / 1e9);
}

static double file_read_mbps_once(const char *path)
{
	static char buf[CHUNK_BYTES];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int64_t t0 = now_ns();
	ssize_t got = read_all(fd, buf);
	int64_t ns = now_ns() - t0;
	close(fd);
	if (got != (ssize_t)io_bytes) {
		fprintf(stderr, "syscall_io: read back %zd bytes, wrote %zu\n", got, io_bytes);
		return -1;
	}
	return (double)io_bytes / 1e6 / ((double)ns / 1e9);
}

static double getpid_us_once(void)
{
	volatile pid_t sink = 0;
	int64_t t0 = now_ns();
	for (int i = 0; i < GETPID_CALLS; i++)
		sink += getpid();
	(void)sink;
	return (double)(now_ns() - t0) / GETPID_CALLS / 1e3;
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

static int lock_benchmark(const char *name, const struct lock_record *records, int n,
			  int iterations)
{
	int64_t phase_ns[PHASES] = { 0 };
	int err = lock_cycle(records, n, phase_ns);	/* warm-up */
	memset(phase_ns, 0, sizeof(phase_ns));
	for (int it = 0; !err && it < iterations; it++)
		err = lock_cycle(records, n, phase_ns);
	if (err) {
		fprintf(stderr, "syscall_io: %s: %s\n", name, strerror(-err));
		return err;
	}
	for (int p = 0; p < PHASES; p++)
		printf("%s_%s_us_per_op=%.6f\n", name, phase_names[p],
		       (double)phase_ns[p] / ((double)iterations * n) / 1e3);
	return 0;
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
static int lock_many_files(const char dir[DIR_MAX], int iterations)
{
	static struct lock_record records[MANY_RECORDS];
	int n = 0, err = 0;
	for (int f = 0; f < MANY_FILES; f++) {
		char path[4096];
		int holder, probe;
		snprintf(path, sizeof(path), "%s/lock-%02d", dir, f);
		err = open_pair(path, &holder, &probe);
		if (err)
			return err;
		for (int r = 0; r < 1 + f % 3; r++) {
			if (n == MANY_RECORDS)
				return -EOVERFLOW;
			records[n++] = (struct lock_record){ holder, probe, (off_t)r * 4096, 512 };
		}
	}
	if (n != MANY_RECORDS)
		return -EPROTO;
	err = lock_benchmark("lock_many_files", records, n, iterations);
	for (int i = 0; i < n; i++)
		if (i == 0 || records[i].holder_fd != records[i - 1].holder_fd) {
			close(records[i].holder_fd);
			close(records[i].probe_fd);
		}
	return err;
}

/* 256 separated ranges of 8 bytes, 16 bytes apart, on one file. */
static int lock_dense_file(const char dir[DIR_MAX], int iterations)
{
	static struct lock_record records[DENSE_RANGES];
	char path[4096];
	int holder, probe;
	snprintf(path, sizeof(path), "%s/lock-dense", dir);
	int err = open_pair(path, &holder, &probe);
	if (err)
		return err;
	for (int i = 0; i < DENSE_RANGES; i++)
		records[i] = (struct lock_record){ holder, probe, (off_t)i * 16, 8 };
	err = lock_benchmark("lock_dense_file", records, DENSE_RANGES, iterations);
	close(holder);
	close(probe);
	return err;
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

typedef double (*measure_fn)(const char *path);

static int report_median(const char *name, measure_fn fn, const char *path, int repeat)
{
	double values[repeat];
	for (int i = 0; i < repeat; i++) {
		values[i] = fn(path);
		if (!(values[i] > 0)) {
			fprintf(stderr, "syscall_io: %s: measurement failed\n", name);
			return -EIO;
		}
	}
	printf("%s=%.6f\n", name, median(values, repeat));
	return 0;
}

static double pipe_adapter(const char *path)
{
	(void)path;
	return pipe_mbps_once();
}

static double getpid_adapter(const char *path)
{
	(void)path;
	return getpid_us_once();
}

int main(int argc, char **argv)
{
	int repeat = 5, lock_iterations = 20;
	const char *base = getenv("TMPDIR");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!base || !*base)
		base = "/tmp";
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--bytes=", 8) == 0)
			io_bytes = strtoull(argv[i] + 8, NULL, 10);
		else if (strncmp(argv[i], "--repeat=", 9) == 0)
			repeat = atoi(argv[i] + 9);
		else if (strncmp(argv[i], "--lock-iterations=", 18) == 0)
			lock_iterations = atoi(argv[i] + 18);
		else if (strncmp(argv[i], "--dir=", 6) == 0)
			base = argv[i] + 6;
		else {
			fprintf(stderr, "syscall_io: unknown argument %s\n", argv[i]);
			return 1;
		}
	}
	if (io_bytes == 0 || repeat < 1 || repeat > 1000 || lock_iterations < 1) {
		fprintf(stderr, "usage: syscall_io [--bytes=N] [--repeat=N] "
			"[--lock-iterations=N] [--dir=DIR]\n");
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

	int err = report_median("pipe_mbps", pipe_adapter, NULL, repeat);
	if (!err)
		err = report_median("file_write_mbps", file_write_mbps_once, file, repeat);
	if (!err)
		err = report_median("file_read_mbps", file_read_mbps_once, file, repeat);
	if (!err)
		err = report_median("syscall_latency_us", getpid_adapter, NULL, repeat);
	if (!err)
		err = lock_many_files(dir, lock_iterations);
	if (!err)
		err = lock_dense_file(dir, lock_iterations);
	remove_scratch(dir);
	return err ? 1 : 0;
}
