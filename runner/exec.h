/* SPDX-License-Identifier: MIT */
/*
 * Running one program the way a suite round wants it: under the launcher
 * (another runtime), under a profiler (the LD_PRELOAD shim or kbpf-trace),
 * with its stdout read line by line and its stderr passed through.
 */
#ifndef KRUNNER_EXEC_H
#define KRUNNER_EXEC_H

#include <stdbool.h>

#include "profiler.h"

struct exec_spec {
	const char *const *argv;		/* argv[0]: a path, or a name looked up in PATH */
	char *const *launcher_argv;		/* prefix command, NULL-terminated; or NULL */
	struct profiler profiler;		/* mode PROFILE_NONE: none */
	int timeout_ms;				/* kill the process group after this; 0 = none */
	bool quiet_stderr;			/* send the program's stderr to /dev/null */
	/* stdout to /dev/null, not read: a daemon the program leaves behind
	 * holds no pipe of ours */
	bool discard_stdout;
	/* Called for every line of stdout, without the newline. Non-zero stops
	 * reading (the program is still waited for). */
	int (*on_line)(void *arg, const char *line);
	void *arg;
};

/*
 * Runs the program and waits for it. 0 when it ran: *status is the
 * waitpid status (a timeout shows as killed by SIGKILL, *timed_out set).
 * -errno when it could not be started (message on stderr), e.g. -ENOENT.
 */
int exec_run(const struct exec_spec *spec, int *status, bool *timed_out);

/*
 * SIGINT/SIGTERM: installed by krunner before running suites. The signal is
 * passed on to the running program's process, exec_interrupted() turns
 * true, and the runner stops after the current round and tears down.
 */
int exec_catch_interrupts(void);
bool exec_interrupted(void);

/* A readable form of a wait status: "exit status 1", "killed by signal 9". */
const char *exec_status_text(int status, char *buf, unsigned len);

#endif
