/* SPDX-License-Identifier: MIT */
/*
 * The filters applied to the model before any view (filter.c): -e names
 * and %classes, --pid, --exclude-waits and the event filters.
 */
#ifndef KANALYZE_FILTER_H
#define KANALYZE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct ka_filter {
	bool nr_set;
	bool nr[1024];
	bool aside[1024]; /* --exclude-waits: the %wait class */
	bool aside_set;
	uint64_t *pids;
	size_t n_pids;
	uint64_t min_duration_ns;
	bool failed, succeeded;
};
/* Parses "read,write,%file"; -EINVAL with a message printed. */
int ka_filter_parse_names(struct ka_filter *f, const char *list);
int ka_filter_parse_pids(struct ka_filter *f, const char *list);
/* --exclude-waits: the filter drops the %wait class, after any -e; a
 * model it is applied to says what it set aside (m->set_aside points
 * into f, m->aside_calls and aside_ns count them). */
int ka_filter_set_aside_waits(struct ka_filter *f);
/* m->aside_calls and aside_ns: the calls of m->set_aside in m now. */
void ka_model_count_aside(struct ka_model *m);
/* Applies the filter to the model (streams, threads, rows, events). */
int ka_filter_apply(struct ka_model *m, const struct ka_filter *f);
bool ka_filter_needs_events(const struct ka_filter *f);
void ka_filter_free(struct ka_filter *f);
/* Whether syscall (a name) is in class ("wait", without the %). */
bool ka_class_has(const char *class, const char *syscall);
/* The class names and their syscalls, for --help and docs. */
extern const char *const ka_class_names[];

#endif
