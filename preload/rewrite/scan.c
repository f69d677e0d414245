/* SPDX-License-Identifier: MIT */
/*
 * Finding the `syscall` instructions of a mapping (rewrite mode). For an
 * ELF file the sites come from the helper program kprof-sites (a
 * capstone linear sweep of the executable sections libelf finds, next to
 * this library; see preload/helper/kprof_sites.c), run once per file and
 * kept in a per-user cache keyed by build-id: capstone and libelf never
 * load into the traced process, whose start stays cheap (cc1 starts
 * thousands of times). The helper runs as a child of our own, without a
 * termination signal, so that the program's wait(-1) never sees it.
 *
 * Code without an ELF file behind it (a JIT's buffer) has no sections and
 * no function table to sync a sweep from; there only the canonical stub
 * `mov $nr, %eax; syscall` (or `mov $nr, %rax`), with nr a syscall
 * number, counts as a site: seven bytes of two whole instructions, not
 * the byte pair alone.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>

#include "elf_build_id.h"
#include "../helper/sites_protocol.h"
#include "../lifecycle/lifecycle.h"
#include "rewrite.h"
#include "../core/user_mem.h"

struct kp_rw_scan_stats kp_rw_stats;

static char cache_dir[KP_PATH_MAX];
/* "KPROF_EXEC_SITES=<cache_dir>", handed to child images (lifecycle/child_env.c) */
static char cache_handoff[KP_PATH_MAX + 24];
static char helper_path[KP_PATH_MAX];

/* ---- growable list of uint64_t ---- */

/*
 * Raw mmap and mremap, not malloc: other threads may wait for the shim's
 * start-up inside a syscall made under a libc lock (malloc's among them)
 * while this runs.
 */
int kp_rw_list_add(struct kp_rw_list *l, uint64_t x)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 2048, old = l->cap * sizeof(uint64_t);
		long p = l->v ? kp_raw(SYS_mremap, l->v, old, cap * sizeof(uint64_t), MREMAP_MAYMOVE)
			      : kp_raw(SYS_mmap, 0, cap * sizeof(uint64_t), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p < 0 && p > -4096)
			return -ENOMEM;
		l->v = (uint64_t *)p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return 0;
}

void kp_rw_list_free(struct kp_rw_list *l)
{
	if (l->v)
		kp_raw(SYS_munmap, l->v, l->cap * sizeof(uint64_t));
	*l = (struct kp_rw_list){ 0 };
}

/* ---- the per-user cache of sites ---- */

static long euid = -1;

static long our_euid(void)
{
	if (euid < 0)
		euid = kp_raw0(SYS_geteuid);
	return euid;
}

/* A directory (not a link to one) of ours that nobody else may write to. */
static bool dir_is_ours(const char *path)
{
	struct stat st;
	return kp_raw(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode) && (long)st.st_uid == our_euid() && !(st.st_mode & 077);
}

/* The header's site_cache_note, and KPROF_DEBUG=1's line (once). */
static char cache_note[2 * KP_PATH_MAX + 128];

static void note_add(const char *a, const char *b, const char *c)
{
	size_t n = strlen(cache_note);
	const char *parts[3] = { a, b, c };
	for (int i = 0; i < 3 && parts[i]; i++) {
		size_t m = strlen(parts[i]);
		if (n + m >= sizeof(cache_note))
			return;
		memcpy(cache_note + n, parts[i], m + 1);
		n += m;
	}
}

/*
 * Makes path's last component (its parents exist) a directory of ours,
 * 0700: true when it is one. Someone else's directory or link there is
 * refused (dir_is_ours looks at the name itself, not through a link).
 */
static bool make_own_dir(const char *path)
{
	if (dir_is_ours(path))
		return true;
	kp_raw(SYS_mkdir, path, 0700);
	return dir_is_ours(path);
}

/*
 * Where the usual cache cannot be (a home of another user's, a read-only
 * one): a directory of ours under $XDG_RUNTIME_DIR (the user's, 0700), else
 * $TMPDIR/kprof-UID (/tmp without TMPDIR), made 0700 and refused when
 * someone else planted it.
 */
