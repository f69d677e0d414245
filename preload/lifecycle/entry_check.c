/* SPDX-License-Identifier: MIT */
/*
 * Processes the shim cannot enter, said where the shim can tell
 * (docs/FORMAT.md: the exec record's `not_entered`, the header's
 * `untraced_parent`), and the header's `runtime` hint:
 *
 * - at an exec, the file about to run: no PT_INTERP (static: nothing
 *   loads LD_PRELOAD), setuid or setgid to another user or group, file
 *   capabilities (the loader ignores LD_PRELOAD paths, the kernel sets
 *   AT_SECURE), an ELF of another class or machine (libkprof.so cannot
 *   be loaded into it), or an environment without LD_PRELOAD of the shim;
 * - at start-up, a parent that was meant to be traced (its environment
 *   preloads libkprof.so) but is not (the shim's mark, KPROF_PARENT,
 *   did not come from it, and its mappings lack the library): why, from
 *   its executable, as above;
 * - whether the executable is a Go program (its `Go` build-id note, read
 *   in memory: no call), whose runtime makes its syscalls itself.
 *
 * Raw syscalls only: the exec check runs in the exec hooks, the rest in
 * the start-up. A check that cannot be made says nothing.
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "lifecycle.h"
#include "../core/user_mem.h"

extern char **environ;

#if defined(__x86_64__)
#define KP_EM EM_X86_64
#elif defined(__aarch64__)
#define KP_EM EM_AARCH64
#endif

/* ---- our own image, from the auxiliary vector (no call) ---- */

/* Our program headers and load bias; false without them. */
static bool own_phdrs(const Elf64_Phdr **ph, size_t *n, uintptr_t *bias)
{
	*ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	*n = getauxval(AT_PHNUM);
	if (!*ph || !*n)
		return false;
	*bias = 0;
	for (size_t i = 0; i < *n; i++)
		if ((*ph)[i].p_type == PT_PHDR)
			*bias = (uintptr_t)*ph - (*ph)[i].p_vaddr;
	return true;
}

/* [vaddr, vaddr + len) inside a loaded segment of ours (mapped). */
static bool own_loaded(const Elf64_Phdr *ph, size_t n, uint64_t vaddr, uint64_t len)
{
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr + len <= ph[i].p_vaddr + ph[i].p_filesz && vaddr + len >= vaddr)
			return true;
	return false;
}

const char *kp_exe_runtime(void)
{
	const Elf64_Phdr *ph;
	size_t n;
	uintptr_t bias;
	if (!own_phdrs(&ph, &n, &bias))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type != PT_NOTE || !own_loaded(ph, n, ph[i].p_vaddr, ph[i].p_filesz))
			continue;
		const char *p = (const char *)(bias + ph[i].p_vaddr);
		const char *end = p + ph[i].p_filesz;
		while ((size_t)(end - p) >= sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *nh = (const void *)p;
			size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
			const char *nm = p + sizeof(*nh);
			if (name > (size_t)(end - nm) || desc > (size_t)(end - nm) - name)
				break;
			/* the Go linker's build id: owner "Go\0\0", type 4 */
			if ((nh->n_namesz == 3 || nh->n_namesz == 4) && nh->n_type == 4 &&
			    memcmp(nm, "Go", 3) == 0)
				return "go";
			p = nm + name + desc;
		}
	}
	return NULL;
}

/* The dynamic loader our own image names (PT_INTERP), "" if none. */
static const char *own_interp(void)
{
	const Elf64_Phdr *ph;
	size_t n;
	uintptr_t bias;
	if (!own_phdrs(&ph, &n, &bias))
		return "";
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP && ph[i].p_filesz > 1 &&
		    own_loaded(ph, n, ph[i].p_vaddr, ph[i].p_filesz)) {
			const char *s = (const char *)(bias + ph[i].p_vaddr);
			return s[ph[i].p_filesz - 1] == 0 ? s : "";
		}
	return "";
}

/* ---- a file about to run ---- */

