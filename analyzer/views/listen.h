/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --listen: a unix stream socket that any number of producers
 * (the shim with KPROF_OUT=unix:PATH) connect to.
 * Every connection gets its own push decoder; all of them feed one model,
 * which is printed periodically while producers are connected and handed
 * back to the caller for the final profile.
 */
#ifndef KANALYZE_LISTEN_H
#define KANALYZE_LISTEN_H

#include <stdint.h>

#include "model.h"
#include "report.h"

struct ka_listen_opts {
	const char *address;   /* "unix:PATH" or a path */
	const char *save_dir;  /* also write each connection's bytes here */
	uint64_t refresh_ms;   /* snapshot period; 0 = no snapshots */
	uint64_t linger_ms;    /* after the last producer closed, wait this long */
	/* HOST:PORT of a Prometheus target (metrics.c); NULL: none. With it
	 * the listener runs until SIGINT/SIGTERM, producers or not. */
	const char *metrics;
	const struct ka_report_opts *report;
};

/*
 * Accepts producers until every one that connected has closed (and none
 * came within linger_ms) or SIGINT/SIGTERM. Returns 0, or -errno when the
 * socket cannot be set up (message printed). *connections is the number
 * of producers that connected.
 */
int ka_listen(struct ka_model *m, const struct ka_listen_opts *o,
	      uint64_t *connections);

#endif
