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

#endif