/* The setuid or setgid bit takes effect (no no_new_privs, no nosuid mount). */
static bool set_id_takes_effect(long fd)
{
	if (kp_raw(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return false;
	struct statfs sfs;
	return !(kp_raw(SYS_fstatfs, fd, &sfs) == 0 && (sfs.f_flags & ST_NOSUID));
}

static long real_uid = -1;

/* What in fd's file keeps LD_PRELOAD out, from its mode and first bytes. */
static const char *file_why(long fd)
{
	struct stat st;
	if (kp_raw(SYS_fstat, fd, &st) || !S_ISREG(st.st_mode))
		return NULL;
	if ((st.st_mode & S_ISUID) && (long)st.st_uid != kp_raw0(SYS_getuid) &&
	    set_id_takes_effect(fd))
		return "setuid";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) &&
	    (long)st.st_gid != kp_raw0(SYS_getgid) && set_id_takes_effect(fd))
		return "setgid";
	if (real_uid < 0)
		real_uid = kp_raw0(SYS_getuid);
	/* file capabilities make a secure exec for all but root */
	if (real_uid != 0 &&
	    kp_raw(SYS_fgetxattr, fd, "security.capability", NULL, 0) > 0 &&
	    set_id_takes_effect(fd))
		return "capabilities";
	union {
		Elf64_Ehdr eh;
		char b[1024];
	} h;
	long got = kp_raw(SYS_pread64, fd, h.b, sizeof(h.b), 0);
	if (got < (long)sizeof(Elf64_Ehdr) || memcmp(h.b, ELFMAG, SELFMAG) != 0)
		return NULL; /* a script, or not ours to judge */
	if (h.eh.e_ident[EI_CLASS] != ELFCLASS64 || h.eh.e_machine != KP_EM)
		return "foreign-elf";
	if (h.eh.e_phentsize != sizeof(Elf64_Phdr) || h.eh.e_phnum == 0)
		return NULL;
	/* PT_INTERP comes early: the first bytes hold it, read more only
	 * when needed, a few headers at a time (a vfork child's stack may be
	 * small) */
	Elf64_Phdr ph[8];
	for (size_t i = 0; i < h.eh.e_phnum;) {
		size_t k = h.eh.e_phnum - i < 8 ? h.eh.e_phnum - i : 8;
		uint64_t off = h.eh.e_phoff + i * sizeof(Elf64_Phdr), len = k * sizeof(Elf64_Phdr);
		if (off + len <= (uint64_t)got && off + len > off)
			memcpy(ph, h.b + off, len);
		else if (kp_raw(SYS_pread64, fd, ph, len, off) != (long)len)
			return NULL;
		for (size_t j = 0; j < k; j++)
			if (ph[j].p_type == PT_INTERP)
				return NULL;
		i += k;
	}
	/* the dynamic loader run as a program loads LD_PRELOAD itself */
	const char *ld = own_interp();
	struct stat lst;
	if (h.eh.e_type == ET_DYN && ld[0] &&
	    kp_raw(SYS_newfstatat, AT_FDCWD, ld, &lst, 0) == 0 &&
	    lst.st_dev == st.st_dev && lst.st_ino == st.st_ino)
		return NULL;
	return "static";
}

