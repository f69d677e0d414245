/* SPDX-License-Identifier: MIT */
/*
 * Which hook mode a process runs (KPROF_HOOK=auto|rewrite|symbols), the
 * first rewrite of every executable mapping at start, and the rescans of
 * code that becomes executable later (dlopen maps a library with
 * PROT_EXEC; a JIT mprotects its buffer). Mappings come from
 * /proc/self/maps, read with raw syscalls.
 *
 * Rewrite mode needs the page at address 0, which the kernel gives only
 * with CAP_SYS_RAWIO or vm.mmap_min_addr=0: auto tries the mmap and falls
 * back to symbol mode when it is refused (the sysctl is never touched).
 * The header says which mode ran and why (kp_proc.coverage).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>

#include "elf_build_id.h"
#include "../helper/sites_protocol.h"
#include "../lifecycle/lifecycle.h"
#include "../patch/dispatch.h"
#include "../patch/tramp.h"
#include "rewrite.h"
#include "../core/user_mem.h"

long kp_rw_live_threads;
bool kp_rw_patching;
uint64_t kp_rw_text_start, kp_rw_text_end;

enum { HOOK_AUTO, HOOK_REWRITE, HOOK_SYMBOLS, HOOK_PATCH };

bool kp_rw_jmp;
static int sud_err = -ENOSYS; /* kp_sud_start's: 0, armed */

static const char *symbols_why = "KPROF_HOOK=symbols";
static char why_buf[160];
static int scan_lock;
static __thread bool holds_lock;

static const char cover_rewrite[] =
	"every syscall instruction of the loaded code, from the end of the "
	"shim's start-up on (not the dynamic loader's start-up before it, "
	"not the vDSO)";
static char cover_symbols[400];
static char cover_patch[400];

/* Patch mode's coverage: what dispatch adds, and why the mode ran. */
static const char *patch_coverage(void)
{
	if (cover_patch[0])
		return cover_patch;
	bool chosen = strcmp(symbols_why, "KPROF_HOOK=symbols") == 0;
	if (!sud_err)
		snprintf(cover_patch, sizeof(cover_patch),
			 "every syscall instruction of the loaded code, from the end of the "
			 "shim's start-up on: through a jump where one fits, through Syscall "
			 "User Dispatch (SIGSYS, slower) elsewhere (not the dynamic loader's "
			 "start-up before it; patch mode %s%s)",
			 chosen ? "chosen: KPROF_HOOK=patch" : "because rewrite mode is unavailable: ",
			 chosen ? "" : symbols_why);
	else
		snprintf(cover_patch, sizeof(cover_patch),
			 "every syscall instruction of the loaded files' code that a jump could "
			 "replace, from the end of the shim's start-up on (not code made at run "
			 "time, not the vDSO, not the dynamic loader's start-up before it: "
			 "Syscall User Dispatch %s%d; patch mode %s%s)",
			 sud_err > 0 ? "off, KPROF_DISPATCH=" : "unavailable, error ",
			 sud_err > 0 ? 0 : -sud_err,
			 chosen ? "chosen: KPROF_HOOK=patch" : "because rewrite mode is unavailable: ",
			 chosen ? "" : symbols_why);
	return cover_patch;
}

static const char *mode_name(void)
{
	return kp_rw_active ? (kp_rw_jmp ? "patch" : "rewrite") : "symbols";
}

static const char *coverage(void)
{
	if (kp_rw_active)
		return kp_rw_jmp ? patch_coverage() : cover_rewrite;
	if (!cover_symbols[0]) {
		/* kanalyze's coverage note quotes the part in parentheses */
		bool chosen = strcmp(symbols_why, "KPROF_HOOK=symbols") == 0;
		strcpy(cover_symbols,
		       chosen ? "libc exported functions only — futex and other "
				"calls made inside libc are not seen (symbol mode "
				"chosen: " :
				"libc exported functions only — futex and other "
				"calls made inside libc are not seen (rewrite mode "
				"unavailable: ");
		strncat(cover_symbols, symbols_why,
			sizeof(cover_symbols) - strlen(cover_symbols) - 40);
		strcat(cover_symbols, "); use kbpf-trace to see them");
	}
	return cover_symbols;
}

