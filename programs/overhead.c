/* SPDX-License-Identifier: MIT */
/*
 * overhead: the micro workloads of krunner's overhead suite. Each makes a
 * known number of cheap syscalls through libc, so that what a profiler adds
 * per call stands out against the call itself. The suite runs it plain and
 * under every profiler, interleaved.
 *
 *   --workload=getppid   getppid() loop
 *   --workload=read      1-byte read() from /dev/zero
 *   --workload=eagain    1-byte read() from an empty O_NONBLOCK pipe (EAGAIN)
 *   --workload=threads   --threads=N (default 4) threads, each calls/N of the
 *                        three above in turn; wall time of the whole process
 *   --workload=memory    no timing: VmRSS/VmSize with one thread, then with
 *                        --threads more threads that each made one call
 *   --workload=exec      fork, execve of /bin/true and waitpid, as a shell
 *                        runs a command: a "call" is one such round, and
 *                        the warm-up is calls/10 of them (at least 1): a
 *                        profiler's per-process cost, its start-up and exit
 *
 * Prints (timed workloads):
 *   calls=N              syscalls made in the timed loop (exactly)
 *   ns_per_call=X        wall-clock ns of the loop / calls, CLOCK_MONOTONIC
 * memory prints rss_1_kib, vsz_1_kib, rss_n_kib, vsz_n_kib (smaps_rollup Anonymous,
 * VmSize) and threads.
 * A warm-up of calls/10 (at least 100), then for at least --warmup-ms
 * (default 0), runs first, untimed, so a profiler's per-thread setup (and
 * the shim's clock calibration) is not in the loop.
 * Usage: overhead --workload=W [--calls=N] [--threads=N] [--warmup-ms=MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum workload { W_GETPPID, W_READ, W_EAGAIN, W_THREADS, W_MEMORY, W_EXEC };

static int zero_fd = -1;
static int empty_pipe[2] = { -1, -1 };
static pthread_barrier_t start_barrier, done_barrier;
static long calls_per_thread;
static volatile int failed;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void one_getppid(void)
{
	if (getppid() <= 0)
		failed = 1;
}

static void one_read(void)
{
	char c;
	if (read(zero_fd, &c, 1) != 1)
		failed = 1;
}

static void one_eagain(void)
{
	char c;
	if (read(empty_pipe[0], &c, 1) != -1 || errno != EAGAIN)
		failed = 1;
}

/* One command run as a shell runs it: fork, exec, wait; exit status 0. */
static void one_exec(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		failed = 1;
}

static void loop(enum workload w, long n)
{
	switch (w) {
	case W_EXEC:
		for (long i = 0; i < n; i++)
			one_exec();
		break;
	case W_GETPPID:
		for (long i = 0; i < n; i++)
			one_getppid();
		break;
	case W_READ:
		for (long i = 0; i < n; i++)
			one_read();
		break;
	case W_EAGAIN:
		for (long i = 0; i < n; i++)
			one_eagain();
		break;
	default:
		/* the mix: the three calls in turn */
		for (long i = 0; i < n; i++) {
			switch (i % 3) {
			case 0: one_getppid(); break;
			case 1: one_read(); break;
			default: one_eagain(); break;
			}
		}
		break;
	}
}

static long warmup_ms;

static long warmup_calls(enum workload w, long n)
{
	if (w == W_EXEC)
		return n / 10 > 1 ? n / 10 : 1;
	return n / 10 > 100 ? n / 10 : 100;
}

/* Untimed: calls/10 (at least 100), then more until warmup_ms have passed. */
static void warm_up(enum workload w, long n)
{
	int64_t end = now_ns() + (int64_t)warmup_ms * 1000000;
	loop(w, warmup_calls(w, n));
	while (now_ns() < end)
		loop(w, w == W_EXEC ? 1 : 1000);
}

static void *mix_thread(void *arg)
{
	(void)arg;
	warm_up(W_THREADS, calls_per_thread);
	pthread_barrier_wait(&start_barrier);
	loop(W_THREADS, calls_per_thread);
	pthread_barrier_wait(&done_barrier);
	return NULL;
}

