/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * execvp's search of PATH, for the tools that find a command before they
 * fork (kprof, kbpf-trace, krunner): one copy of it.
 */
#ifndef KPROF_COMMON_PATH_SEARCH_H
#define KPROF_COMMON_PATH_SEARCH_H

#include <stddef.h>

/* The first DIR/name of the colon-separated dirs (an empty entry is the
 * working directory) that is a regular file this process may execute,
 * into out: 0, or -ENOENT (none), -ENOMEM. */
int kp_path_search(const char *dirs, const char *name, char *out, size_t len);

#endif
