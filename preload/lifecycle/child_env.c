/* SPDX-License-Identifier: MIT */
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

#include "lifecycle.h"
#include "../core/user_mem.h"

extern char **environ;

#define KP_CHILD_VARS 7

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
	"KPROF_HOOK=", "KPROF_CLOCK=", "KPROF_DISPATCH=",
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

bool kp_child_env_follows(void)
{
	return child.follow;
}

const char *kp_child_preload_base(void)
{
	if (!child.lib)
		return NULL;
	const char *base = strrchr(child.lib, '/');
	return base ? base + 1 : child.lib;
}

/* Does the LD_PRELOAD value s (after '=') already load this library? */
bool kp_child_preload_names_us(const char *s)
{
	return child.lib && (strstr(s, child.lib) || strstr(s, kp_child_preload_base()));
}

static bool preloads_us(const char *s)
{
	return kp_child_preload_names_us(s);
}

/*
 * The environment is the program's memory, handed to execve, which reads
 * it with EFAULT for whatever it cannot read: the array may end in an
 * unmapped page before its NULL, a string may be a bad pointer or lack
 * its NUL. So it is read here only through core/user_mem.h, and whatever
 * cannot be read makes kp_child_env hand back the program's own envp:
 * execve then fails with the EFAULT it would have given.
 *
 * Telling what a string is takes its first bytes only: HEAD covers the
 * longest name compared (KPROF_EXEC_STREAM=, KPROF_INTERVAL_MS=). They
 * are read for HEADS_PER_READ strings per process_vm_readv, each up to
 * the end of its page (the bytes after its NUL may not be mapped), and
 * the rare string whose head goes on in the next page takes a second
 * read. Only LD_PRELOAD and KPROF_OUT are read whole.
 */
#define HEAD 32
#define HEADS_PER_READ 64

/* The first bytes of strings env[0..n), n <= HEADS_PER_READ: 0 or -EFAULT. */
static int read_heads(char *const *env, size_t n, char heads[][HEAD])
{
	/* zeroed: called from two places, GCC 12 doubts the loop sets them */
	struct iovec local[HEADS_PER_READ] = { { 0 } }, remote[HEADS_PER_READ] = { { 0 } };
	long want = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = 4096 - ((uintptr_t)env[i] & 4095);
		if (len > HEAD - 1)
			len = HEAD - 1;
		local[i] = (struct iovec){ heads[i], len };
		remote[i] = (struct iovec){ env[i], len };
		want += (long)len;
	}
	if (kp_user_readv(local, remote, n) != want)
		return -EFAULT;
	for (size_t i = 0; i < n; i++) {
		size_t len = local[i].iov_len;
		heads[i][len] = 0;
		if (len == HEAD - 1 || memchr(heads[i], 0, len))
			continue;
		/* the string goes on in the next page */
		if (kp_user_read(env[i] + len, heads[i] + len, HEAD - 1 - len))
			return -EFAULT;
		heads[i][HEAD - 1] = 0;
	}
	return 0;
}

/*
 * envp's pointers up to its NULL into arr (max of them at most, then the
 * NULL): their number, -EFAULT, or -E2BIG when there are more. Each read
 * ends with the page it started in: the NULL may be the last word mapped.
 */
static long copy_pointers(char *const envp[], char **arr, size_t max)
{
	size_t n = 0;
	for (;;) {
		uintptr_t at = (uintptr_t)(envp + n);
		size_t k = (4096 - (at & 4095) + sizeof(char *) - 1) / sizeof(char *);
		if (k > max + 1 - n)
			k = max + 1 - n;
		if (kp_user_read(envp + n, arr + n, k * sizeof(char *)))
			return -EFAULT;
		for (size_t i = n; i < n + k; i++)
			if (!arr[i])
				return (long)i;
		n += k;
		if (n > max)
			return -E2BIG;
	}
}

/*
 * Is the string s, whose head is head, exactly want? 1, 0, or -EFAULT.
 * Read in pieces up to the first difference (the caller's stack may be
 * small: a vfork child's).
 */
static int equals(const char *s, const char *head, const char *want)
{
	if (strlen(head) < HEAD - 1)
		return strcmp(head, want) == 0;
	char piece[256];
	/* off <= strlen(want): the bytes before off matched */
	for (size_t off = 0;; off += sizeof(piece) - 1) {
		long n = kp_user_string(s + off, piece, sizeof(piece));
		if (n == -EFAULT)
			return -EFAULT;
		size_t len = n >= 0 ? (size_t)n : sizeof(piece) - 1;
		if (strncmp(piece, want + off, len) != 0)
			return 0;
		if (n >= 0)
			return want[off + len] == 0;
	}
}

