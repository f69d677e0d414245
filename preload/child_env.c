/*
 * The environment a child image gets, so that a whole process tree is
 * traced (as strace -f would): a program that execs or posix_spawns with an
 * environment of its own (env -i, LANG=C PATH=/bin, Node's spawn with
 * `env: {...}`) would otherwise drop LD_PRELOAD and the KPROF_ settings.
 * The child gets LD_PRELOAD with this library (absolute path), KPROF_OUT as
 * an absolute path (a relative one would land in the child's working
 * directory) and the other KPROF_ variables this process started with,
 * each only where the given environment lacks it. KPROF_FOLLOW=0 turns
 * this off: children then get exactly the environment they were given.
 *
 * Everything is prepared once at start; building a child's environment
 * uses only the caller's stack (it may run in a vfork child).
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "kprof.h"

extern char **environ;

#define KP_CHILD_VARS 6

static struct {
	bool follow;
	char preload[KP_PATH_MAX + 16];	/* LD_PRELOAD=/abs/libkprof.so */
	const char *lib;		/* the path inside preload */
	char out[KP_PATH_MAX + 16];	/* KPROF_OUT=/abs/... */
	char raw_out[KP_PATH_MAX + 16];	/* KPROF_OUT as this process got it */
	char vars[KP_CHILD_VARS][64];	/* KPROF_INTERVAL_MS=... and the like */
} child;

static const char *const copied_vars[KP_CHILD_VARS] = {
	"KPROF_INTERVAL_MS=", "KPROF_EVENTS=", "KPROF_GZIP=", "KPROF_DEBUG=",
	"KPROF_HOOK=", "KPROF_CLOCK=",
};

static size_t name_len(const char *s)
{
	const char *eq = strchr(s, '=');
	return eq ? (size_t)(eq - s) + 1 : strlen(s);
}

static void put(char *dst, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + lb + 1 > cap) {
		dst[0] = 0;
		return;
	}
	memcpy(dst, a, la);
	memcpy(dst + la, b, lb + 1);
}

void kp_child_env_init(const char *cwd)
{
	child.follow = true;
	for (char **e = environ; e && *e; e++) {
		const char *s = *e;
		if (strncmp(s, "KPROF_FOLLOW=", 13) == 0)
			child.follow = strcmp(s + 13, "0") != 0 && strcmp(s + 13, "no") != 0;
		else if (strncmp(s, "KPROF_OUT=", 10) == 0)
			put(child.raw_out, sizeof(child.raw_out), s, "");
		for (int i = 0; i < KP_CHILD_VARS; i++)
			if (strncmp(s, copied_vars[i], strlen(copied_vars[i])) == 0)
				put(child.vars[i], sizeof(child.vars[i]), s, "");
	}
	if (strncmp(kp_config.out, "unix:", 5) == 0 || kp_config.out[0] == '/')
		put(child.out, sizeof(child.out), "KPROF_OUT=", kp_config.out);

	Dl_info info;
	if (!dladdr((void *)kp_child_env_init, &info) || !info.dli_fname ||
	    !info.dli_fname[0]) {
		child.follow = false;
		return;
	}
	if (info.dli_fname[0] == '/' || !cwd || !cwd[0]) {
		put(child.preload, sizeof(child.preload), "LD_PRELOAD=", info.dli_fname);
	} else {
		char path[KP_PATH_MAX];
		put(path, sizeof(path), cwd, strcmp(cwd, "/") ? "/" : "");
		size_t n = strlen(path);
		put(path + n, sizeof(path) - n, info.dli_fname, "");
		put(child.preload, sizeof(child.preload), "LD_PRELOAD=", path);
	}
	child.lib = child.preload[0] ? child.preload + 11 : NULL;
	if (!child.lib)
		child.follow = false;
}

/* Does the LD_PRELOAD value s (after '=') already load this library? */
static bool preloads_us(const char *s)
{
	const char *base = strrchr(child.lib, '/');
	base = base ? base + 1 : child.lib;
	return strstr(s, child.lib) || strstr(s, base);
}

char *const *kp_child_env(char *const envp[], char **arr, size_t cap,
			  char *scratch, size_t scratch_cap, const char *marker)
{
	size_t n = 0, out = 0;
	bool have_preload = false, have_out = false, traced = false;
	bool have_var[KP_CHILD_VARS] = { false };

	if (envp)
		while (envp[n])
			n++;
	if (n + KP_CHILD_VARS + 5 > cap)
		return envp;
	/* the tail of scratch holds KPROF_EXEC_CLOCK (the TSC calibration) */
	char *clock_var = NULL;
	if (scratch_cap >= 2 * KP_CLOCK_HANDOFF_MAX) {
		scratch_cap -= KP_CLOCK_HANDOFF_MAX;
		clock_var = scratch + scratch_cap;
	}
	for (size_t i = 0; i < n; i++) {
		char *s = envp[i];
		if (strncmp(s, "KPROF_EXEC_STREAM=", 18) == 0 ||
		    strncmp(s, "KPROF_EXEC_CLOCK=", 17) == 0)
			continue;
		if (strncmp(s, "LD_PRELOAD=", 11) == 0 && child.lib) {
			have_preload = true;
			traced = preloads_us(s + 11);
			if (child.follow && !traced) {
				/* ours first, then theirs, in the caller's buffer */
				size_t a = strlen(child.preload), b = strlen(s + 11);
				if (a + 1 + b + 1 <= scratch_cap) {
					memcpy(scratch, child.preload, a);
					scratch[a] = ' ';
					memcpy(scratch + a + 1, s + 11, b + 1);
					s = scratch;
					traced = true;
				}
			}
		} else if (child.follow && strncmp(s, "KPROF_OUT=", 10) == 0) {
			have_out = true;
			/* the relative value this process got: make it absolute */
			if (child.out[0] && strcmp(s, child.raw_out) == 0)
				s = child.out;
		} else if (child.follow) {
			for (int v = 0; v < KP_CHILD_VARS; v++)
				if (strncmp(s, copied_vars[v], name_len(copied_vars[v])) == 0)
					have_var[v] = true;
		}
		arr[out++] = s;
	}
	if (child.follow) {
		if (!have_preload) {
			arr[out++] = child.preload;
			traced = true;
		}
		if (!have_out && child.out[0])
			arr[out++] = child.out;
		for (int v = 0; v < KP_CHILD_VARS; v++)
			if (!have_var[v] && child.vars[v][0])
				arr[out++] = child.vars[v];
	}
	/* only an image that loads us reads (and removes) the marker */
	if (marker && traced)
		arr[out++] = (char *)marker;
	if (traced && clock_var && kp_clock_handoff(clock_var, KP_CLOCK_HANDOFF_MAX))
		arr[out++] = clock_var;
	arr[out] = NULL;
	return arr;
}
