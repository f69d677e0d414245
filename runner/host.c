/*
 * host: the machine (kernel, CPU, cores, memory) and the git state of the
 * source tree, recorded in every result so that two results can be told
 * apart when their numbers differ.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifacts.h"
#include "exec.h"
#include "host.h"

static char *cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	char *model = NULL;
	if (!f)
		return NULL;
	while (!model && fgets(line, sizeof(line), f)) {
		/* x86: "model name", arm64: often only "CPU part"; take the first. */
		if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
			char *colon = strchr(line, ':');
			if (!colon)
				continue;
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			model = strdup(colon);
		}
	}
	fclose(f);
	return model;
}

static long long memory_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[256];
	long long kib = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kib) == 1)
			break;
	fclose(f);
	return kib < 0 ? -1 : kib * 1024;
}

json_t *host_json(void)
{
	json_t *host = json_object();
	struct utsname uts;
	char hostname[256] = "";
	if (uname(&uts) == 0) {
		json_object_set_new(host, "kernel", json_string(uts.release));
		json_object_set_new(host, "kernel_version", json_string(uts.version));
		json_object_set_new(host, "arch", json_string(uts.machine));
	}
	if (gethostname(hostname, sizeof(hostname) - 1) == 0)
		json_object_set_new(host, "hostname", json_string(hostname));
	char *model = cpu_model();
	json_object_set_new(host, "cpu_model", model ? json_string(model) : json_null());
	free(model);
	json_object_set_new(host, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	long long mem = memory_bytes();
	json_object_set_new(host, "memory_bytes", mem > 0 ? json_integer(mem) : json_null());
	return host;
}

struct capture {
	char text[256];
	bool any_line;
};

static int capture_first(void *arg, const char *line)
{
	struct capture *c = arg;
	if (!c->any_line)
		snprintf(c->text, sizeof(c->text), "%s", line);
	c->any_line = true;
	return 0;
}

/* Runs git -C root ARGS; 0 and the first output line, or -1. */
static int git(const char *root, const char *a, const char *b, const char *c,
	       struct capture *out)
{
	const char *argv[] = { "git", "-C", root, a, b, c, NULL };
	struct exec_spec spec = { .argv = argv, .timeout_ms = 10000, .quiet_stderr = true,
				  .on_line = capture_first, .arg = out };
	int status;
	bool timed_out;
	memset(out, 0, sizeof(*out));
	if (exec_run(&spec, &status, &timed_out) || timed_out || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

json_t *git_json(const char *root)
{
	struct capture head, status;
	char path[PATH_MAX];
	if (find_executable("git", path, sizeof(path)))
		return json_null();
	if (!root || !*root || git(root, "rev-parse", "HEAD", NULL, &head) || !head.any_line)
		return json_null();
	/* Dirty = a tracked file differs from HEAD; untracked files do not count. */
	if (git(root, "status", "--porcelain", "--untracked-files=no", &status))
		return json_null();
	json_t *g = json_object();
	json_object_set_new(g, "head", json_string(head.text));
	json_object_set_new(g, "dirty", json_boolean(status.any_line));
	return g;
}
