/* SPDX-License-Identifier: MIT */
/*
 * Names of JIT-compiled code from the perf map files JITs write
 * (/tmp/perf-PID.map): see perf_map.c.
 */
#ifndef KANALYZE_PERF_MAP_H
#define KANALYZE_PERF_MAP_H

#include <stdint.h>

struct ka_perf_maps;

/* Where the perf-PID.map files are (default /tmp); the string must
 * outlive the use. */
void ka_perf_map_dir(const char *dir);
int ka_perf_maps_new(struct ka_perf_maps **out);
void ka_perf_maps_free(struct ka_perf_maps *p);
/*
 * The name of the JIT function at pc in process pid (whose stream began at
 * start_real_ns of the wall clock; 0: not known), and in *file the map's
 * file name; NULL when no map of that process names it.
 */
const char *ka_perf_map_lookup(struct ka_perf_maps *p, uint64_t pid, uint64_t start_real_ns,
			       uint64_t pc, const char **file);

#endif
