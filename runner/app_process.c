/* SPDX-License-Identifier: MIT */
/*
 * app_process: starting, timing and stopping the real programs of the
 * application suites (see app_process.h). Separate from exec.c, which runs
 * the suites' own key=value programs in the foreground: these need their
 * own environment, working directory, log files and background servers.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app_process.h"
#include "exec.h"
#include "run.h"

#define MAX_ARGS 256
/* How often a wait looks at the interrupt flag. */
#define POLL_SLICE_MS 100
/* Servers flush their cumulative profile this often, so that one stopped
 * by SIGTERM (the shim writes nothing at a fatal signal) keeps a profile
 * at most this old. */
#define SERVER_PROFILE_INTERVAL "100"

double app_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *app_status_text(int status, char *buf, size_t len)
{
	return exec_status_text(status, buf, (unsigned)len);
}

bool app_exited_ok(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The command's profiler: this round's, if the command is profiled. */
static struct profiler profiler_of(struct suite_ctx *ctx, const struct app_command *cmd,
				   bool background)
{
	struct profiler p = suite_profiler(ctx, background ? SERVER_PROFILE_INTERVAL : NULL);
	if (!cmd->profiled)
		p.mode = PROFILE_NONE;
	return p;
}

/* The command line with the profiler's prefix and the launcher:
 * [kbpf-trace -o DIR --] [launcher...] argv. */
static int full_argv(struct suite_ctx *ctx, const struct profiler *p,
		     const struct app_command *cmd, const char **out)
{
	int n = profiler_prefix(p, out, MAX_ARGS);
	if (n < 0)
		return n;
	const struct run *run = ctx->run;
	for (size_t i = 0; cmd->launched && run->have_launcher &&
			   i < run->launcher_words.we_wordc; i++) {
		if (n >= MAX_ARGS - 1)
			return -E2BIG;
		out[n++] = run->launcher_words.we_wordv[i];
	}
	for (int i = 0; cmd->argv[i]; i++) {
		if (n >= MAX_ARGS - 1)
			return -E2BIG;
		out[n++] = cmd->argv[i];
	}
	out[n] = NULL;
	return 0;
}

/* In the child: never returns. Reports an exec failure's errno on report_fd. */
static void child_start(const struct profiler *p, const struct app_command *cmd,
			const char **argv, int out_fd, int report_fd)
{
	int err;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int null_fd = open("/dev/null", O_RDWR);
	if (null_fd < 0)
		goto fail;
	dup2(null_fd, STDIN_FILENO);
	if (cmd->log_path) {
		int log_fd = open(cmd->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0)
			goto fail;
		dup2(log_fd, STDOUT_FILENO);
		dup2(log_fd, STDERR_FILENO);
	} else {
		dup2(out_fd >= 0 ? out_fd : null_fd, STDOUT_FILENO);
		if (cmd->quiet)
			dup2(null_fd, STDERR_FILENO);
	}
	for (int i = 0; cmd->env && cmd->env[i]; i++)
		if (putenv((char *)cmd->env[i]) != 0)
			goto fail;
	int perr = profiler_setenv(p);
	if (perr) {
		errno = -perr;
		goto fail;
	}
	if (cmd->cwd && chdir(cmd->cwd) < 0)
		goto fail;
	execvp(argv[0], (char *const *)argv);
fail:
	err = errno;
	if (write(report_fd, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

static int start(struct suite_ctx *ctx, const struct app_command *cmd, bool background,
		 int out_fd, pid_t *pid)
{
	const char *argv[MAX_ARGS];
	struct profiler p = profiler_of(ctx, cmd, background);
	int report[2];
	if (full_argv(ctx, &p, cmd, argv))
		return -E2BIG;
	if (pipe2(report, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	*pid = fork();
	if (*pid < 0) {
		int err = -errno;
		close(report[0]);
		close(report[1]);
		return err;
	}
	if (*pid == 0) {
		close(report[0]);
		child_start(&p, cmd, argv, out_fd, report[1]);
	}
	setpgid(*pid, *pid);	/* both sides: no race with a kill of the group */
	close(report[1]);
	int child_errno = 0;
	ssize_t n = read(report[0], &child_errno, sizeof(child_errno));
	close(report[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		waitpid(*pid, NULL, 0);
		fprintf(stderr, "krunner: cannot start %s: %s\n", argv[0], strerror(child_errno));
		return -child_errno;
	}
	return 0;
}

int app_spawn(struct suite_ctx *ctx, const struct app_command *cmd, pid_t *pid)
{
	return start(ctx, cmd, true, -1, pid);
}

bool app_running(pid_t pid, int *status)
{
	int st;
	pid_t r = waitpid(pid, &st, WNOHANG);
	if (r == 0)
		return true;
	if (status)
		*status = r == pid ? st : 0;
	return false;
}

/* Waits up to wait_ms for the child to end; true once reaped. */
static bool wait_for(pid_t pid, int wait_ms, int *status)
{
	double deadline = app_now_ms() + wait_ms;
	do {
		if (!app_running(pid, status))
			return true;
		struct timespec ts = { 0, 20 * 1000000 };
		nanosleep(&ts, NULL);
	} while (app_now_ms() < deadline);
	return !app_running(pid, status);
}

void app_stop(pid_t pid, int wait_ms, int grace_ms)
{
	if (pid <= 0)
		return;
	if (wait_ms > 0 && wait_for(pid, wait_ms, NULL))
		return;
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	if (wait_for(pid, grace_ms, NULL))
		goto group;
	fprintf(stderr, "krunner: process %d did not stop on SIGTERM within %d ms; SIGKILL\n",
		(int)pid, grace_ms);
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
group:
	/* Whatever it left behind in its group goes too. */
	kill(-pid, SIGKILL);
}

struct buffer {
	char *data;
	size_t len, cap;
};

static int buffer_read(struct buffer *b, int fd)
{
	if (b->cap - b->len < 4097) {
		size_t cap = b->cap ? b->cap * 2 : 16384;
		char *grown = realloc(b->data, cap);
		if (!grown)
			return -ENOMEM;
		b->data = grown;
		b->cap = cap;
	}
	ssize_t n = read(fd, b->data + b->len, b->cap - b->len - 1);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	b->len += (size_t)n;
	b->data[b->len] = '\0';
	return n > 0;
}

int app_run(struct suite_ctx *ctx, const struct app_command *cmd, int *status,
	    double *elapsed_ms, char **output)
{
	struct buffer out = { 0 };
	int pipe_fds[2] = { -1, -1 }, pidfd = -1, err = 0;
	pid_t pid;
	bool capture = output && !cmd->log_path;

	*status = 0;
	if (output)
		*output = NULL;
	if (capture && pipe2(pipe_fds, O_CLOEXEC) < 0)
		return -errno;
	double t0 = app_now_ms();
	err = start(ctx, cmd, false, pipe_fds[1], &pid);
	if (pipe_fds[1] >= 0)
		close(pipe_fds[1]);
	if (err)
		goto out;
	/* A pidfd turns readable when the child ends: the wait and the pipe
	 * are one poll, so the elapsed time is not rounded to a sleep. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		err = -errno;
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto out;
	}
	double deadline = cmd->timeout_ms > 0 ? t0 + cmd->timeout_ms : 0;
	bool ended = false, pipe_open = capture;
	while (!ended || pipe_open) {
		struct pollfd pfd[2] = { { .fd = ended ? -1 : pidfd, .events = POLLIN },
					 { .fd = pipe_open ? pipe_fds[0] : -1, .events = POLLIN } };
		int ready = poll(pfd, 2, POLL_SLICE_MS);
		if (ready < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
		if (exec_interrupted() || (deadline && app_now_ms() > deadline)) {
			err = exec_interrupted() ? -EINTR : -ETIMEDOUT;
			break;
		}
		if (ready <= 0)
			continue;
		if (pfd[1].revents) {
			int r = buffer_read(&out, pipe_fds[0]);
			if (r < 0) {
				err = r;
				break;
			}
			if (r == 0)
				pipe_open = false;
		}
		if (pfd[0].revents && !ended) {
			if (waitpid(pid, status, 0) == pid) {
				*elapsed_ms = app_now_ms() - t0;
				ended = true;
			}
		}
	}
	if (err) {
		if (!ended)
			app_stop(pid, 0, 5000);
		if (err == -ETIMEDOUT)
			fprintf(stderr, "krunner: %s did not finish within %d s; stopped\n",
				cmd->argv[0], cmd->timeout_ms / 1000);
	}
	/* A descendant may still hold stdout; the group is done. */
	kill(-pid, SIGKILL);
out:
	if (pidfd >= 0)
		close(pidfd);
	if (pipe_fds[0] >= 0)
		close(pipe_fds[0]);
	if (!err && output)
		*output = out.data ? out.data : strdup("");
	else
		free(out.data);
	return err;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP || flag == FTW_D)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void app_remove_tree(const char *path)
{
	if (path && *path)
		nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}

char *app_read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct buffer b = { 0 };
	int r;
	while ((r = buffer_read(&b, fileno(f))) > 0)
		;
	fclose(f);
	if (r < 0) {
		free(b.data);
		return NULL;
	}
	return b.data ? b.data : strdup("");
}

int app_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	size_t len = strlen(text);
	bool ok = fwrite(text, 1, len, f) == len;
	if (fclose(f) != 0 || !ok)
		return -EIO;
	return 0;
}

void app_print_log_tail(const char *path, int lines)
{
	char *text = app_read_file(path);
	if (!text)
		return;
	size_t len = strlen(text);
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	const char *p = text + len;
	for (int n = 0; p > text; p--)
		if (p[-1] == '\n' && ++n == lines)
			break;
	fprintf(stderr, "krunner: last lines of %s:\n", path);
	for (const char *line = p; *line;) {
		const char *nl = strchr(line, '\n');
		int n = nl ? (int)(nl - line) : (int)strlen(line);
		fprintf(stderr, "    | %.*s\n", n, line);
		line += n + (nl != NULL);
	}
	free(text);
}
