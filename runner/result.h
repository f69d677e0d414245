/* SPDX-License-Identifier: MIT */
/* The result file: building it from a run, writing it, reading it back. */
#ifndef KRUNNER_RESULT_H
#define KRUNNER_RESULT_H

#include <jansson.h>
#include <stddef.h>

#include "run.h"

#define RESULT_FORMAT "krunner-result"
#define RESULT_FORMAT_VERSION 1

json_t *result_build(const struct run *run);

/* The medians of the kept rounds of round_details (a suite's) for metric,
 * in round order: not warm-up, not failed, profiled or not as asked.
 * *out is allocated (free it) even when none are found; returns how many. */
size_t result_round_medians(json_t *rounds, const char *metric, bool profiled, double **out);

/* The probe effect of def from a suite's round_details: "1.30x slower
 * (95% interval ...)" or "not significant: measured 5.44x faster (...)".
 * *slowdown as stats_slowdown() (NAN when unknown). */
void result_probe_effect(json_t *rounds, const struct metric_def *def, char *text, size_t len,
			 double *slowdown, bool *significant);

/* What a suite's values depend on besides the machine: {"rounds",
 * "options", "profile", "launcher"}; a noise file is used for results made
 * with the same. */
json_t *suite_settings_json(const struct run *run, const struct suite_ctx *ctx);

/* Writes root as DIR/NAME.json through a temporary file and a link, so a
 * reader never sees half a file and an existing result is never replaced
 * (NAME-2.json ... when the name is taken). The path written goes to
 * path_out. 0 or -errno (message printed). */
int result_write(const char *dir, const char *name, json_t *root, char *path_out,
		 size_t path_len);

/* Loads and checks a result file. 0, or -EINVAL/-errno with the reason
 * printed ("krunner: A.json: ..."). */
int result_load(const char *path, json_t **out);

/* Writes any JSON document atomically to path (replacing it). */
int json_write_atomic(const char *path, json_t *root);

#endif
