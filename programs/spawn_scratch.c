/* SPDX-License-Identifier: MIT */
/*
 * spawn_scratch: what posix_spawn costs, with a small and a large
 * argv+envp. Prints key=value metric lines for krunner's spawn-scratch
 * suite:
 *   spawn_ms                posix_spawn(hello) with env LANG=C, PATH=/bin
 *                           plus a waitpid that reports exit status 0
 *   spawn_large_wire_bytes  the size of the large argv+envp blob: every
 *                           string with its NUL, exactly 84,386 (asserted)
 *   spawn_large_first_ms    the first spawn + wait with that blob in a
 *                           process: each of --samples children, forked
 *                           before this process spawns with the blob,
 *                           makes its first (one value per child)
 *   spawn_large_repeat_ms   the spawns with it after the first
 *   spawner_peak_rss_bytes  this process's peak resident set (ru_maxrss)
 *   spawn_scratch_retained_bytes   user memory retained by the spawning:
 *                           anonymous resident memory (RssAnon) after
 *                           every spawn less before the first, 0 when it
 *                           did not grow. Not VmRSS: it also counts file
 *                           pages of the libraries, faulted in 16 at a
 *                           time, which moved it by 64-128 KB from one
 *                           process to the next
 *   spawn_scratch_kernel_bytes     kernel memory retained for it: page
 *                           tables (VmPTE) after less before, 0 if none
 * A sample counts only if hello exited normally with status 0; hello also
 * checks that the argv part of the blob arrived whole.
 * spawn_ms and spawn_large_repeat_ms: one line per value
 * (programs/sampler.h: batches calibrated to --min-time-ms, a warm-up
 * discarded, --samples values per metric).
 * Usage: spawn_scratch --hello=PATH [--samples=N] [--warmups=N]
 *                      [--min-time-ms=N] [--iterations=N]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hello_args.h"

#define LARGE_WIRE_BYTES 84386
#define LARGE_ARGS 48
#define LARGE_ARG_BYTES 600	/* each, with its NUL */
#define LARGE_ENVS 70
#define LARGE_ENV_BYTES 700	/* each, with its NUL */

static const char *hello_path;
static posix_spawn_file_actions_t quiet_stdout;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* posix_spawn + waitpid; ns, or -1 unless the child exited with 0. */
static int64_t spawn_once(char *const argv[], char *const envp[])
{
	pid_t pid;
	int status;
	int64_t t0 = now_ns();
	int err = posix_spawn(&pid, hello_path, &quiet_stdout, NULL, argv, envp);
	if (err) {
		fprintf(stderr, "spawn_scratch: posix_spawn %s: %s\n", hello_path, strerror(err));
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "spawn_scratch: waitpid: %s\n", strerror(errno));
			return -1;
		}
	}
	int64_t ns = now_ns() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "spawn_scratch: hello failed (status 0x%x)\n", status);
		return -1;
	}
	return ns;
}

/* The first spawn with argv/envp in a freshly forked child, timed there
 * and sent back through a pipe; -1 on failure. */
static int64_t first_spawn_in_child(char *const argv[], char *const envp[])
{
	int fds[2];
	if (pipe(fds) < 0) {
		perror("spawn_scratch: pipe");
		return -1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("spawn_scratch: fork");
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		int64_t ns = spawn_once(argv, envp);
		_exit(write(fds[1], &ns, sizeof(ns)) == (ssize_t)sizeof(ns) && ns >= 0 ? 0 : 1);
	}
	close(fds[1]);
	int64_t ns = -1;
	ssize_t got;
	while ((got = read(fds[0], &ns, sizeof(ns))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(ns) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "spawn_scratch: the child's first spawn failed\n");
		return -1;
	}
	return ns;
}

static size_t strings_bytes(char *const strings[])
{
	size_t total = 0;
	for (size_t i = 0; strings[i]; i++)
		total += strlen(strings[i]) + 1;
	return total;
}

/* A deterministic filler: the same bytes on every run and host. */
static char *filled_string(const char *prefix, size_t bytes_with_nul, unsigned seed)
{
	char *s = malloc(bytes_with_nul);
	if (!s)
		return NULL;
	size_t len = strlen(prefix);
	memcpy(s, prefix, len);
	for (size_t j = len; j + 1 < bytes_with_nul; j++)
		s[j] = (char)('a' + (seed * 7 + j) % 26);
	s[bytes_with_nul - 1] = '\0';
	return s;
}

/*
 * argv: "hello", "--expect-argv-bytes=NNNNNNNN", 48 strings of 600 bytes;
 * envp: LANG=C, PATH=/bin, 70 strings of 700 bytes and one PAD= string
 * sized so that the whole blob is LARGE_WIRE_BYTES.
 */