int kp_child_env_preloads(char *const envp[])
{
	char *arr[HEADS_PER_READ];
	char heads[HEADS_PER_READ][HEAD];
	if (!envp)
		return 0;
	for (size_t off = 0;; off += HEADS_PER_READ) {
		/* HEADS_PER_READ pointers, or fewer up to the NULL */
		long r = copy_pointers(envp + off, arr, HEADS_PER_READ - 1);
		if (r < 0 && r != -E2BIG)
			return (int)r;
		size_t n = r < 0 ? HEADS_PER_READ : (size_t)r;
		if (off > 65536)
			return -E2BIG;
		if (!n)
			return 0;
		if (read_heads(arr, n, heads))
			return -EFAULT;
		for (size_t i = 0; i < n; i++) {
			if (strncmp(heads[i], "LD_PRELOAD=", 11) != 0)
				continue;
			char value[1024];
			long len = kp_user_string(arr[i] + 11, value, sizeof(value));
			if (len < 0)
				return (int)len;
			if (preloads_us(value))
				return 1;
		}
		if (r >= 0)
			return 0;
	}
}

/* KPROF_PARENT=<pid> into buf: the child's parent is traced (its start-up
 * compares the pid with its ppid, lifecycle/entry_check.c). */
static char *parent_mark(char *buf, size_t cap)
{
	char num[24];
	if (!kp_proc.pid || cap < 13 + 24)
		return NULL;
	strcpy(buf, "KPROF_PARENT=");
	strcat(buf, kp_u64_dec(num, kp_proc.pid));
	return buf;
}

char *const *kp_child_env(char *const envp[], char **arr, size_t cap,
			  char *scratch, size_t scratch_cap, const char *marker,
			  const char *sites)
{
	size_t n = 0, out = 0;
	bool have_preload = false, have_out = false, traced = false, scratch_used = false;
	bool have_var[KP_CHILD_VARS] = { false };

	if (cap < KP_CHILD_VARS + 7)
		return envp;
	/* copied into arr: entry i is read before entry out <= i is written */
	if (envp) {
		long r = copy_pointers(envp, arr, cap - KP_CHILD_VARS - 7);
		if (r < 0)
			return envp;
		n = (size_t)r;
	}
	/* the tail of scratch holds KPROF_EXEC_CLOCK (the TSC calibration) */
	char *clock_var = NULL, *mark = NULL;
	if (scratch_cap >= 2 * KP_CLOCK_HANDOFF_MAX) {
		scratch_cap -= KP_CLOCK_HANDOFF_MAX;
		clock_var = scratch + scratch_cap;
	}
	/* before it, KPROF_PARENT (the mark of a traced parent) */
	if (scratch_cap >= 2 * 40) {
		scratch_cap -= 40;
		mark = parent_mark(scratch + scratch_cap, 40);
	}
	char heads[HEADS_PER_READ][HEAD];
	for (size_t i = 0; i < n; i++) {
		char *s = arr[i];
		const char *head = heads[i % HEADS_PER_READ];
		if (i % HEADS_PER_READ == 0) {
			size_t m = n - i < HEADS_PER_READ ? n - i : HEADS_PER_READ;
			if (read_heads(arr + i, m, heads))
				return envp;
		}
		if (strncmp(head, "KPROF_EXEC_STREAM=", 18) == 0 ||
		    strncmp(head, "KPROF_PARENT=", 13) == 0 ||
		    strncmp(head, "KPROF_EXEC_CLOCK=", 17) == 0 ||
		    strncmp(head, "KPROF_EXEC_SITES=", 17) == 0)
			continue;
		if (strncmp(head, "LD_PRELOAD=", 11) == 0 && child.lib && !scratch_used) {
			have_preload = true;
			/* theirs, read after room for ours in the caller's buffer */
			size_t a = strlen(child.preload);
			long b = a + 2 < scratch_cap ?
					 kp_user_string(s + 11, scratch + a + 1, scratch_cap - a - 1) :
					 -ENAMETOOLONG;
			if (b == -EFAULT)
				return envp;
			/* one too long to copy is left as it is, as one without us */
			traced = b >= 0 && preloads_us(scratch + a + 1);
			if (b >= 0 && child.follow && !traced) {
				/* ours first, then theirs */
				memcpy(scratch, child.preload, a);
				scratch[a] = ' ';
				s = scratch;
				scratch_used = true;
				traced = true;
			}
		} else if (child.follow && strncmp(head, "KPROF_OUT=", 10) == 0) {
			have_out = true;
			/* the relative value this process got: make it absolute */
			if (child.out[0]) {
				int same = equals(s, head, child.raw_out);
				if (same < 0)
					return envp;
				if (same)
					s = child.out;
			}
		} else if (child.follow) {
			for (int v = 0; v < KP_CHILD_VARS; v++)
				if (strncmp(head, copied_vars[v], name_len(copied_vars[v])) == 0)
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
	/* not for an exec in this pid (marker): an image the shim cannot
	 * enter would pass it on to children whose ppid is this pid */
	if (mark && traced && !marker)
		arr[out++] = mark;
	if (traced && clock_var && kp_clock_handoff(clock_var, KP_CLOCK_HANDOFF_MAX))
		arr[out++] = clock_var;
	/* the site cache, for a child whose environment names no home */
	if (traced && sites)
		arr[out++] = (char *)sites;
	arr[out] = NULL;
	return arr;
}