static void *memory_thread(void *arg)
{
	(void)arg;
	one_getppid();
	pthread_barrier_wait(&start_barrier);	/* counted ... */
	pthread_barrier_wait(&done_barrier);	/* ... then released */
	return NULL;
}

/*
 * Resident anonymous memory and virtual size of this process in KiB.
 * Anonymous from smaps_rollup
 * (a page-table walk, exact); /proc/self/status's VmRSS comes from per-CPU
 * counters that may lag by several pages.
 */
static long proc_field(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	long value = -1;
	size_t n = strlen(key);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0)
			value = strtol(line + n, NULL, 10);
	fclose(f);
	return value;
}

static int read_vm(long *rss_kib, long *vsz_kib)
{
	*rss_kib = proc_field("/proc/self/smaps_rollup", "Anonymous:");
	*vsz_kib = proc_field("/proc/self/status", "VmSize:");
	return *rss_kib < 0 || *vsz_kib < 0 ? -1 : 0;
}

static int run_threads(enum workload w, long calls, int nthreads)
{
	pthread_t tid[64];
	long rss1, vsz1, rssn, vszn;
	calls_per_thread = calls / nthreads;
	if (w == W_MEMORY) {
		one_getppid();
		if (read_vm(&rss1, &vsz1))
			return -1;
	}
	pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads + 1);
	pthread_barrier_init(&done_barrier, NULL, (unsigned)nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		int err = pthread_create(&tid[i], NULL, w == W_MEMORY ? memory_thread : mix_thread,
					 NULL);
		if (err) {
			fprintf(stderr, "overhead: pthread_create: %s\n", strerror(err));
			return -1;
		}
	}
	pthread_barrier_wait(&start_barrier);
	int64_t t0 = now_ns();
	if (w == W_MEMORY && read_vm(&rssn, &vszn))
		return -1;
	pthread_barrier_wait(&done_barrier);
	int64_t t1 = now_ns();
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	if (w == W_MEMORY) {
		printf("threads=%d\nrss_1_kib=%ld\nvsz_1_kib=%ld\nrss_n_kib=%ld\nvsz_n_kib=%ld\n",
		       nthreads, rss1, vsz1, rssn, vszn);
		return 0;
	}
	long total = calls_per_thread * nthreads;
	printf("calls=%ld\nns_per_call=%.2f\n", total, (double)(t1 - t0) / (double)total);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	long calls = 200000;
	int nthreads = 4;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--workload=", 11) == 0) {
			name = argv[i] + 11;
		} else if (strncmp(argv[i], "--calls=", 8) == 0) {
			calls = strtol(argv[i] + 8, NULL, 10);
		} else if (strncmp(argv[i], "--warmup-ms=", 12) == 0) {
			warmup_ms = strtol(argv[i] + 12, NULL, 10);
		} else if (strncmp(argv[i], "--threads=", 10) == 0) {
			nthreads = (int)strtol(argv[i] + 10, NULL, 10);
		} else {
			fprintf(stderr, "overhead: unknown argument %s\n"
				"usage: overhead --workload=getppid|read|eagain|threads|memory|exec "
				"[--calls=N] [--threads=N] [--warmup-ms=MS]\n", argv[i]);
			return 2;
		}
	}
	static const char *const names[] = { "getppid", "read", "eagain", "threads", "memory",
					     "exec" };
	int w = -1;
	for (int i = 0; name && i < 6; i++)
		if (strcmp(name, names[i]) == 0)
			w = i;
	if (w < 0 || calls < 1 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "overhead: need --workload=getppid|read|eagain|threads|memory|exec, "
			"--calls >= 1, 1 <= --threads <= 64\n");
		return 2;
	}
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0 || pipe2(empty_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		perror("overhead: /dev/zero or pipe");
		return 1;
	}
	if (w == W_THREADS || w == W_MEMORY) {
		if (run_threads((enum workload)w, calls, nthreads))
			return 1;
	} else {
		warm_up((enum workload)w, calls);
		int64_t t0 = now_ns();
		loop((enum workload)w, calls);
		int64_t t1 = now_ns();
		printf("calls=%ld\nns_per_call=%.2f\n", calls, (double)(t1 - t0) / (double)calls);
	}
	if (failed) {
		fprintf(stderr, "overhead: a call did not return what it must\n");
		return 1;
	}
	return 0;
}