static bool cache_fallback(const char *runtime_dir, const char *tmp)
{
	char num[24];
	if (!tmp || strlen(tmp) + 64 >= sizeof(cache_dir))
		tmp = "/tmp";
	if (runtime_dir && strlen(runtime_dir) + 32 < sizeof(cache_dir) &&
	    dir_is_ours(runtime_dir)) {
		strcpy(cache_dir, runtime_dir);
		strcat(cache_dir, "/kprof-sites");
		if (make_own_dir(cache_dir))
			return true;
	}
	strcpy(cache_dir, tmp);
	strcat(cache_dir, "/kprof-");
	strcat(cache_dir, kp_u64_dec(num, (uint64_t)our_euid()));
	if (!make_own_dir(cache_dir)) {
		note_add("; ", cache_dir, " is not a directory of ours (0700) either");
		return false;
	}
	strcat(cache_dir, "/sites");
	return make_own_dir(cache_dir);
}

/*
 * The cache directory: the parent image's when it is the one our
 * environment names (checked there), else ours checked, made when
 * missing; where that cannot be, the parent image's fallback, else one
 * of our own (cache_fallback), said in the header and, by the image that
 * chose it, with KPROF_DEBUG=1. Its entries are trusted as ours:
 * nobody else can write there.
 */
static void cache_dir_init(void)
{
	extern char **environ;
	const char *xdg = NULL, *home = NULL, *runtime_dir = NULL, *tmp_dir = NULL;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "XDG_CACHE_HOME=", 15) == 0 && (*e)[15] == '/')
			xdg = *e + 15;
		else if (strncmp(*e, "HOME=", 5) == 0 && (*e)[5] == '/')
			home = *e + 5;
		else if (strncmp(*e, "XDG_RUNTIME_DIR=", 16) == 0 && (*e)[16] == '/')
			runtime_dir = *e + 16;
		else if (strncmp(*e, "TMPDIR=", 7) == 0 && (*e)[7] == '/')
			tmp_dir = *e + 7;
	}
	const char *base = xdg ? xdg : home;
	const char *tail = xdg ? "/kprof/sites" : "/.cache/kprof/sites";
	cache_note[0] = 0;
	if (base && strlen(base) + strlen(tail) < sizeof(cache_dir) &&
	    strncmp(kp_config.exec_sites, base, strlen(base)) == 0 &&
	    strcmp(kp_config.exec_sites + strlen(base), tail) == 0) {
		/* the parent image's, checked there by the same user: no calls */
		strcpy(cache_dir, kp_config.exec_sites);
		goto ours;
	}
	if (!base && kp_config.exec_sites[0] == '/' &&
	    strlen(kp_config.exec_sites) + 64 < sizeof(cache_dir)) {
		/*
		 * An environment without a home (posix_spawn with LANG and PATH
		 * only): the parent's cache, under the same checks as our own
		 * below. Without it every such child swept libc anew (25 ms).
		 */
		strcpy(cache_dir, kp_config.exec_sites);
		goto check;
	}
	if (!base || strlen(base) + strlen(tail) + 64 >= sizeof(cache_dir))
		return;
	strcpy(cache_dir, base);
	strcat(cache_dir, tail);
	if (dir_is_ours(cache_dir))
		goto ours; /* made before: one call */
	/* only in a directory of our own (root with another user's HOME,
	 * under sudo, must not create directories there) */
	struct stat base_st;
	long err = kp_raw(SYS_newfstatat, AT_FDCWD, base, &base_st, 0);
	if (err || (long)base_st.st_uid != our_euid()) {
		char num[24];
		note_add("cannot use ", cache_dir, " (");
		note_add(base, err ? ": cannot be read" : " belongs to uid ",
			 err ? NULL : kp_u64_dec(num, base_st.st_uid));
		note_add(", not ", kp_u64_dec(num, (uint64_t)our_euid()), ")");
		goto fallback;
	}
	/* each level 0700 where we create it; the last one must be ours */
	char tmp[KP_PATH_MAX];
	strcpy(tmp, cache_dir);
	for (char *p = tmp + strlen(base) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		kp_raw(SYS_mkdir, tmp, 0700);
		*p = '/';
	}
	kp_raw(SYS_mkdir, tmp, 0700);
