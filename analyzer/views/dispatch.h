/* SPDX-License-Identifier: MIT */
/*
 * The shim's dispatch path (patch mode): how many calls came through
 * Syscall User Dispatch (SIGSYS, about a microsecond each) and at which
 * sites, summed over the streams (their `own` records).
 */
#ifndef KANALYZE_DISPATCH_H
#define KANALYZE_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

struct ka_dispatch_site {
	char where[256]; /* "function (library)", as --sites names it */
	uint64_t calls;
};

struct ka_dispatch {
	bool armed;	 /* some stream had dispatch on */
	uint64_t calls;	 /* calls that came that way */
	size_t n_sites;	 /* busiest first */
	struct ka_dispatch_site *sites;
};

/* Sums m's streams; sites named and merged by name. 0 or -ENOMEM. */
int ka_dispatch_sum(const struct ka_model *m, struct ka_dispatch *d);
void ka_dispatch_free(struct ka_dispatch *d);

#endif
