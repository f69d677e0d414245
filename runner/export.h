/* SPDX-License-Identifier: MIT */
/*
 * export: the benchmarks of `krunner run -- CMD` written as hyperfine
 * writes them (--export-json, --export-csv, --export-markdown): per
 * benchmark the command, mean, standard deviation, median, user and system
 * time, min and max of its timed runs, and the scanned parameter's value.
 */
#ifndef KRUNNER_EXPORT_H
#define KRUNNER_EXPORT_H

#include "run.h"

/* Writes every file the options name. 0 or -errno (message printed). */
int export_write(const struct run *run);

#endif
