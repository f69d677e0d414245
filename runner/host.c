/* SPDX-License-Identifier: MIT */
/*
 * host: the machine (kernel, CPU, cores, memory), its state while a run
 * goes on (load, frequency, governor, virtualization) and the git state of
 * the source tree, recorded in every result so that two results can be
 * told apart when their numbers differ, and a noisy one known as such.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gnu/libc-version.h>
#include <limits.h>
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
	json_object_set_new(host, "glibc", json_string(gnu_get_libc_version()));
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

const char *host_name(void)
{
	static struct utsname uts;
	if (!uts.nodename[0] && uname(&uts) != 0)
		return "";
	return uts.nodename;
}

/* The first line of a small file, without its newline; false if unreadable. */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static double cpu_mhz(void)
{
	char line[256];
	if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", line, sizeof(line)))
		return atof(line) / 1000;
	FILE *f = fopen("/proc/cpuinfo", "re");
	double mhz = -1;
	if (!f)
		return -1;
	while (mhz < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) != 1)
			mhz = -1;
	fclose(f);
	return mhz;
}

/* A hypervisor or container by the signs the kernel leaves: systemd's
 * own detection when it is there, else the CPU's hypervisor flag. */
static json_t *virtualization(void)
{
	char line[256], path[PATH_MAX];
	if (find_executable("systemd-detect-virt", path, sizeof(path)) == 0) {
		struct capture c;
		const char *argv[] = { path, NULL };
		struct exec_spec spec = { .argv = argv, .timeout_ms = 5000, .quiet_stderr = true,
					  .on_line = capture_first, .arg = &c };
		int status;
		bool timed_out;
		memset(&c, 0, sizeof(c));
		if (exec_run(&spec, &status, &timed_out) == 0 && !timed_out && c.any_line)
			return json_string(c.text);
	}
	FILE *f = fopen("/proc/cpuinfo", "re");
	bool hypervisor = false, flags = false;
	while (f && !flags && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		flags = true;
		hypervisor = strstr(line, " hypervisor") != NULL;
	}
	if (f)
		fclose(f);
	if (!flags)
		return json_null();
	if (!hypervisor)
		return json_string("none");
	if (read_line("/sys/class/dmi/id/sys_vendor", line, sizeof(line)) && line[0])
		return json_string(line);
	return json_string("hypervisor");
}

json_t *machine_load_json(void)
{
	json_t *state = json_object();
	double load[3];
	int running = -1, total = 0;
	FILE *f = fopen("/proc/loadavg", "re");
	if (f && fscanf(f, "%lf %lf %lf %d/%d", &load[0], &load[1], &load[2], &running,
			&total) == 5)
		json_object_set_new(state, "load_average",
				    json_pack("[f, f, f]", load[0], load[1], load[2]));
	else
		json_object_set_new(state, "load_average", json_null());
	if (f)
		fclose(f);
	/* the runnable tasks, less the reader itself */
	json_object_set_new(state, "running", running > 0 ? json_integer(running - 1) : json_null());
	return state;
}

json_t *machine_state_json(void)
{
	json_t *state = machine_load_json();
	double mhz = cpu_mhz();
	json_object_set_new(state, "cpu_mhz", mhz > 0 ? json_real(mhz) : json_null());
	char governor[64];
	json_object_set_new(state, "governor",
			    read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
				      governor, sizeof(governor)) ? json_string(governor)
								  : json_null());
	json_object_set_new(state, "virtualization", virtualization());
	return state;
}

const char *machine_busy(const json_t *state, int cores)
{
	static char msg[256];
	double load = json_number_value(json_array_get(json_object_get(state, "load_average"), 0));
	json_int_t running = json_integer_value(json_object_get(state, "running"));
	if (cores < 1)
		cores = 1;
	if (load > cores / 2.0) {
		snprintf(msg, sizeof(msg), "the machine was busy: load average %.2f on %d cores",
			 load, cores);
		return msg;
	}
	if (running > cores) {
		snprintf(msg, sizeof(msg), "the machine was busy: %lld runnable tasks on %d cores",
			 (long long)running, cores);
		return msg;
	}
	return NULL;
}