static void set_why(const char *what, int err)
{
	const char *text = "";
	switch (-err) {
	case EPERM: text = ": Operation not permitted (needs CAP_SYS_RAWIO or vm.mmap_min_addr=0)"; break;
	case EACCES: text = ": Permission denied"; break;
	case EEXIST: text = ": something else is mapped there"; break;
	case ENOMEM: text = ": Cannot allocate memory"; break;
	case ENOSYS: text = ": not available"; break;
	default: break;
	}
	size_t n = strlen(what);
	if (n >= sizeof(why_buf))
		n = sizeof(why_buf) - 1;
	memcpy(why_buf, what, n);
	why_buf[n] = 0;
	strncat(why_buf, text, sizeof(why_buf) - n - 1);
	symbols_why = why_buf;
}

void kp_rw_lock(void)
{
	for (;;) {
		int expect = 0;
		if (__atomic_compare_exchange_n(&scan_lock, &expect, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		struct timespec ts = { 0, 50000 };
		kp_raw(SYS_nanosleep, &ts, NULL);
	}
	holds_lock = true;
}

void kp_rw_unlock(void)
{
	holds_lock = false;
	__atomic_store_n(&scan_lock, 0, __ATOMIC_RELEASE);
}

/* ---- /proc/self/maps ---- */

/* The whole file in one read-only pass; buffer grows by mmap. */
static char *maps_read(size_t *len)
{
	static char first[65536]; /* enough for most processes: no mmap */
	static char *buf = first;
	static size_t cap = sizeof(first);
	long fd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t have = 0;
	for (;;) {
		if (have + 4096 > cap) {
			size_t ncap = cap * 2;
			long p = kp_raw(SYS_mmap, 0, ncap, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p < 0 && p > -4096) {
				kp_raw(SYS_close, fd);
				return NULL;
			}
			memcpy((char *)p, buf, have);
			if (buf != first)
				kp_raw(SYS_munmap, buf, cap);
			buf = (char *)p;
			cap = ncap;
		}
		long n = kp_raw(SYS_read, fd, buf + have, cap - have - 1);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	kp_raw(SYS_close, fd);
	buf[have] = 0;
	*len = have;
	return buf;
}

/* Calls fn for each mapping that overlaps [lo, hi) (fn may not read maps). */
static void maps_each(uint64_t lo, uint64_t hi,
		      void (*fn)(const struct kp_maps_line *, void *), void *ctx)
{
	size_t len;
	char *buf = maps_read(&len);
	if (!buf)
		return;
	for (char *line = buf; line < buf + len;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		struct kp_maps_line m;
		if (kp_maps_parse(line, &m) && m.end > lo && m.start < hi)
			fn(&m, ctx);
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The executable mappings of [lo, hi), copied out (under kp_rw_lock). */
#define MAX_EXEC_MAPPINGS 1024
#define PATH_BYTES (256u << 10)
static struct kp_maps_line exec_maps[MAX_EXEC_MAPPINGS];
static char exec_paths[PATH_BYTES];
static size_t n_exec_maps, exec_paths_used;

static void collect(const struct kp_maps_line *m, void *ctx)
{
	(void)ctx;
	if (!(m->prot & PROT_EXEC) || n_exec_maps == MAX_EXEC_MAPPINGS)
		return;
	struct kp_maps_line *d = &exec_maps[n_exec_maps++];
	*d = *m;
	if (m->path) {
		size_t n = strlen(m->path) + 1;
		if (exec_paths_used + n > PATH_BYTES) {
			n_exec_maps--;
			return;
		}
		memcpy(exec_paths + exec_paths_used, m->path, n);
		d->path = exec_paths + exec_paths_used;
		exec_paths_used += n;
	}
}

static void exec_mappings(uint64_t lo, uint64_t hi)
{
	n_exec_maps = exec_paths_used = 0;
	maps_each(lo, hi, collect, NULL);
}

static void prot_of(const struct kp_maps_line *m, void *ctx)
{
	*(int *)ctx = m->prot;
}

/* Protection of the page at addr, -1 when unmapped. */
static int page_prot(uint64_t addr)
{
	int prot = -1;
	maps_each(addr, addr + 1, prot_of, &prot);
	return prot;
}

/*
 * Threads of the process now: 1 while libc says no thread was ever made
 * (no call at all), else from /proc/self/status (1 when unknown).
 */
static long thread_count(void)
{
	if (__libc_single_threaded)
		return 1;
	char buf[2048];
	long fd = kp_raw(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	long len = kp_raw(SYS_read, fd, buf, sizeof(buf) - 1);
	kp_raw(SYS_close, fd);
	if (len <= 0)
		return 1;
	buf[len] = 0;
	const char *t = strstr(buf, "\nThreads:");
	if (!t)
		return 1;
	t += 9;
	while (*t == ' ' || *t == '\t')
		t++;
	long n = 0;
	while (*t >= '0' && *t <= '9')
		n = n * 10 + (*t++ - '0');
	return n ? n : 1;
}

/* ---- scanning and patching ---- */

struct scan_ctx {
	uint64_t lo, hi; /* the part of interest */
	bool threads;
	int err;	 /* first failure to make a mapping writable */
	long done;
	bool libc_failed;
};

static void patch_sites(struct kp_rw_list *l, uint64_t start, uint64_t end, int prot,
			struct scan_ctx *c)
{
	/* inner sites in one batch; a pair across either edge on its own */
	size_t first = 0, n = l->n;
	while (first < n && l->v[first] < start)
		first++;
	size_t last = first;
	while (last < n && l->v[last] + 1 < end)
		last++;
	if (last > first) {
		long r = kp_rw_patch_apply(l->v + first, last - first, prot, c->threads);
		if (r < 0 && !c->err)
			c->err = (int)r;
		else if (r > 0)
			c->done += r;
	}
	for (size_t i = 0; i < n; i++) {
		if (i >= first && i < last)
			continue;
		uint64_t x = l->v[i];
		int p1 = x < start ? page_prot(x) : prot;
		int p2 = x + 1 >= end ? page_prot(x + 1) : prot;
		if (p1 < 0 || p2 < 0)
			continue;
		long r = kp_rw_patch_split(x, p1, p2, c->threads);
		if (r > 0)
			c->done += r;
	}
}

static long own_sys(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	return kp_own_syscall6(nr, a1, a2, a3, a4, a5, a6);
}

/*
 * KPROF_HOOK=patch: the windows of [start, end) become jumps to
 * trampolines in an area within reach (tramp.c). The trampolines are
 * written and made executable, and their keys known to the hook, before
 * the first jump is written. With other threads running, only windows
 * that end with their syscall are patched (a thread blocked in it returns
 * past the window).
 */
static void jmp_patch(const struct kp_maps_line *m, uint64_t start, uint64_t end,
		      struct scan_ctx *c)
{
	struct kp_rw_list plans = { 0 };
	int err = kp_rw_plan_region(start, end, m->offset + (start - m->start), m->path,
				    m->prot, &plans);
	size_t n = plans.n / 3;
	if (err || !n) {
		kp_rw_list_free(&plans);
		return;
	}
	uint64_t size = (n * KP_PATCH_TRAMP_MAX + 4095) & ~4095ULL;
	long area = kp_patch_tramp_area(own_sys, m->start, m->end, size);
	if (area < 0) {
		if (!c->err)
			c->err = (int)area;
		kp_rw_list_free(&plans);
		return;
	}
	uint64_t entry = (uint64_t)(uintptr_t)kp_rw_entry;
	size_t written = 0;
	/* packed at 16-byte steps: fewer pages touched than KP_PATCH_TRAMP_MAX each */
	uint64_t at = (uint64_t)area;
	for (size_t i = 0; i < n; i++) {
		uint64_t w = plans.v[3 * i], rest = plans.v[3 * i + 2];
		struct kp_patch_plan p = { .start = w };
		kp_plan_rest(rest, &p.len, &p.sys_off, &p.n_rip, p.rip);
		uint64_t key;
		int len = kp_patch_tramp_write((uint8_t *)(uintptr_t)at, at, (const uint8_t *)(uintptr_t)w,
					    &p, entry, &key);
		if (len < 0 || (c->threads && p.sys_off + 2u != p.len) || kp_rw_site_add(key)) {
			plans.v[3 * i] = 0; /* left as it is */
			continue;
		}
		plans.v[3 * i + 1] = at; /* the site's address is not needed again */
		at += ((uint64_t)len + 15) & ~15ULL;
		written++;
	}
	own_sys(SYS_mprotect, area, (long)size, PROT_READ | PROT_EXEC, 0, 0, 0);
	uint64_t lo = start & ~4095ULL, hi = (end + 4095) & ~4095ULL;
	if (written && own_sys(SYS_mprotect, (long)lo, (long)(hi - lo),
			       m->prot | PROT_READ | PROT_WRITE, 0, 0, 0) == 0) {
		for (size_t i = 0; i < n; i++) {
			uint64_t w = plans.v[3 * i];
			if (!w)
				continue;
			struct kp_patch_plan p = { .start = w, .len = plans.v[3 * i + 2] & 0xff };
			uint8_t jump[64];
			if (kp_patch_tramp_jump(jump, &p, plans.v[3 * i + 1]))
				continue;
			memcpy((void *)(uintptr_t)w, jump, p.len);
			c->done++;
		}
		own_sys(SYS_mprotect, (long)lo, (long)(hi - lo), m->prot, 0, 0, 0);
	} else if (written && !c->err) {
		c->err = -EPERM;
	}
	kp_rw_list_free(&plans);
}

static void scan_mapping(const struct kp_maps_line *m, struct scan_ctx *c)
{
	if (!(m->prot & PROT_EXEC) || m->start == 0 || m->special)
		return;
	if (m->start < kp_rw_text_end && m->end > kp_rw_text_start)
		return; /* our own syscalls stay as they are */
	if (kp_rw_jmp) {
		jmp_patch(m, m->start > c->lo ? m->start : c->lo, m->end < c->hi ? m->end : c->hi, c);
		return;
	}
	uint64_t start = m->start > c->lo ? m->start : c->lo;
	uint64_t end = m->end < c->hi ? m->end : c->hi;
	struct kp_rw_list sites = { 0 };
	int err = kp_rw_scan_region(start, end, m->offset + (start - m->start), m->path,
				    m->prot, &sites);
	if (!err) {
		int before = c->err;
		patch_sites(&sites, start, end, m->prot, c);
		if (c->err != before && m->path && strstr(m->path, "/libc.so"))
			c->libc_failed = true;
	}
	kp_rw_list_free(&sites);
}

/* Scans the executable mappings read last (exec_mappings) in c's range. */
static void scan_read(struct scan_ctx *c)
{
	for (size_t i = 0; i < n_exec_maps; i++)
		scan_mapping(&exec_maps[i], c);
}

static void scan_all(struct scan_ctx *c)
{
	kp_rw_lock();
	exec_mappings(c->lo, c->hi);
	scan_read(c);
	kp_rw_unlock();
}

/* At start: the mappings read for find_own_text (the shim mapped nothing
 * executable of the program's since). */
static void scan_start(struct scan_ctx *c)
{
	kp_rw_lock();
	scan_read(c);
	kp_rw_unlock();
}

/* The shim's own code among the mappings read (its path into path). */
static void find_own_text(char *path)
{
	uint64_t self = (uint64_t)(uintptr_t)kp_rw_entry;
	for (size_t i = 0; i < n_exec_maps; i++) {
		const struct kp_maps_line *m = &exec_maps[i];
		if (m->start <= self && self < m->end && m->path && strlen(m->path) < KP_PATH_MAX) {
			kp_rw_text_start = m->start;
			kp_rw_text_end = m->end;
			strcpy(path, m->path);
		}
	}
}

static int config(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "KPROF_HOOK=", 11) != 0)
			continue;
		const char *v = *e + 11;
		if (strcmp(v, "rewrite") == 0)
			return HOOK_REWRITE;
		if (strcmp(v, "patch") == 0)
			return HOOK_PATCH;
		if (strcmp(v, "symbols") == 0)
			return HOOK_SYMBOLS;
		if (strcmp(v, "auto") != 0 && v[0])
			kp_debug("KPROF_HOOK: unknown value, using auto");
	}
	return HOOK_AUTO;
}

/* KPROF_DISPATCH=0 leaves patch mode without its net (no SIGSYS handler). */
static bool dispatch_wanted(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "KPROF_DISPATCH=", 15) == 0)
			return strcmp(*e + 15, "0") != 0 && strcmp(*e + 15, "off") != 0;
	return true;
}

/*
 * Patch mode: windows become jumps to trampolines, and Syscall User
 * Dispatch catches the syscall instructions no jump replaced. Without
 * either the mode is not started (symbol mode; the header says why).
 */
static void start_patch(bool chosen)
{
	kp_rw_live_threads = thread_count();
	struct scan_ctx c = { .lo = 0, .hi = UINT64_MAX, .threads = kp_rw_live_threads > 1 };
	kp_rw_jmp = true;
	__atomic_store_n(&kp_rw_patching, true, __ATOMIC_RELEASE);
	scan_start(&c);
	if (!c.done) {
		__atomic_store_n(&kp_rw_patching, false, __ATOMIC_RELEASE);
		kp_rw_jmp = false;
		char what[160];
		snprintf(what, sizeof(what), "%sno syscall site could be patched with a jump",
			 chosen ? "" : "cannot map the lowest page, and ");
		set_why(what, c.err ? c.err : -ENOENT);
		kp_debug(why_buf);
		return;
	}
	const struct kp_sud_host host = {
		.entry = (uint64_t)(uintptr_t)kp_rw_entry,
		.text_start = kp_rw_text_start,
		.text_end = kp_rw_text_end,
		.site_add = kp_rw_site_add,
		.lock = kp_rw_lock,
		.unlock = kp_rw_unlock,
		.count_sigreturn = kp_rw_count_sigreturn,
	};
	int err = dispatch_wanted() ? kp_sud_start(&host) : 1;
	sud_err = err;
	kp_rw_active = true;
	if (kp_config.debug) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "patch mode: %llu sites patched with a jump, %llu without a window, "
			 "%llu helper runs; dispatch %s",
			 (unsigned long long)c.done,
			 (unsigned long long)kp_rw_stats.unplanned,
			 (unsigned long long)kp_rw_stats.helper_runs,
			 err > 0 ? "off (KPROF_DISPATCH=0)" : err ? "unavailable" : "armed");
		kp_debug(msg);
	}
}

