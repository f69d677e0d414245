/* SPDX-License-Identifier: MIT */
/*
 * The command line of the benchmark programs that start tests/hello-like
 * children: --hello=PATH (required) and the sampler's options
 * (programs/sampler.h). 0 when usable; else a message on stderr naming
 * the program, and 1.
 */
#ifndef KPROF_PROGRAMS_HELLO_ARGS_H
#define KPROF_PROGRAMS_HELLO_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"

static inline int hello_args(int argc, char **argv, const char *name,
			     const char **hello_path, struct sampler_args *sa)
{
	*sa = (struct sampler_args)SAMPLER_DEFAULTS;
	for (int i = 1; i < argc; i++) {
		int taken = sampler_parse_arg(sa, argv[i]);
		if (taken < 0) {
			fprintf(stderr, "%s: bad value in %s\n", name, argv[i]);
			return 1;
		}
		if (taken)
			continue;
		if (strncmp(argv[i], "--hello=", 8) == 0)
			*hello_path = argv[i] + 8;
		else {
			fprintf(stderr, "%s: unknown argument %s\n", name, argv[i]);
			return 1;
		}
	}
	if (!*hello_path) {
		fprintf(stderr, "usage: %s --hello=PATH " SAMPLER_USAGE "\n", name);
		return 1;
	}
	return 0;
}

#endif