check:
	if (dir_is_ours(cache_dir))
		goto ours;
	note_add("cannot use ", cache_dir,
		 " (not a directory of ours that only we can write, and cannot be made one)");
fallback:
	/* the parent image's fallback, handed down: it said so already */
	if (kp_config.exec_sites[0] == '/' && strlen(kp_config.exec_sites) < sizeof(cache_dir) &&
	    dir_is_ours(kp_config.exec_sites)) {
		strcpy(cache_dir, kp_config.exec_sites);
		note_add(": using ", cache_dir, " instead");
		kp_proc.site_cache_note = cache_note;
		goto ours;
	}
	if (!cache_fallback(runtime_dir, tmp_dir)) {
		cache_dir[0] = 0;
		note_add(": no site cache, every process sweeps its libraries again", NULL, NULL);
	} else {
		note_add(": using ", cache_dir, " instead");
	}
	kp_proc.site_cache_note = cache_note;
	kp_debug(cache_note);
	if (!cache_dir[0])
		return;
ours:
	strcpy(cache_handoff, "KPROF_EXEC_SITES=");
	strcat(cache_handoff, cache_dir);
}

const char *kp_rw_sites_handoff(void)
{
	return cache_handoff[0] ? cache_handoff : NULL;
}

#define CACHE_MAGIC "KPRFSIT4" /* bumped when the analysis changes */

struct cache_head {
	char magic[8];
	uint64_t file_size;
	uint64_t count;
	uint64_t skipped; /* sites left alone (red zone) */
	char build_id[96]; /* or dev-ino-mtime for a file without one */
};

static void cache_path(char *out, const char *build_id, uint64_t size)
{
	char num[24];
	int i = 23;
	num[i] = 0;
	do {
		num[--i] = (char)('0' + size % 10);
		size /= 10;
	} while (size);
	strcpy(out, cache_dir);
	strcat(out, "/");
	strcat(out, build_id);
	strcat(out, "-");
	strcat(out, num + i);
}

static bool cache_read(const char *build_id, uint64_t size, struct kp_rw_list *out,
		       uint64_t *skipped)
{
	if (!cache_dir[0] || !build_id[0])
		return false;
	char path[KP_PATH_MAX];
	cache_path(path, build_id, size);
	long fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	/* the head and, for most files, every entry in one read; the rest after */
	static uint64_t buf[2048]; /* under kp_rw_lock */
	const struct cache_head *h = (const void *)buf;
	long got = kp_raw(SYS_pread64, fd, buf, sizeof(buf), 0);
	bool ok = got >= (long)sizeof(*h) && memcmp(h->magic, CACHE_MAGIC, 8) == 0 &&
		  h->file_size == size && strncmp(h->build_id, build_id, sizeof(h->build_id)) == 0 &&
		  h->count < (1u << 20);
	if (ok) {
		/* exactly the head and count entries: a short or long file is not ours */
		uint64_t count = h->count, want = sizeof(*h) + count * sizeof(uint64_t);
		uint64_t off = 0, i = 0;
		size_t skip = sizeof(*h) / sizeof(uint64_t);
		*skipped = h->skipped;
		while (ok && got > 0) {
			if (got % (long)sizeof(uint64_t) || off + (uint64_t)got > want) {
				ok = false;
				break;
			}
			for (size_t k = skip; ok && k < (size_t)got / sizeof(uint64_t); k++, i++)
				ok = kp_rw_list_add(out, buf[k]) == 0;
			off += (uint64_t)got;
			skip = 0;
			if (off == want && got < (long)sizeof(buf))
				break;
			got = kp_raw(SYS_pread64, fd, buf, sizeof(buf), off);
		}
		ok = ok && off == want && i == count;
	}
	kp_raw(SYS_close, fd);
	if (!ok)
		out->n = 0;
	return ok;
}

