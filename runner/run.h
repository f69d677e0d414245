/* SPDX-License-Identifier: MIT */
/*
 * The state of one krunner invocation that runs suites (run and calibrate):
 * per suite its resolved artifacts, samples and round records. result.c
 * turns it into the result JSON.
 */
#ifndef KRUNNER_RUN_H
#define KRUNNER_RUN_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <wordexp.h>

#include "artifacts.h"
#include "options.h"
#include "suite.h"

struct run;

/* Rounds of a suite that declares no default, without --rounds. */
#define DEFAULT_ROUNDS 3

/* A growing list of a metric's values. */
struct value_list {
	double *v;
	size_t n, cap;
};
int value_list_push(struct value_list *l, double value);

struct suite_ctx {
	const struct suite *suite;
	struct run *run;
	struct artifact *artifacts;
	size_t n_artifacts;
	char *scratch_dir;
	json_t *notes;
	json_t *tool_versions;	/* each tool artifact's `--version`, first line */
	/* [metric]: every value of every round (a round may report a metric
	 * several times: each measurement the program made is a value) */
	struct value_list *values;
	int n_rounds;		/* --rounds, else the suite's default */
	int rounds_done;
	/* [metric]: with --profile, the values of as many unprofiled rounds,
	 * each run right after its profiled twin */
	struct value_list *plain;
	int plain_rounds_done;
	json_t *rounds;		/* array: one object per round run */
	char *error;		/* first failure; the suite then reports no metric */
	bool setup_done;
	/* The round being run. */
	int round_number;	/* 1..rounds, 0 for the unprofiled round */
	bool round_profiled;
	char round_trace_dir[PATH_MAX];
	struct value_list *current;	/* [metric]: this round's values */
	/* [metric]: the median of each round's values (calibrate: how much
	 * a process's figure moves from one process to the next) */
	struct value_list *round_medians;
	int warmup_rounds;	/* discarded rounds before the first */
};

struct run {
	const struct options *opts;
	const struct locations *loc;
	wordexp_t launcher_words;
	bool have_launcher;
	struct artifact *tools;		/* shim, kanalyze, kbpf-trace, launcher: fingerprinted */
	size_t n_tools;
	json_t *tool_versions;		/* {"krunner": "0.1.0", "kanalyze": ...} */
	struct suite_ctx *suites;
	size_t n_suites;
	char stamp[32];			/* 20240501T120000Z */
	char start_time[32];		/* 2024-05-01T12:00:00Z */
	char end_time[32];
	char base_name[NAME_MAX];	/* <stamp>-<suites> */
	char trace_root[PATH_MAX];
	bool progress;
	int failed_suites;
	json_t *state_start, *state_end;	/* machine_state_json() */
	const char *busy;			/* machine_busy(), or NULL */
};

/* Resolves suites, tools and artifacts; prints every problem and returns
 * -ENOENT (missing) or -EINVAL (unknown suite) before anything runs. */
/* 0, -EINVAL for what the command line asked wrong (an unknown suite, a
 * --launcher a suite cannot take or that cannot be split), or -errno */
int run_prepare(struct run *run, const struct options *opts, const struct locations *loc);
/* Runs every suite's rounds. 0, or -errno on a failure of krunner itself;
 * failed workloads are counted in run->failed_suites. */
/* mkdir -p with mode 0755: 0 or -errno. */
int run_mkdir_p(const char *path);
int run_execute(struct run *run);
/* krunner ab: the suites of a and b (prepared from the same options but
 * the launcher) in one run, their rounds interleaved ABBA, b sharing a's
 * setup. 0 or -errno; a suite's failure fails it on both sides. */
int run_execute_ab(struct run *a, struct run *b);
void run_free(struct run *run);

/* Registry internals (suite.c). */
int suite_option_set(const char *name, const char *value);
const char *suite_option_value(const struct suite *suite, const char *name);
/* The suite options given on the command line: names and values. */
size_t suite_options_given(const char **names, const char **values, size_t cap);

/* UTC time formats. */
void time_iso8601(char *buf, size_t len);
void time_stamp(char *buf, size_t len);

#endif
