/*
 * The command line of the benchmark programs that start tests/hello-like
 * children: --hello=PATH (required) and --iterations=N (default 20).
 * 0 when usable; else a message on stderr naming the program, and 1.
 */
#ifndef KPROF_PROGRAMS_HELLO_ARGS_H
#define KPROF_PROGRAMS_HELLO_ARGS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int hello_args(int argc, char **argv, const char *name,
			     const char **hello_path, int *iterations)
{
	*iterations = 20;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--hello=", 8) == 0)
			*hello_path = argv[i] + 8;
		else if (strncmp(argv[i], "--iterations=", 13) == 0)
			*iterations = atoi(argv[i] + 13);
		else {
			fprintf(stderr, "%s: unknown argument %s\n", name, argv[i]);
			return 1;
		}
	}
	if (!*hello_path || *iterations < 1) {
		fprintf(stderr, "usage: %s --hello=PATH [--iterations=N]\n", name);
		return 1;
	}
	return 0;
}

#endif
