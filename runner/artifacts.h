/* SPDX-License-Identifier: MIT */
/*
 * Where things are (the source tree, programs, results, the kprof tools)
 * and the artifacts a suite uses: resolved to a path, sized and
 * fingerprinted with SHA-256 before any workload runs.
 */
#ifndef KRUNNER_ARTIFACTS_H
#define KRUNNER_ARTIFACTS_H

#include <limits.h>
#include <stddef.h>

#include "suite.h"

struct locations {
	char root[PATH_MAX];		/* source tree; "" if not found */
	char exe_dir[PATH_MAX];		/* where the krunner binary is */
	char programs_dir[PATH_MAX];	/* --programs, $KRUNNER_PROGRAMS or build/programs */
	char out_dir[PATH_MAX];		/* --out, or results/ of the tree or the cwd */
	char shim[PATH_MAX];		/* libkprof.so */
	char kanalyze[PATH_MAX];
	char kbpf_trace[PATH_MAX];
};

struct artifact {
	enum artifact_kind kind;
	char *name;
	char *path;		/* absolute */
	long long size;
	char sha256[65];	/* lower-case hex */
};

/* Fills loc from the options (NULL = default) and the environment. 0 or -errno. */
int locations_init(struct locations *loc, const char *programs_opt, const char *out_opt);

/* Resolves and fingerprints one artifact. 0, or -errno with a one-line
 * reason in why (e.g. "not found: /x/build/programs/hello"). */
int artifact_resolve(const struct locations *loc, const struct artifact_def *def,
		     struct artifact *out, char *why, size_t why_len);
/* Fingerprints an executable or file by path (for tools: shim, launcher). */
int artifact_from_path(enum artifact_kind kind, const char *name, const char *path,
		       struct artifact *out, char *why, size_t why_len);
void artifact_free(struct artifact *a);

/* The install/build command for a missing artifact. */
const char *artifact_install_hint(const struct artifact_def *def, char *buf, size_t len);

/* SHA-256 of a file as hex, and its size. 0 or -errno. */
int sha256_file(const char *path, char hex[65], long long *size);

/* An executable named name in $PATH (or name itself if it has a '/'). 0 or -ENOENT. */
int find_executable(const char *name, char *out, size_t len);

const char *artifact_kind_name(enum artifact_kind kind);

#endif
