/* SPDX-License-Identifier: MIT */
/*
 * exec: fork/exec of a suite program with launcher and profiler applied,
 * stdout captured line by line (programs print key=value metric lines).
 * Separate from the suite logic so that every suite, and kanalyze and
 * version probes, start processes the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"

#define MAX_ARGS 4096
#define LINE_MAX_BYTES 65536

static volatile sig_atomic_t interrupted;
static volatile pid_t running_child;

static void on_interrupt(int sig)
{
	interrupted = sig;
	pid_t child = running_child;
	if (child > 0)
		kill(child, sig);
}

int exec_catch_interrupts(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0)
		return -errno;
	return 0;
}

bool exec_interrupted(void)
{
	return interrupted != 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *exec_status_text(int status, char *buf, unsigned len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "wait status 0x%x", status);
	return buf;
}

/* The full command line: [kbpf-trace -o DIR --] [launcher...] program... */
static int build_argv(const struct exec_spec *spec, const char **out)
{
	int n = profiler_prefix(&spec->profiler, out, MAX_ARGS);
	if (n < 0)
		return n;
	for (int i = 0; spec->launcher_argv && spec->launcher_argv[i]; i++) {
		if (n >= MAX_ARGS - 1)
			return -E2BIG;
		out[n++] = spec->launcher_argv[i];
	}
	for (int i = 0; spec->argv[i]; i++) {
		if (n >= MAX_ARGS - 1)
			return -E2BIG;
		out[n++] = spec->argv[i];
	}
	out[n] = NULL;
	return n;
}

/* In the child: the profiler's environment, then exec. Never returns. */
static void child_exec(const struct exec_spec *spec, const char **argv, int out_fd,
		       int report_fd)
{
	/* With a timeout: its own process group, so that the kill reaches the
	 * whole tree, and no terminal input (a background group reading the
	 * terminal would stop). Without one it stays in ours and gets the
	 * user's Ctrl-C with us. */
	if (spec->timeout_ms > 0) {
		int null_fd = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		if (null_fd >= 0)
			dup2(null_fd, STDIN_FILENO);
	}
	if (spec->discard_stdout) {
		int null_fd = open("/dev/null", O_WRONLY);
		if (null_fd < 0 || dup2(null_fd, STDOUT_FILENO) < 0)
			goto fail;
	} else if (dup2(out_fd, STDOUT_FILENO) < 0) {
		goto fail;
	}
	if (spec->quiet_stderr) {
		int null_fd = open("/dev/null", O_WRONLY);
		if (null_fd >= 0)
			dup2(null_fd, STDERR_FILENO);
	}
	int perr = profiler_setenv(&spec->profiler);
	if (perr) {
		errno = -perr;
		goto fail;
	}
	execvp(argv[0], (char *const *)argv);
fail:;
	int err = errno;
	if (write(report_fd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

/* Splits buffered output into lines for the callback; keeps the tail. */
static int deliver_lines(const struct exec_spec *spec, char *buf, size_t *used, bool final,
			 bool *stopped)
{
	size_t start = 0;
	for (size_t i = 0; i < *used; i++) {
		if (buf[i] != '\n')
			continue;
		buf[i] = '\0';
		if (!*stopped && spec->on_line && spec->on_line(spec->arg, buf + start))
			*stopped = true;
		start = i + 1;
	}
	if (final && start < *used) {
		buf[*used] = '\0';
		if (!*stopped && spec->on_line && spec->on_line(spec->arg, buf + start))
			*stopped = true;
		start = *used;
	}
	/* A line longer than the buffer is cut into pieces rather than lost. */
	if (start == 0 && *used == LINE_MAX_BYTES) {
		buf[*used] = '\0';
		if (!*stopped && spec->on_line && spec->on_line(spec->arg, buf))
			*stopped = true;
		start = *used;
	}
	memmove(buf, buf + start, *used - start);
	*used -= start;
	return 0;
}

int exec_run(const struct exec_spec *spec, int *status, bool *timed_out)
{
	static const char *argv[MAX_ARGS];
	int out_pipe[2] = { -1, -1 }, report_pipe[2] = { -1, -1 };
	char *buf = NULL;
	int err = 0;

	*status = 0;
	if (timed_out)
		*timed_out = false;
	if (build_argv(spec, argv) < 0) {
		fprintf(stderr, "krunner: %s: too many arguments\n", spec->argv[0]);
		return -E2BIG;
	}
	buf = malloc(LINE_MAX_BYTES + 1);
	if (!buf)
		return -ENOMEM;
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(report_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		fprintf(stderr, "krunner: pipe: %s\n", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		err = -errno;
		fprintf(stderr, "krunner: fork: %s\n", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		child_exec(spec, argv, out_pipe[1], report_pipe[1]);
	}
	running_child = pid;
	if (spec->timeout_ms > 0)
		setpgid(pid, pid);	/* both sides: no race with the kill below */
	close(out_pipe[1]);
	out_pipe[1] = -1;
	close(report_pipe[1]);
	report_pipe[1] = -1;

	size_t used = 0;
	bool stopped = false, killed = false;
	long long deadline = spec->timeout_ms > 0 ? now_ms() + spec->timeout_ms : 0;
	for (;;) {
		int wait_ms = -1;
		if (deadline) {
			long long left = deadline - now_ms();
			if (left <= 0 && !killed) {
				kill(-pid, SIGKILL);
				killed = true;
				if (timed_out)
					*timed_out = true;
			}
			wait_ms = killed ? -1 : (int)(left > 0 ? left : 0);
		}
		struct pollfd pfd = { .fd = out_pipe[0], .events = POLLIN };
		int ready = poll(&pfd, 1, wait_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0)
			continue;
		if (ready < 0)
			break;
		ssize_t n = read(out_pipe[0], buf + used, LINE_MAX_BYTES - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		deliver_lines(spec, buf, &used, false, &stopped);
	}
	deliver_lines(spec, buf, &used, true, &stopped);

	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			running_child = 0;
			goto out;
		}
	}
	running_child = 0;
	int child_errno = 0;
	if (read(report_pipe[0], &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
		err = -child_errno;
		fprintf(stderr, "krunner: cannot execute %s: %s\n", argv[0], strerror(child_errno));
	}
out:
	for (int i = 0; i < 2; i++) {
		if (out_pipe[i] >= 0)
			close(out_pipe[i]);
		if (report_pipe[i] >= 0)
			close(report_pipe[i]);
	}
	free(buf);
	return err;
}
