/* SPDX-License-Identifier: MIT */
/* krunner's command line: subcommand, options, suite options. */
#ifndef KRUNNER_OPTIONS_H
#define KRUNNER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "exec.h"
#include "suite.h"

#include "version.h"
#define KRUNNER_VERSION KPROF_VERSION

enum command {
	COMMAND_RUN,
	COMMAND_LIST,
	COMMAND_COMPARE,
	COMMAND_CALIBRATE,
	COMMAND_AB,		/* krunner ab: A and B interleaved in one run */
};

struct options {
	enum command command;
	char **suite_names;
	size_t n_suites;
	int rounds;			/* 0: each suite's default */
	int warmup_rounds;		/* -1: each suite's default */
	enum profile_mode profile;
	const char *launcher;
	const char *b_launcher;		/* krunner ab: B's launcher (A's is --launcher) */
	bool json;
	const char *out_dir;		/* NULL: default */
	const char *programs_dir;	/* NULL: default */
	const char *noise_path;		/* NULL: <out>/noise.json */
	bool no_noise;
	bool fail_on_regression;
	double alpha;
	double threshold;		/* fraction: 0.05 */
	double run_noise;		/* between-run noise of separate runs as a
					 * multiple of the rounds' spread, without
					 * a calibrated one; < 0: the default */
	const char *before, *after;	/* compare */
	char **command_argv;		/* krunner run -- CMD ARGS: the command suite's */
	struct command_options cmd;	/* its --prepare, --setup, --cleanup, -P/-L */
	const char *export_json, *export_csv, *export_markdown;	/* files, or NULL */
	char **argv;			/* as given, for the result */
	int argc;
};

/* 0: run opts->command; 1: help or version printed (exit 0); -EINVAL:
 * usage error (message printed). */
int options_parse(int argc, char **argv, struct options *opts);
void options_free(struct options *opts);

#endif
