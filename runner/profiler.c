/* SPDX-License-Identifier: MIT */
/* Running a command under a profiler (profiler.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

int profiler_prefix(const struct profiler *p, const char **out, int cap)
{
	int n = 0;
	if (cap < PROFILER_WORDS)
		return -E2BIG;
	if (p->mode == PROFILE_BPF) {
		out[n++] = p->kbpf_trace;
		if (p->events == 1)
			out[n++] = "--events";
		out[n++] = "-o";
		out[n++] = p->trace_dir;
		out[n++] = "--";
	}
	out[n] = NULL;
	return n;
}

/* Appends NAME=VALUE (VALUE from up to two parts joined by ':') to buf. */
static const char *put(char *buf, size_t cap, size_t *used, const char *name,
		       const char *value, const char *more)
{
	int n = snprintf(buf + *used, cap - *used, "%s=%s%s%s", name, value,
			 more && *more ? ":" : "", more && *more ? more : "");
	if (n < 0 || (size_t)n >= cap - *used)
		return NULL;
	const char *s = buf + *used;
	*used += (size_t)n + 1;
	return s;
}

int profiler_env(const struct profiler *p, const char *old_preload, char *buf,
		 size_t cap, const char **env, int max)
{
	if (max < PROFILER_ENV)
		return -E2BIG;
	int n = 0;
	size_t used = 0;
	if (p->mode == PROFILE_PRELOAD) {
		const char *words[] = {
			put(buf, cap, &used, "LD_PRELOAD", p->shim, old_preload),
			put(buf, cap, &used, "KPROF_OUT", p->trace_dir, NULL),
			p->hook ? put(buf, cap, &used, "KPROF_HOOK", p->hook, NULL) : "",
			p->events >= 0 ? put(buf, cap, &used, "KPROF_EVENTS",
					     p->events ? "1" : "0", NULL) : "",
			p->gzip >= 0 ? put(buf, cap, &used, "KPROF_GZIP",
					   p->gzip ? "1" : "0", NULL) : "",
		};
		for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
			if (!words[i])
				return -ENAMETOOLONG;
			if (*words[i])
				env[n++] = words[i];
		}
	}
	env[n] = NULL;
	return n;
}

int profiler_setenv(const struct profiler *p)
{
	char buf[16384];
	const char *env[PROFILER_ENV];
	int n = profiler_env(p, getenv("LD_PRELOAD"), buf, sizeof(buf), env, PROFILER_ENV);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(env[i], '=');
		char name[32];
		size_t len = (size_t)(eq - env[i]);
		if (len >= sizeof(name))
			return -EINVAL;
		memcpy(name, env[i], len);
		name[len] = 0;
		if (setenv(name, eq + 1, 1))
			return -errno;
	}
	if (p->mode == PROFILE_PRELOAD && p->interval_ms &&
	    setenv("KPROF_INTERVAL_MS", p->interval_ms, 0))
		return -errno;
	return 0;
}
