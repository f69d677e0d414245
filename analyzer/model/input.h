/* SPDX-License-Identifier: MIT */
/* kanalyze: one trace file into the model (input.c). */
#ifndef KANALYZE_INPUT_H
#define KANALYZE_INPUT_H

#include "model.h"

/*
 * Reads the file at path into m. Damage goes into m->damaged: the first
 * few damaged records of the file one by one, then a count; a file that
 * is no kprof trace at all, an empty file and a file without any record
 * as one entry each. 0, or -errno when the file could not be read
 * (-ENOMEM: out of memory).
 */
int ka_input_read_file(struct ka_model *m, const char *path);

/* Reading on a terminal says how far it got on stderr, a second in and
 * then four times a second, on one line; this clears that line. */
void ka_input_progress_done(void);

#endif
