/* SPDX-License-Identifier: MIT */
/*
 * artifacts: locating the tree and the tools, resolving what a suite needs
 * and fingerprinting it. SHA-256 comes from OpenSSL's libcrypto (EVP): a
 * fingerprint decides whether two results may be compared, so it must be a
 * real cryptographic hash, not a home-made one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "artifacts.h"
#include "path_search.h"

const char *artifact_kind_name(enum artifact_kind kind)
{
	switch (kind) {
	case ARTIFACT_PROGRAM:
		return "program";
	case ARTIFACT_INPUT:
		return "input";
	case ARTIFACT_TOOL:
		return "tool";
	}
	return "unknown";
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Not inlined: gcc then sees the destination size only, not a guess. */
__attribute__((noinline))
static int copy_path(char *dst, const char *fmt, const char *a, const char *b)
{
	int n = snprintf(dst, PATH_MAX, fmt, a, b);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* The tree is the parent of the build directory krunner lives in, when it
 * looks like one (has programs/ and runner/); otherwise the cwd if it does;
 * installed (make install), share/kprof beside bin/, which holds the
 * programs' inputs (programs/erlang/ring.erl, ...). */
static bool root_installed; /* the root is share/kprof: results go to the cwd */

static void find_root(struct locations *loc)
{
	char candidate[PATH_MAX], cwd[PATH_MAX];
	loc->root[0] = '\0';
	if (copy_path(candidate, "%s/%s", loc->exe_dir, "..") == 0) {
		char real[PATH_MAX], probe[PATH_MAX];
		if (realpath(candidate, real) && copy_path(probe, "%s/%s", real, "runner") == 0 &&
		    is_dir(probe)) {
			snprintf(loc->root, sizeof(loc->root), "%s", real);
			return;
		}
	}
	if (getcwd(cwd, sizeof(cwd))) {
		char probe[PATH_MAX];
		if (copy_path(probe, "%s/%s", cwd, "runner") == 0 && is_dir(probe) &&
		    copy_path(probe, "%s/%s", cwd, "programs") == 0 && is_dir(probe)) {
			snprintf(loc->root, sizeof(loc->root), "%s", cwd);
			return;
		}
	}
	char real[PATH_MAX], probe[PATH_MAX];
	if (copy_path(candidate, "%s/%s", loc->exe_dir, "../share/kprof") == 0 &&
	    realpath(candidate, real) && copy_path(probe, "%s/%s", real, "programs") == 0 &&
	    is_dir(probe)) {
		snprintf(loc->root, sizeof(loc->root), "%s", real);
		root_installed = true;
	}
}

static int absolute(const char *path, char *out)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return copy_path(out, "%s%s", path, "");
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return copy_path(out, "%s/%s", cwd, path);
}

/* A kprof tool next to krunner (the build directory), else ../lib or
 * ../bin of an installed prefix. */
static void find_tool(const struct locations *loc, const char *name, const char *installed_dir,
		      char *out)
{
	char path[PATH_MAX];
	if (copy_path(path, "%s/%s", loc->exe_dir, name) == 0 && is_file(path)) {
		strcpy(out, path);	/* both PATH_MAX */
		return;
	}
	char alt[PATH_MAX];
	if (snprintf(alt, sizeof(alt), "%s/../%s/%s", loc->exe_dir, installed_dir, name) <
		    (int)sizeof(alt) &&
	    is_file(alt) && realpath(alt, path)) {
		strcpy(out, path);
		return;
	}
	/* Not found: keep the expected path for the error message. */
	copy_path(out, "%s/%s", loc->exe_dir, name);
}