static int build_large(char **argv, char **envp)
{
	char prefix[32];
	size_t n = 0;
	argv[n++] = strdup("hello");
	argv[n++] = strdup("--expect-argv-bytes=00000000");
	for (unsigned i = 0; i < LARGE_ARGS; i++) {
		snprintf(prefix, sizeof(prefix), "arg%02u:", i);
		argv[n++] = filled_string(prefix, LARGE_ARG_BYTES, i);
	}
	argv[n] = NULL;
	n = 0;
	envp[n++] = strdup("LANG=C");
	envp[n++] = strdup("PATH=/bin");
	for (unsigned i = 0; i < LARGE_ENVS; i++) {
		snprintf(prefix, sizeof(prefix), "BLOB_%02u=", i);
		envp[n++] = filled_string(prefix, LARGE_ENV_BYTES, 100 + i);
	}
	envp[n] = NULL;
	for (size_t i = 0; i < LARGE_ARGS + 2; i++)
		if (!argv[i])
			return -1;
	for (size_t i = 0; i < LARGE_ENVS + 2; i++)
		if (!envp[i])
			return -1;
	size_t so_far = strings_bytes(argv) + strings_bytes(envp);
	if (so_far + 6 > LARGE_WIRE_BYTES)
		return -1;
	envp[n++] = filled_string("PAD=", LARGE_WIRE_BYTES - so_far, 999);
	envp[n] = NULL;
	if (!envp[n - 1])
		return -1;
	size_t argv_bytes = strings_bytes(argv);
	snprintf(argv[1], strlen(argv[1]) + 1, "--expect-argv-bytes=%08zu", argv_bytes);
	return 0;
}

struct spawn_args {
	char *const *argv, *const *envp;
};

static int spawn_op(void *arg, int64_t *ns)
{
	const struct spawn_args *a = arg;
	int64_t t = spawn_once(a->argv, a->envp);
	if (t < 0)
		return -1;
	ns[0] += t;
	return 0;
}

/* A "Vm...:  N kB" line of /proc/self/status in bytes, -1 if absent. */
static long long status_bytes(const char *key)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long long kib = -1;
	size_t len = strlen(key);
	while (f && kib < 0 && fgets(line, sizeof(line), f))
		if (strncmp(line, key, len) == 0 && line[len] == ':')
			kib = strtoll(line + len + 1, NULL, 10);
	if (f)
		fclose(f);
	return kib < 0 ? -1 : kib * 1024;
}

static long long growth(long long before, long long after)
{
	return after > before ? after - before : 0;
}

int main(int argc, char **argv)
{
	struct sampler_args sa;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hello_args(argc, argv, "spawn_scratch", &hello_path, &sa))
		return 1;
	if (posix_spawn_file_actions_init(&quiet_stdout) ||
	    posix_spawn_file_actions_addopen(&quiet_stdout, STDOUT_FILENO, "/dev/null",
					     O_WRONLY, 0)) {
		fprintf(stderr, "spawn_scratch: posix_spawn_file_actions: out of memory\n");
		return 1;
	}

	long long anon0 = status_bytes("RssAnon"), pte0 = status_bytes("VmPTE");
	if (anon0 < 0 || pte0 < 0) {
		fprintf(stderr, "spawn_scratch: no RssAnon/VmPTE in /proc/self/status\n");
		return 1;
	}
	static char *large_argv[LARGE_ARGS + 3];
	static char *large_envp[LARGE_ENVS + 4];
	if (build_large(large_argv, large_envp) < 0) {
		fprintf(stderr, "spawn_scratch: cannot build the large blob\n");
		return 1;
	}
	size_t wire = strings_bytes(large_argv) + strings_bytes(large_envp);
	if (wire != LARGE_WIRE_BYTES) {
		fprintf(stderr, "spawn_scratch: large blob is %zu bytes, not %d\n",
			wire, LARGE_WIRE_BYTES);
		return 1;
	}
	printf("spawn_large_wire_bytes=%zu\n", wire);
	for (int i = 0; i < sa.samples; i++) {
		int64_t first = first_spawn_in_child(large_argv, large_envp);
		if (first < 0)
			return 1;
		printf("spawn_large_first_ms=%.6f\n", (double)first / 1e6);
	}
	char *small_argv[] = { "hello", NULL };
	char *small_envp[] = { "LANG=C", "PATH=/bin", NULL };
	struct spawn_args small = { small_argv, small_envp }, large = { large_argv, large_envp };
	static const struct sampler_metric spawn_ms = { "spawn_ms", sampler_ms },
		repeat_ms = { "spawn_large_repeat_ms", sampler_ms };
	struct sampler_group groups[] = {
		{ &spawn_ms, 1, spawn_op, &small, NULL, NULL, 0 },
		{ &repeat_ms, 1, spawn_op, &large, NULL, NULL, 0 },
	};
	int failed;
	if (sampler_run_groups(&sa, groups, 2, &failed))
		return 1;

	struct rusage usage;
	if (getrusage(RUSAGE_SELF, &usage) < 0) {
		perror("spawn_scratch: getrusage");
		return 1;
	}
	printf("spawner_peak_rss_bytes=%ld\n", usage.ru_maxrss * 1024L);
	printf("spawn_scratch_retained_bytes=%lld\n", growth(anon0, status_bytes("RssAnon")));
	printf("spawn_scratch_kernel_bytes=%lld\n", growth(pte0, status_bytes("VmPTE")));
	posix_spawn_file_actions_destroy(&quiet_stdout);
	return 0;
}