/* Rewrite or patch mode runs: every mapping change passes the hook. */
static void start_tracking(uint64_t gen)
{
	if (!kp_rw_active)
		return;
	kp_maps_tracked = true;
	kp_maps_seen(exec_maps, n_exec_maps, gen);
}

static void start_mode(void)
{
#if defined(__x86_64__)
	int mode = config();
	if (mode == HOOK_SYMBOLS)
		return;
	if (kp_config.valgrind) {
		/* its translations of code would not see our patches, and a
		 * dispatch armed by us would catch its own syscalls */
		set_why("running under valgrind, which emulates the CPU", 0);
		kp_debug(why_buf);
		return;
	}
	uint64_t t_start = kp_mono_ns();
	char self_path[KP_PATH_MAX];
	/* one read of /proc/self/maps at start: the shim's code, the scan,
	 * and the maps record while no mapping changes (sink/maps.c) */
	uint64_t gen = __atomic_load_n(&kp_maps_gen, __ATOMIC_ACQUIRE);
	kp_rw_lock();
	exec_mappings(0, UINT64_MAX);
	kp_rw_unlock();
	find_own_text(self_path);
	if (!kp_rw_text_end) {
		set_why("cannot find the shim's own code", -ENOENT);
		return;
	}
	kp_phase("own code");
	kp_rw_scan_init(self_path);
	kp_phase("site cache");
	int err = mode == HOOK_PATCH ? -EPERM : kp_rw_page_map();
	kp_phase("lowest page");
	if (err) {
		if (mode == HOOK_REWRITE) {
			set_why("cannot map the lowest page", err);
			kp_debug(why_buf);
			return;
		}
		/* auto without the lowest page, or chosen: jumps to trampolines */
		if (mode == HOOK_AUTO)
			set_why("cannot map the lowest page", err);
		start_patch(mode == HOOK_PATCH);
		start_tracking(gen);
		return;
	}
	kp_rw_live_threads = thread_count();
	kp_phase("threads");
	struct scan_ctx c = { .lo = 0, .hi = UINT64_MAX, .threads = kp_rw_live_threads > 1 };
	__atomic_store_n(&kp_rw_patching, true, __ATOMIC_RELEASE);
	scan_start(&c);
	kp_phase("rewrite");
	if (c.libc_failed || !kp_rw_sites_count()) {
		kp_rw_patch_revert_all();
		__atomic_store_n(&kp_rw_patching, false, __ATOMIC_RELEASE);
		kp_rw_page_unmap();
		set_why("cannot rewrite libc's code", c.err ? c.err : -ENOENT);
		kp_debug(why_buf);
		return;
	}
	kp_rw_active = true;
	start_tracking(gen);
	if (kp_config.debug) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "rewrite mode: %llu sites in %llu regions, %llu left alone (red zone), "
			 "%llu helper runs, %llu us",
			 (unsigned long long)kp_rw_sites_count(),
			 (unsigned long long)kp_rw_stats.regions,
			 (unsigned long long)kp_rw_stats.skipped_red_zone,
			 (unsigned long long)kp_rw_stats.helper_runs,
			 (unsigned long long)((kp_mono_ns() - t_start) / 1000));
		kp_debug(msg);
	}