int locations_init(struct locations *loc, const char *programs_opt, const char *out_opt)
{
	char exe[PATH_MAX];
	int err;
	memset(loc, 0, sizeof(*loc));
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(loc->exe_dir, sizeof(loc->exe_dir), "%s", exe);
	find_root(loc);

	const char *env_programs = getenv("KRUNNER_PROGRAMS");
	if (programs_opt)
		err = absolute(programs_opt, loc->programs_dir);
	else if (env_programs && *env_programs)
		err = absolute(env_programs, loc->programs_dir);
	else
		err = copy_path(loc->programs_dir, "%s/%s", loc->exe_dir, "programs");
	if (err)
		return err;
	/* installed: lib/kprof/programs beside bin/ */
	char installed[PATH_MAX];
	if (!programs_opt && !(env_programs && *env_programs) && !is_dir(loc->programs_dir) &&
	    copy_path(installed, "%s/%s", loc->exe_dir, "../lib/kprof/programs") == 0 &&
	    is_dir(installed) && !realpath(installed, loc->programs_dir))
		return -errno;

	if (out_opt) {
		err = absolute(out_opt, loc->out_dir);
	} else if (loc->root[0] && !root_installed) {
		err = copy_path(loc->out_dir, "%s/%s", loc->root, "results");
	} else {
		err = absolute("results", loc->out_dir);
	}
	if (err)
		return err;
	find_tool(loc, "libkprof.so", "lib/kprof", loc->shim);
	find_tool(loc, "kanalyze", "bin", loc->kanalyze);
	find_tool(loc, "kbpf-trace", "bin", loc->kbpf_trace);
	return 0;
}

int find_executable(const char *name, char *out, size_t len)
{
	if (strchr(name, '/')) {
		char abs[PATH_MAX];
		if (absolute(name, abs) || access(abs, X_OK) != 0 || !is_file(abs))
			return -ENOENT;
		snprintf(out, len, "%s", abs);
		return 0;
	}
	const char *path_env = getenv("PATH");
	return kp_path_search(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin", name, out,
			      len);
}

int sha256_file(const char *path, char hex[65], long long *size)
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	unsigned char buf[65536];
	long long total = 0;
	int err = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	if (!md) {
		close(fd);
		return -ENOMEM;
	}
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		err = -EIO;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		total += n;
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1) {
			err = -EIO;
			goto out;
		}
	}
	if (EVP_DigestFinal_ex(md, digest, &digest_len) != 1 || digest_len != 32) {
		err = -EIO;
		goto out;
	}
	for (unsigned i = 0; i < digest_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	*size = total;
out:
	EVP_MD_CTX_free(md);
	close(fd);
	return err;
}

const char *artifact_install_hint(const struct artifact_def *def, char *buf, size_t len)
{
	if (def->install)
		return def->install;
	if (def->kind == ARTIFACT_PROGRAM)
		snprintf(buf, len, "make build/programs/%s", def->name);
	else if (def->kind == ARTIFACT_TOOL)
		snprintf(buf, len, "install %s", def->name);
	else
		snprintf(buf, len, "provide %s", def->name);
	return buf;
}

int artifact_from_path(enum artifact_kind kind, const char *name, const char *path,
		       struct artifact *out, char *why, size_t why_len)
{
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	int err = sha256_file(path, out->sha256, &out->size);
	if (err) {
		snprintf(why, why_len, "%s: %s", path, strerror(-err));
		return err;
	}
	out->name = strdup(name);
	out->path = strdup(path);
	if (!out->name || !out->path) {
		artifact_free(out);
		return -ENOMEM;
	}
	return 0;
}

int artifact_resolve(const struct locations *loc, const struct artifact_def *def,
		     struct artifact *out, char *why, size_t why_len)
{
	char path[PATH_MAX];
	int err = 0;
	switch (def->kind) {
	case ARTIFACT_PROGRAM:
		err = copy_path(path, "%s/%s", loc->programs_dir, def->name);
		if (!err && (!is_file(path) || access(path, X_OK) != 0))
			err = -ENOENT;
		break;
	case ARTIFACT_INPUT:
		if (def->name[0] == '/')
			err = copy_path(path, "%s%s", def->name, "");
		else
			err = copy_path(path, "%s/%s", loc->root[0] ? loc->root : ".", def->name);
		if (!err && !is_file(path))
			err = -ENOENT;
		break;
	case ARTIFACT_TOOL:
		err = find_executable(def->name, path, sizeof(path));
		if (err)
			snprintf(path, sizeof(path), "%s (in PATH)", def->name);
		break;
	}
	if (err) {
		snprintf(why, why_len, "%s %s not found: %s", artifact_kind_name(def->kind),
			 def->name, path);
		return err;
	}
	return artifact_from_path(def->kind, def->name, path, out, why, why_len);
}

void artifact_free(struct artifact *a)
{
	free(a->name);
	free(a->path);
	a->name = a->path = NULL;
}
