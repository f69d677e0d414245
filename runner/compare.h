/* SPDX-License-Identifier: MIT */
/* krunner compare and krunner calibrate. */
#ifndef KRUNNER_COMPARE_H
#define KRUNNER_COMPARE_H

#include "artifacts.h"
#include "options.h"
#include "run.h"

#define NOISE_FORMAT "krunner-noise"

/* Prints the markdown comparison. 0 or -errno (bad input, message
 * printed); *regressions counts the bold rows (worse, beyond the threshold,
 * p <= alpha, comparable), *too_noisy the comparable metrics whose
 * threshold is above --max-threshold. */
int compare_results(const struct options *opts, const struct locations *loc,
		    int *regressions, int *too_noisy);

/* Stores each metric's noise from a finished A/A run into the noise file
 * and prints it. 0 or -errno. */
int calibrate_store(const struct run *run, const char *noise_path);

/* The noise file compare uses: opts->noise_path, else <out>/noise.json.
 * *explicit_path is set when the user named it (then it must exist). */
int noise_path(const struct options *opts, const struct locations *loc, char *out,
	       size_t len, bool *explicit_path);

#endif