#else
	symbols_why = "only on x86_64";
#endif
}

/* Chooses the mode, and says in the process's state which one and what
 * it sees (the header's hook_mode and coverage, sink/flush.c). */
void kp_rw_start(void)
{
	start_mode();
	kp_proc.hook_mode = mode_name();
	kp_proc.coverage = coverage();
}

void kp_rw_sandboxed(void)
{
	kp_flush_passive("a seccomp filter went in (a sandbox): the shim went passive, "
			 "the process's later calls are not traced");
	if (kp_state != KP_PASSIVE)
		return;
	kp_user_mem_direct();
	if (kp_sud_on)
		kp_sud_passive();
}

void kp_rw_rescan(uint64_t start, uint64_t len)
{
	/* passive: the site helper is a clone and an exec a sandbox refuses */
	if (!kp_rw_active || holds_lock || !len || kp_state == KP_PASSIVE)
		return;
	int e = errno;
	unsigned flags = kp_tls_flags;
	kp_tls_flags |= KP_TLS_IN_INIT; /* the scanner's own calls are not counted */
	struct scan_ctx c = { .lo = start & ~4095ULL, .hi = (start + len + 4095) & ~4095ULL,
			      .threads = true };
	scan_all(&c);
	kp_tls_flags = flags;
	errno = e;
}

void kp_rw_unmapped(uint64_t start, uint64_t len)
{
	if (!kp_rw_spans_overlap(start, start + len))
		return;
	bool locked = !holds_lock;
	if (locked)
		kp_rw_lock();
	kp_rw_sites_forget(start, start + len);
	if (locked)
		kp_rw_unlock();
}

void kp_rw_moved(uint64_t old_start, uint64_t old_len, uint64_t new_start)
{
	if (!kp_rw_spans_overlap(old_start, old_start + old_len))
		return;
	bool locked = !holds_lock;
	if (locked)
		kp_rw_lock();
	kp_rw_sites_move(old_start, old_len, new_start);
	if (locked)
		kp_rw_unlock();
}
