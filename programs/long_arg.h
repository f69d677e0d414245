/* SPDX-License-Identifier: MIT */
/*
 * --NAME=N options of the in-process cost programs (hook_cost, sud_cost):
 * the last word of argv that is NAME=..., as a long; def when none is.
 */
#ifndef KPROF_PROGRAMS_LONG_ARG_H
#define KPROF_PROGRAMS_LONG_ARG_H

#include <stdlib.h>
#include <string.h>

static inline long long_arg(int argc, char **argv, const char *name, long def)
{
	size_t n = strlen(name);
	long v = def;
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
			v = strtol(argv[i] + n + 1, NULL, 10);
	return v;
}

#endif
