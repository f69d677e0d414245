/* SPDX-License-Identifier: MIT */
/* krunner compare and krunner calibrate. */
#ifndef KRUNNER_COMPARE_H
#define KRUNNER_COMPARE_H

#include "artifacts.h"
#include "options.h"
#include "run.h"

#define NOISE_FORMAT "krunner-noise"

/* How much a whole run's level moves between two separate runs, as a
 * multiple of the standard deviation of its round medians (logs), when no
 * calibrated figure applies and --run-noise is not given: fitted to A/A
 * pairs of separate runs (docs/KRUNNER.md). */
#define COMPARE_RUN_NOISE_DEFAULT 1.0

/* Prints the markdown comparison. 0 or -errno (bad input, message
 * printed); *regressions counts the metrics judged a regression,
 * *no_verdicts those the data cannot decide. */
int compare_results(const struct options *opts, const struct locations *loc,
		    int *regressions, int *no_verdicts);

/* Stores each metric's noise from a finished A/A run into the noise file
 * and prints it; each run's level is kept too (the last
 * CALIBRATE_RUNS_KEPT), and from 3 runs on their spread beyond what
 * their rounds explain is the metric's between_run_sd. 0 or -errno. */
#define CALIBRATE_RUNS_KEPT 20
int calibrate_store(const struct run *run, const char *noise_path);

/* The noise file compare uses: opts->noise_path, else <out>/noise.json.
 * *explicit_path is set when the user named it (then it must exist). */
int noise_path(const struct options *opts, const struct locations *loc, char *out,
	       size_t len, bool *explicit_path);

#endif
