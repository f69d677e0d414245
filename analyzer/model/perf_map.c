/* SPDX-License-Identifier: MIT */
/*
 * JIT-compiled code named by the perf map files JITs write for perf
 * (/tmp/perf-PID.map: `node --perf-basic-prof`, the JVM with perf-map-
 * agent, LuaJIT, .NET with DOTNET_PerfMapEnabled=1): one "START SIZE
 * name" line per function, hex, appended as code is made. Loaded once
 * per pid, sorted by start; a later line for the same start (code made
 * again there) wins. A map file older than the process's stream is
 * another process's that had the pid before: not used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf_map.h"

struct jit_sym {
	uint64_t start, size;
	size_t line; /* order in the file: the later one wins */
	char *name;
};

struct jit_map {
	uint64_t pid;
	char file[32]; /* "perf-PID.map" */
	struct jit_sym *syms;
	size_t n;
};

struct ka_perf_maps {
	struct jit_map *maps;
	size_t n, cap;
};

static const char *map_dir = "/tmp";

void ka_perf_map_dir(const char *dir)
{
	map_dir = dir;
}

int ka_perf_maps_new(struct ka_perf_maps **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ka_perf_maps_free(struct ka_perf_maps *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		for (size_t k = 0; k < p->maps[i].n; k++)
			free(p->maps[i].syms[k].name);
		free(p->maps[i].syms);
	}
	free(p->maps);
	free(p);
}

static int by_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static void load(struct jit_map *m, uint64_t start_real_ns)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", map_dir, m->file);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	struct stat st;
	/* written before the process started: another process's, same pid */
	if (fstat(fileno(f), &st) || (start_real_ns && (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
				       (uint64_t)st.st_mtim.tv_nsec + 1000000000ULL < start_real_ns)) {
		fclose(f);
		return;
	}
	char *line = NULL;
	size_t cap = 0, n_cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		char *end;
		uint64_t start = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		char *s = end + 1;
		uint64_t size = strtoull(s, &end, 16);
		if (end == s || *end != ' ' || !size || !end[1])
			continue;
		if (m->n == n_cap) {
			n_cap = n_cap ? 2 * n_cap : 256;
			void *p = reallocarray(m->syms, n_cap, sizeof(*m->syms));
			if (!p)
				break;
			m->syms = p;
		}
		char *name = strdup(end + 1);
		if (!name)
			break;
		m->syms[m->n] = (struct jit_sym){ start, size, m->n, name };
		m->n++;
	}
	free(line);
	fclose(f);
	if (m->n > 1)
		qsort(m->syms, m->n, sizeof(*m->syms), by_start);
}

static struct jit_map *map_of(struct ka_perf_maps *p, uint64_t pid, uint64_t start_real_ns)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->maps[i].pid == pid)
			return &p->maps[i];
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		void *v = reallocarray(p->maps, cap, sizeof(*p->maps));
		if (!v)
			return NULL;
		p->maps = v;
		p->cap = cap;
	}
	struct jit_map *m = &p->maps[p->n++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	snprintf(m->file, sizeof(m->file), "perf-%" PRIu64 ".map", pid);
	load(m, start_real_ns);
	return m;
}

const char *ka_perf_map_lookup(struct ka_perf_maps *p, uint64_t pid, uint64_t start_real_ns,
			       uint64_t pc, const char **file)
{
	struct jit_map *m = p ? map_of(p, pid, start_real_ns) : NULL;
	if (!m || !m->n)
		return NULL;
	/* the last function starting at or before pc (the latest made there) */
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct jit_sym *y = &m->syms[lo - 1];
	if (pc >= y->start + y->size)
		return NULL;
	*file = m->file;
	return y->name;
}