static void cache_write(const char *build_id, uint64_t size, const struct kp_rw_list *l,
			uint64_t skipped)
{
	if (!cache_dir[0] || !build_id[0])
		return;
	char path[KP_PATH_MAX], tmp[KP_PATH_MAX];
	cache_path(path, build_id, size);
	strcpy(tmp, path);
	strcat(tmp, ".tmp");
	size_t len = strlen(tmp);
	uint64_t r = kp_new_stream_id((uintptr_t)l);
	for (int i = 0; i < 8; i++)
		tmp[len++] = "0123456789abcdef"[(r >> (4 * i)) & 15];
	tmp[len] = 0;
	long fd = kp_raw(SYS_openat, AT_FDCWD, tmp,
			 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	struct cache_head h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.file_size = size;
	h.count = l->n;
	h.skipped = skipped;
	strncpy(h.build_id, build_id, sizeof(h.build_id) - 1);
	bool ok = kp_raw(SYS_write, fd, &h, sizeof(h)) == (long)sizeof(h);
	size_t bytes = l->n * sizeof(uint64_t);
	for (size_t done = 0; ok && done < bytes;) {
		long n = kp_raw(SYS_write, fd, (const char *)l->v + done, bytes - done);
		if (n <= 0)
			ok = false;
		else
			done += (size_t)n;
	}
	kp_raw(SYS_close, fd);
	if (!ok || kp_raw(SYS_rename, tmp, path))
		kp_raw(SYS_unlink, tmp);
}

/* ---- the helper ---- */

static long pread_fd(void *ctx, void *buf, size_t count, uint64_t offset)
{
	return kp_raw(SYS_pread64, *(long *)ctx, buf, count, offset);
}

/*
 * The helper's exit must not reach the program: its SIGCHLD (the kernel
 * sends one after the exec although the clone asked for none) waits,
 * blocked, until the helper is reaped, and is taken off then. Another
 * child's SIGCHLD that came meanwhile is put back; one that merged with
 * the helper's (a standard signal is pending once) is sent anew when a
 * child of the program's is waiting to be reaped.
 */
static void helper_sigchld_drop(long pid)
{
	uint64_t chld = 1ULL << (SIGCHLD - 1);
	struct timespec zero = { 0, 0 };
	siginfo_t si;
	bool other = false;
	while (kp_raw(SYS_rt_sigtimedwait, &chld, &si, &zero, sizeof(chld)) == SIGCHLD) {
		if (si.si_pid == pid)
			continue;
		other = true;
		kp_raw(SYS_rt_sigqueueinfo, kp_raw0(SYS_getpid), SIGCHLD, &si);
		break;
	}
	if (other)
		return;
	memset(&si, 0, sizeof(si));
	if (kp_raw(SYS_waitid, P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT,
		   NULL) == 0 && si.si_pid) {
		si.si_signo = SIGCHLD;
		kp_raw(SYS_rt_sigqueueinfo, kp_raw0(SYS_getpid), SIGCHLD, &si);
	}
}

/*
 * Runs kprof-sites on path; its output (file offsets) into out. The
 * child is a copy of ours that only makes raw syscalls before its exec,
 * with every signal blocked (none of the program's handlers may run in
 * it), no termination signal and no tracer. The program's signals wait, blocked,
 * until the helper is reaped (helper_sigchld_drop).
 */
static int run_helper(const char *path, bool plan, struct kp_rw_list *out, uint64_t *skipped)
{
	static bool checked;
	if (!checked) {
		checked = true;
		if (helper_path[0] && kp_raw(SYS_access, helper_path, X_OK))
			helper_path[0] = 0;
	}
	if (!helper_path[0])
		return -ENOENT;
	int fds[2];
	long err = kp_raw(SYS_pipe2, fds, O_CLOEXEC);
	if (err)
		return (int)err;
	uint64_t all = ~0ULL, old = 0;
	kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
	/* CLONE_UNTRACED: a ptracer of the program (gdb, strace -f, rr) that
	 * follows forks must not take the helper for one of its children */
	long pid = kp_raw(SYS_clone, CLONE_UNTRACED, 0, NULL, NULL, 0);
	if (pid == 0) {
		kp_raw(SYS_dup2, fds[1], 1);
		long null = kp_raw(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
		if (null >= 0) {
			kp_raw(SYS_dup2, null, 0);
			if (!kp_config.debug)
				kp_raw(SYS_dup2, null, 2);
		}
		kp_raw(SYS_close_range, 3, ~0U, 0);
		uint64_t none = 0;
		kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
		char *argv[] = { helper_path, plan ? (char *)"--plan-bin" : (char *)path,
				 plan ? (char *)path : NULL, NULL };
		char *envp[] = { NULL };
		kp_raw(SYS_execve, helper_path, argv, envp);
		kp_raw(SYS_exit_group, 127);
	}
	kp_raw(SYS_close, fds[1]);
	if (pid < 0) {
		kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
		kp_raw(SYS_close, fds[0]);
		return (int)pid;
	}
	kp_rw_stats.helper_runs++;
	/* struct kp_sites_head, then uint64 offsets or struct kp_plan_rec, read
	 * as 3 uint64 each (sites_protocol.h) */
	uint64_t head[3], chunk[512];
	_Static_assert(sizeof(head) == sizeof(struct kp_sites_head), "kprof-sites header");
	size_t have = 0, want = sizeof(head);
	uint64_t got = 0;
	bool ok = true;
	while (ok) {
		char *dst = got == 0 && have < sizeof(head) ? (char *)head + have : (char *)chunk + have;
		size_t room = got == 0 && have < sizeof(head) ? want - have : sizeof(chunk) - have;
		long n = kp_raw(SYS_read, fds[0], dst, room);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		if (got == 0 && have == sizeof(head) && head[0] != 0) {
			ok = memcmp(head, plan ? KP_PLAN_MAGIC : KP_SITES_MAGIC, 8) == 0 &&
			     head[1] < (1u << 20);
			got = 1;
			have = 0;
			continue;
		}
		if (got) {
			for (size_t k = 0; ok && k + 8 <= have; k += 8)
				ok = kp_rw_list_add(out, chunk[k / 8]) == 0;
			size_t rest = have % 8;
			memmove(chunk, (char *)chunk + have - rest, rest);
			have = rest;
		}
	}
	kp_raw(SYS_close, fds[0]);
	int status = 0;
	long w;
	do
		w = kp_raw(SYS_wait4, pid, &status, __WALL, NULL);
	while (w == -EINTR);
	if (w == pid)
		helper_sigchld_drop(pid);
	kp_raw(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	if (!ok || !got || have || w != pid || status != 0 ||
	    out->n != head[1] * (plan ? sizeof(struct kp_plan_rec) / sizeof(uint64_t) : 1)) {
		out->n = 0;
		return -EIO;
	}
	*skipped = head[2];
	return 0;
}

/* ---- reading memory that may not be mapped ---- */

static bool read_safe(uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	return kp_raw(SYS_process_vm_readv, kp_raw0(SYS_getpid), &local, 1, &remote, 1, 0) == (long)n;
}

/* ---- anonymous code ---- */

/*
 * The 7 bytes before a `syscall` at x (bytes[0..6], x at bytes[7]) end
 * with `mov $nr, %eax` (b8 imm32) or start with `mov $nr, %rax` (48 c7 c0
 * imm32), nr a syscall number.
 */
static bool stub_before(const uint8_t *bytes)
{
	uint32_t imm; /* at bytes[3..6] in both forms */
	memcpy(&imm, bytes + 3, 4);
	if (imm >= KP_SYSCALL_MAX)
		return false;
	return bytes[2] == 0xb8 || (bytes[0] == 0x48 && bytes[1] == 0xc7 && bytes[2] == 0xc0);
}

/*
 * Code without a file to check it against is read the way the kernel
 * reads the program's memory (core/user_mem.h), never with plain loads: a
 * mapping may reach past the end of its file (a memfd or a file mapped
 * longer than it is: SIGBUS for a load there, where the program itself
 * never goes), and pages that cannot be read are passed over. The pages
 * come SCAN_PAGES at a time into scan_buf, after the 8 bytes before them
 * (the stub before a site, a pair across their start); every scan holds
 * kp_rw_lock, so one buffer serves all threads.
 */
#define SCAN_PAGES 16
static uint8_t scan_buf[8 + SCAN_PAGES * 4096];

static int add_heuristic_site(struct kp_rw_list *out, uint64_t x)
{
	kp_rw_stats.heuristic_sites++;
	return kp_rw_list_add(out, x);
}

/*
 * The sites whose second byte is among the len bytes of addr in scan_buf
 * after its first 8; before: those 8 are the bytes in front of addr.
 */
static int scan_bytes(uint64_t addr, size_t len, bool before, struct kp_rw_list *out)
{
	const uint8_t *b = scan_buf;
	size_t i = before ? 7 : 8, last = 8 + len - 1;
	while (i < last) {
		const uint8_t *p = memchr(b + i, 0x0f, last - i);
		if (!p)
			break;
		i = (size_t)(p - b);
		/* the 7 bytes before the pair: b[i - 7 .. i) */
		if (b[i + 1] == 0x05 && (before || i >= 15) && stub_before(b + i - 7)) {
			int err = add_heuristic_site(out, addr + i - 8);
			if (err)
				return err;
		}
		i++;
	}
	return 0;
}

static int scan_anonymous(uint64_t start, uint64_t end, struct kp_rw_list *out)
{
	/* a pair may begin in the byte before start or end in the byte after */
	bool before = read_safe(start - 8, scan_buf, 8);
	uint64_t x = start;
	while (x < end) {
		struct iovec local[SCAN_PAGES], remote[SCAN_PAGES];
		size_t k = 0, want = 0;
		for (; k < SCAN_PAGES && x + want < end; k++) {
			uint64_t a = x + want;
			size_t len = 4096 - (a & 4095);
			if (len > end - a)
				len = (size_t)(end - a);
			local[k] = (struct iovec){ scan_buf + 8 + want, len };
			remote[k] = (struct iovec){ (void *)(uintptr_t)a, len };
			want += len;
		}
		long got = kp_user_readv(local, remote, k);
		size_t n = got > 0 ? (size_t)got : 0;
		int err = n ? scan_bytes(x, n, before, out) : 0;
		if (err)
			return err;
		if (n < want) {
			/* the page at x + n cannot be read: on after it */
			x = ((x + n) | 4095) + 1;
			before = false;
			continue;
		}
		/* the 8 bytes before x + n are scan_buf[n .. n + 8) */
		memmove(scan_buf, scan_buf + n, 8);
		before = before || n >= 8;
		x += n;
	}
	uint8_t t[9]; /* the pair across the end, after its 7 bytes */
	if (read_safe(end - 8, t, 9) && t[7] == 0x0f && t[8] == 0x05 && stub_before(t))
		return add_heuristic_site(out, end - 1);
	return 0;
}

/* ---- the entry point ---- */

int kp_rw_scan_init(const char *self_path)
{
	/* the helper sits next to this library */
	const char *slash = strrchr(self_path, '/');
	size_t dir = slash ? (size_t)(slash - self_path) : 0;
	if (slash && dir + sizeof("/kprof-sites") < sizeof(helper_path)) {
		/* looked at when first needed (a cache miss): execve says if it is not there */
		memcpy(helper_path, self_path, dir);
		strcpy(helper_path + dir, "/kprof-sites");
	}
	cache_dir_init();
	return 0;
}

/* A file's first bytes, read once for the ELF check and its build-id. */
struct file_head {
	long fd;
	long n;
	char buf[1024];
};

static long head_pread(void *ctx, void *buf, size_t count, uint64_t offset)
{
	struct file_head *f = ctx;
	if (offset <= (uint64_t)f->n && count <= (uint64_t)f->n - offset) {
		memcpy(buf, f->buf + offset, count);
		return (long)count;
	}
	return pread_fd(&f->fd, buf, count, offset);
}

/* The file behind a mapping: an ELF file (true) or something else. */
static bool elf_file(struct file_head *f, struct stat *st)
{
	if (kp_raw(SYS_fstat, f->fd, st) != 0 || !S_ISREG(st->st_mode))
		return false;
	f->n = kp_raw(SYS_pread64, f->fd, f->buf, sizeof(f->buf), 0);
	return f->n >= 4 && memcmp(f->buf, "\177ELF", 4) == 0;
}

/* Cache key of a file: its build-id, or its identity and age without one. */
static void file_key(struct file_head *f, const struct stat *st, char *key, size_t cap)
{
	char scratch[4096];
	kp_elf_build_id(head_pread, f, scratch, sizeof(scratch), key);
	if (key[0]) {
		kp_maps_know_build_id(major(st->st_dev), minor(st->st_dev), st->st_ino, key);
		return;
	}
	snprintf(key, cap, "dev%llx-ino%llu-mtime%lld.%09ld", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino, (long long)st->st_mtim.tv_sec,
		 st->st_mtim.tv_nsec);
}

int kp_rw_scan_region(uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, int prot, struct kp_rw_list *out)
{
	if (!(prot & PROT_READ))
		return 0; /* execute-only: cannot read it to check */
	kp_rw_stats.regions++;
	struct file_head f;
	f.fd = path ? kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC) : -ENOENT;
	struct stat st;
	if (f.fd < 0 || !elf_file(&f, &st)) {
		if (f.fd >= 0)
			kp_raw(SYS_close, f.fd);
		return scan_anonymous(start, end, out);
	}
	char key[96];
	file_key(&f, &st, key, sizeof(key));
	kp_raw(SYS_close, f.fd);
	struct kp_rw_list offsets = { 0 };
	uint64_t skipped = 0;
	int err = 0;
	if (!cache_read(key, (uint64_t)st.st_size, &offsets, &skipped)) {
		err = run_helper(path, false, &offsets, &skipped);
		if (!err)
			cache_write(key, (uint64_t)st.st_size, &offsets, skipped);
	}
	kp_rw_stats.skipped_red_zone += skipped;
	/* file offsets to addresses, checked against what is in memory */
	for (size_t i = 0; !err && i < offsets.n; i++) {
		uint64_t off = offsets.v[i];
		if (off + 1 < offset || off >= offset + (end - start))
			continue;
		uint64_t x = start + off - offset;
		uint8_t b[2];
		if (x >= start && x + 1 < end)
			memcpy(b, (const void *)(uintptr_t)x, 2);
		else if (!read_safe(x, b, 2))
			continue;
		if (b[0] != 0x0f || b[1] != 0x05)
			continue;
		err = kp_rw_list_add(out, x);
		kp_rw_stats.sites++;
	}
	kp_rw_list_free(&offsets);
	return err;
}

/*
 * The unprivileged mode's plans for [start, end) (file offset offset of
 * path): per site that has a window, 3 values into out: the window's
 * address, the site's address, and the rest of its plan packed (len,
 * sys_off, n_rip, rip[4], as kprof-sites --plan-bin gives them). Only ELF
 * files; a window not wholly in the region, or whose syscall is not in
 * memory as the file has it (patched already), is left out.
 */
int kp_rw_plan_region(uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, int prot, struct kp_rw_list *out)
{
	if (!(prot & PROT_READ) || !path)
		return 0;
	struct file_head f;
	f.fd = kp_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (f.fd < 0 || !elf_file(&f, &st)) {
		if (f.fd >= 0)
			kp_raw(SYS_close, f.fd);
		return 0;
	}
	char key[96 + 8];
	file_key(&f, &st, key, 96);
	kp_raw(SYS_close, f.fd);
	strcat(key, ".plan6"); /* bumped when the planner changes */
	struct kp_rw_list recs = { 0 };
	uint64_t without = 0;
	int err = 0;
	if (!cache_read(key, (uint64_t)st.st_size, &recs, &without)) {
		err = run_helper(path, true, &recs, &without);
		if (!err)
			cache_write(key, (uint64_t)st.st_size, &recs, without);
	}
	kp_rw_stats.unplanned += without;
	for (size_t i = 0; !err && i + 3 <= recs.n; i += 3) {
		uint64_t site_off = recs.v[i], win_off = recs.v[i + 1], rest = recs.v[i + 2];
		unsigned len = rest & 0xff;
		if (win_off < offset || win_off + len > offset + (end - start) ||
		    site_off < win_off || site_off + 2 > win_off + len)
			continue;
		uint64_t w = start + win_off - offset, x = start + site_off - offset;
		const uint8_t *b = (const uint8_t *)(uintptr_t)x;
		if (b[0] != 0x0f || b[1] != 0x05)
			continue;
		err = kp_rw_list_add(out, w);
		if (!err)
			err = kp_rw_list_add(out, x);
		if (!err)
			err = kp_rw_list_add(out, rest);
	}
	kp_rw_list_free(&recs);
	return err;
}
