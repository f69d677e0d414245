/* SPDX-License-Identifier: MIT */
/*
 * app_process: the processes that application suites start themselves —
 * servers kept in the background (mariadbd, php -S) and clients or builds
 * that run to completion, timed from fork to exit. Each child gets its own
 * process group (stopped as a whole), SIGTERM when krunner dies, stdin from
 * /dev/null, and on request this round's --profile. krunner's SIGINT
 * handler only marks the run interrupted; every wait here notices that,
 * stops its child and returns -EINTR, so a suite's teardown runs next.
 */
#ifndef KRUNNER_APP_PROCESS_H
#define KRUNNER_APP_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "suite.h"

struct app_command {
	const char *const *argv;	/* argv[0]: a path, or a name looked up in PATH */
	const char *const *env;		/* NAME=VALUE set in the child, NULL-terminated; or NULL */
	const char *cwd;		/* NULL: krunner's */
	/* stdout and stderr appended to this file; NULL: stdout captured
	 * (app_run's *output) or discarded, stderr passed through. */
	const char *log_path;
	bool quiet;			/* with no log: stderr discarded too */
	bool profiled;			/* under this round's --profile, if any */
	/* under --launcher (krunner ab: this side's), if any: set on the
	 * programs whose time is a metric */
	bool launched;
	int timeout_ms;			/* app_run: stop the child after this; 0 = none */
};

/* Runs a command to its end. 0 when it ran (*status: the wait status,
 * *elapsed_ms: fork to reaped); -EINTR when krunner was interrupted,
 * -ETIMEDOUT after timeout_ms, other -errno when it could not start
 * (message on stderr). output (may be NULL): its stdout, malloc'd. */
int app_run(struct suite_ctx *ctx, const struct app_command *cmd, int *status,
	    double *elapsed_ms, char **output);

/* Starts a command in the background. 0 or -errno. */
int app_spawn(struct suite_ctx *ctx, const struct app_command *cmd, pid_t *pid);
/* Whether a spawned child still runs; once it ended, reaps it and stores
 * its wait status in *status (may be NULL). */
bool app_running(pid_t pid, int *status);
/* Waits up to wait_ms for the child to end by itself, then SIGTERM to its
 * process group, then SIGKILL after grace_ms. Reaps it. */
void app_stop(pid_t pid, int wait_ms, int grace_ms);

/* "exit status 1", "killed by signal 9 (Killed)". */
const char *app_status_text(int status, char *buf, size_t len);
bool app_exited_ok(int status);

/* rm -rf of a scratch directory (no symlink is followed). */
void app_remove_tree(const char *path);
/* A file's text (malloc'd), or NULL. */
char *app_read_file(const char *path);
/* Writes text to path (created 0644, truncated). 0 or -errno. */
int app_write_file(const char *path, const char *text);
/* Prints the last lines of a log on stderr, indented, after a failure. */
void app_print_log_tail(const char *path, int lines);
/* Milliseconds on CLOCK_MONOTONIC. */
double app_now_ms(void);

#endif
