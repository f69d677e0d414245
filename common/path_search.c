/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/* execvp's search of PATH (path_search.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path_search.h"

int kp_path_search(const char *dirs, const char *name, char *out, size_t len)
{
	char *copy = strdup(dirs);
	if (!copy)
		return -ENOMEM;
	int err = -ENOENT;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir;
	     dir = strtok_r(NULL, ":", &save)) {
		struct stat st;
		int n = snprintf(out, len, "%s/%s", *dir ? dir : ".", name);
		if (n < 0 || (size_t)n >= len)
			continue;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) {
			err = 0;
			break;
		}
	}
	free(copy);
	if (err && len)
		out[0] = '\0';
	return err;
}
