/* SPDX-License-Identifier: MIT */
/* kanalyze --listen's snapshots: rates, fitting the terminal, keys (live_view.c). */
#ifndef KANALYZE_LIVE_VIEW_H
#define KANALYZE_LIVE_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "model.h"
#include "report.h"

struct ka_live_view;

/* keys: read sort keys from a terminal on stdin (put in non-canonical
 * mode until ka_live_view_free). NULL when out of memory. */
struct ka_live_view *ka_live_view_new(bool keys);
void ka_live_view_free(struct ka_live_view *v);
/* The descriptor to poll for keys, or -1. */
int ka_live_view_key_fd(const struct ka_live_view *v);
/* Reads the keys waiting; true when they changed the view. */
bool ka_live_view_keys(struct ka_live_view *v);
/*
 * One snapshot: title, the profile with calls/s and ms/s since the last
 * measured one (measure_now: measure now; else the last rates, for a
 * redraw after a key), the busiest processes; on a terminal (tty) drawn
 * from the top of the screen and cut to fit its height.
 */
void ka_live_view_print(struct ka_live_view *v, FILE *out, const struct ka_model *m,
			const struct ka_report_opts *o, const char *title, bool tty,
			bool measure_now);

#endif
