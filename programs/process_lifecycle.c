/* SPDX-License-Identifier: MIT */
/*
 * process_lifecycle: what starting and ending a process or thread costs.
 * Prints key=value metric lines for krunner's process-lifecycle suite:
 *   hello_start_ms  fork + execve of hello + its exit + waitpid
 *   fork_ms         fork + the child's _exit(0) + waitpid
 *   exec_ms         execve of hello up to its main (clock read by the child
 *                   just before execve, again by hello first thing)
 *   clone_ms        pthread_create + pthread_join of an empty thread
 * One line per value (programs/sampler.h: batches calibrated to
 * --min-time-ms, a warm-up discarded, --samples values per metric).
 * Usage: process_lifecycle --hello=PATH [--samples=N] [--warmups=N]
 *                          [--min-time-ms=N] [--iterations=N]
 * Exits non-zero, printing no metric for it, if any child fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hello_args.h"

static const char *hello_path;
static int devnull = -1;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int wait_ok(pid_t pid, const char *what)
{
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "process_lifecycle: waitpid (%s): %s\n", what, strerror(errno));
			return -1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "process_lifecycle: %s child failed (status 0x%x)\n", what, status);
		return -1;
	}
	return 0;
}

/* One fork + exec of hello to its exit; ns, or -1. */
static int64_t hello_start_once(void)
{
	int64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(devnull, STDOUT_FILENO);
		execl(hello_path, "hello", (char *)NULL);
		_exit(127);
	}
	if (wait_ok(pid, "hello") < 0)
		return -1;
	return now_ns() - t0;
}

static int64_t fork_once(void)
{
	int64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	if (wait_ok(pid, "fork") < 0)
		return -1;
	return now_ns() - t0;
}

/* The child reads the clock just before execve and hands it to hello, which
 * reports the difference on a pipe: execve through loading to main. */
static int64_t exec_once(void)
{
	int fds[2];
	if (pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		char since[64], report[32];
		close(fds[0]);
		dup2(devnull, STDOUT_FILENO);
		snprintf(report, sizeof(report), "--report-fd=%d", fds[1]);
		int64_t t0 = now_ns();
		snprintf(since, sizeof(since), "--since-ns=%" PRId64, t0);
		execl(hello_path, "hello", since, report, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	int64_t delta = -1;
	ssize_t n;
	do
		n = read(fds[0], &delta, sizeof(delta));
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (wait_ok(pid, "exec") < 0 || n != (ssize_t)sizeof(delta) || delta <= 0)
		return -1;
	return delta;
}

static void *empty_thread(void *arg)
{
	return arg;
}

static int64_t clone_once(void)
{
	pthread_t thread;
	int64_t t0 = now_ns();
	if (pthread_create(&thread, NULL, empty_thread, NULL) != 0)
		return -1;
	if (pthread_join(thread, NULL) != 0)
		return -1;
	return now_ns() - t0;
}

/* One operation of a metric whose once() gives its ns (or -1). */
static int once_op(void *once, int64_t *ns)
{
	int64_t t = ((int64_t (*)(void))once)();
	if (t < 0)
		return -1;
	ns[0] += t;
	return 0;
}

int main(int argc, char **argv)
{
	struct sampler_args sa;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hello_args(argc, argv, "process_lifecycle", &hello_path, &sa))
		return 1;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0) {
		perror("process_lifecycle: /dev/null");
		return 1;
	}
	static const struct {
		const char *name;
		int64_t (*once)(void);
	} metrics[] = {
		{ "hello_start_ms", hello_start_once },
		{ "fork_ms", fork_once },
		{ "exec_ms", exec_once },
		{ "clone_ms", clone_once },
	};
	enum { N_METRICS = sizeof(metrics) / sizeof(metrics[0]) };
	struct sampler_metric m[N_METRICS];
	struct sampler_group groups[N_METRICS];
	for (size_t i = 0; i < N_METRICS; i++) {
		m[i] = (struct sampler_metric){ metrics[i].name, sampler_ms };
		groups[i] = (struct sampler_group){ &m[i], 1, once_op, (void *)metrics[i].once,
						    NULL, NULL, 0 };
	}
	int failed;
	if (sampler_run_groups(&sa, groups, N_METRICS, &failed)) {
		fprintf(stderr, "process_lifecycle: %s: measurement failed\n", metrics[failed].name);
		return 1;
	}
	return 0;
}
