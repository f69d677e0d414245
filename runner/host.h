/* SPDX-License-Identifier: MIT */
/* What the result says about the machine and the source tree. */
#ifndef KRUNNER_HOST_H
#define KRUNNER_HOST_H

#include <jansson.h>

/* {"hostname", "kernel", "kernel_version", "arch", "cpu_model", "cores",
 *  "memory_bytes"} */
json_t *host_json(void);
/* {"head": sha, "dirty": bool} of the tree, or JSON null when git or the
 * repository is not there. */
json_t *git_json(const char *root);

/* The node name (uname), for matching a noise file to its machine. */
const char *host_name(void);

/*
 * What the machine was doing, as pyperf checks it: {"load_average": [1, 5,
 * 15 min], "running": runnable tasks, "cpu_mhz": current frequency or null,
 * "governor": cpufreq governor or null, "virtualization": hypervisor or
 * container name, "none", or null when unknown}.
 */
json_t *machine_state_json(void);
/* Only {"load_average": [1, 5, 15 min], "running": runnable tasks besides
 * the reader}: cheap enough to read around every round. */
json_t *machine_load_json(void);
/* A warning when the machine is busy (1-min load above half the cores, or
 * more runnable tasks than cores besides ourselves), else NULL: static. */
const char *machine_busy(const json_t *state, int cores);

#endif