/* The value of NAME= in environ (the caller's), or NULL. */
static const char *own_env(const char *name)
{
	size_t n = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* execvp's search: the first regular file with an x bit along PATH. */
static long open_in_path(const char *file)
{
	const char *path = own_env("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	size_t flen = strlen(file);
	char buf[KP_PATH_MAX];
	for (const char *p = path;; p++) {
		const char *colon = strchr(p, ':');
		size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
		if (dlen + flen + 2 <= sizeof(buf)) {
			memcpy(buf, p, dlen);
			size_t at = dlen;
			if (dlen)
				buf[at++] = '/';
			memcpy(buf + at, file, flen + 1);
			long fd = kp_raw(SYS_openat, AT_FDCWD, buf,
					 O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			struct stat st;
			if (fd >= 0 && kp_raw(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    (st.st_mode & 0111))
				return fd;
			if (fd >= 0)
				kp_raw(SYS_close, fd);
		}
		if (!colon)
			return -ENOENT;
		p = colon;
	}
}

const char *kp_exec_not_entered(int dirfd, const char *path, int flags,
				char *const envp[], bool env_followed)
{
	long fd;
	bool own_fd = true;
	if ((flags & AT_EMPTY_PATH) && !path[0]) {
		fd = dirfd; /* fexecve: the descriptor itself, read with pread */
		own_fd = false;
	} else if ((flags & KP_EXEC_SEARCH) && !strchr(path, '/')) {
		fd = open_in_path(path);
	} else {
		fd = kp_raw(SYS_openat, dirfd, path,
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
				    ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	}
	const char *why = fd >= 0 ? file_why(fd) : NULL;
	if (fd >= 0 && own_fd)
		kp_raw(SYS_close, fd);
	if (why)
		return why;
	/* an environment that drops us (KPROF_FOLLOW=0, or a raw execve) */
	if (!env_followed && kp_child_env_preloads(envp) == 0)
		return "no-preload";
	return NULL;
}

/* ---- a child's exec, for the parent's fork record (sink.h's
 * kp_child_why and kp_child_path) ---- */

void kp_child_exec_check(int dirfd, const char *path, int flags, char *const envp[],
			 bool env_followed)
{
	/* small: this may run on a vfork or spawn child's stack */
	char copy[1024];
	long n = kp_user_string(path, copy, sizeof(copy));
	kp_child_why = n < 0 ? NULL : kp_exec_not_entered(dirfd, copy, flags, envp, env_followed);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(kp_child_path))
		n = sizeof(kp_child_path) - 1;
	memcpy(kp_child_path, copy, (size_t)n);
	kp_child_path[n] = 0;
}

/* ---- the parent, at start-up ---- */

/*
 * Calls fn on each record of the file at path, records ending in sep
 * (environ: NUL, maps: newline), in pieces through a buffer of ours; a
 * record longer than half of it is skipped. Stops when fn returns true:
 * then true. False at the end, or when the file cannot be read (*err).
 */
static bool each_record(const char *path, char sep, bool (*fn)(const char *rec, void *ctx),
			void *ctx, long *err)
{
	static char buf[16384];
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	*err = fd < 0 ? fd : 0;
	if (fd < 0)
		return false;
	size_t have = 0;
	bool found = false, skipping = false;
	for (;;) {
		long n = kp_raw(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
		if (n == -EINTR)
			continue;
		if (n < 0)
			*err = n;
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < have && !found; i++) {
			if (buf[i] != sep)
				continue;
			buf[i] = 0;
			if (!skipping)
				found = fn(buf + start, ctx);
			skipping = false;
			start = i + 1;
		}
		if (found)
			break;
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have > sizeof(buf) / 2) {
			skipping = true; /* a record too long: up to its end */
			have = 0;
		}
	}
	kp_raw(SYS_close, fd);
	return found;
}

static bool env_preloads_us(const char *rec, void *ctx)
{
	(void)ctx;
	return strncmp(rec, "LD_PRELOAD=", 11) == 0 && kp_child_preload_names_us(rec + 11);
}

static bool maps_have_us(const char *rec, void *ctx)
{
	const char *base = ctx;
	size_t n = strlen(rec), b = strlen(base);
	return n > b && rec[n - b - 1] == '/' && strcmp(rec + n - b, base) == 0;
}

void kp_parent_check(uint64_t mark)
{
	uint64_t ppid = kp_proc.ppid;
	kp_proc.untraced_parent_pid = 0;
	/* its mark: the parent is traced (the pid, so that a mark an untraced
	 * program passed on from its own traced parent does not count) */
	if (ppid <= 1 || mark == ppid)
		return;
	char path[48] = "/proc/", num[24];
	strcat(path, kp_u64_dec(num, ppid));
	size_t dir = strlen(path);
	long err;
	/* not meant to be traced (a shell that started the run): nothing */
	strcpy(path + dir, "/environ");
	if (!each_record(path, 0, env_preloads_us, NULL, &err))
		return;
	strcpy(path + dir, "/exe");
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	const char *why = fd >= 0 ? file_why(fd) : NULL;
	if (fd >= 0)
		kp_raw(SYS_close, fd);
	if (!why) {
		const char *lib = kp_child_preload_base();
		strcpy(path + dir, "/maps");
		if (!lib || each_record(path, '\n', maps_have_us, (void *)lib, &err) || err)
			return; /* traced after all (a spawn without the mark), or unknown */
		why = "not-loaded";
	}
	strcpy(path + dir, "/exe");
	long n = kp_raw(SYS_readlink, path, kp_proc.untraced_parent_exe,
			sizeof(kp_proc.untraced_parent_exe) - 1);
	kp_proc.untraced_parent_exe[n > 0 ? n : 0] = 0;
	kp_proc.untraced_parent_why = why;
	kp_proc.untraced_parent_pid = ppid;
}
