/* SPDX-License-Identifier: MIT */
/*
 * Rewrite mode (KPROF_HOOK=rewrite|auto): every `syscall` instruction of
 * the loaded code (but ours and the vDSO's) becomes `call *%rax`, and the
 * page at address 0 leads any syscall number to entry.S, which
 * calls kp_rw_hook() with the caller's registers in a struct kp_rw_frame.
 * The technique is zpoline's (USENIX ATC'23); the parts are:
 *
 *   entry.S     the assembly entry and the paths whose child or return
 *               cannot go through C (clone with a stack, vfork,
 *               rt_sigreturn)
 *   hook.c      the C hook: times the call with kp_call_start/end (core)
 *               and makes it; process syscalls (fork, exec, exit) through
 *               the lifecycle and sink layers
 *   sites.c     the page at 0, the table of rewritten sites, the 2-byte
 *               stores (rewrite mode's; patch mode's jumps: tramp.c)
 *   scan.c      finding the sites: the helper program kprof-sites
 *               (preload/helper/kprof_sites.c: libelf for the executable
 *               sections, a sweep by instruction length) once per file,
 *               a per-user cache of what it found
 *   setup.c     choosing the mode at start (KPROF_HOOK), the first scan of
 *               every mapping, rescans of code mapped executable later
 *               (dlopen, JIT)
 *
 * A front end above the lifecycle layer: it calls down into lifecycle/,
 * sink/ and core/, and only the symbol front end (symbols/) calls it.
 *
 * x86_64 only; elsewhere the mode is always symbols.
 */
#ifndef KPROF_REWRITE_H
#define KPROF_REWRITE_H

/* Offsets of struct kp_rw_frame, shared with entry.S. */
#define KP_RW_F_NR 0
#define KP_RW_F_ARGS 8
#define KP_RW_F_RET 56
#define KP_RW_F_RESULT 64
#define KP_RW_F_SP 72
#define KP_RW_F_SAVED_SELF 96
#define KP_RW_F_DEPTH 304
#define KP_RW_F_XMM 320
#define KP_RW_F_SIZE 576

/* What kp_rw_hook() asks entry.S to do next. */
#define KP_RW_DONE 0	     /* the call was made: return F_RESULT */
#define KP_RW_NOT_SITE 1     /* not from a rewritten site: fault like a NULL call */
#define KP_RW_CLONE_STACK 2  /* clone with a child stack: make it from assembly */
#define KP_RW_CLONE3_STACK 3 /* clone3 with a child stack: the same */
#define KP_RW_VFORK 4	     /* vfork-like: the child shares the stack */
#define KP_RW_SYSCALL 5	     /* a plain call: make it, then kp_rw_post() */
#define KP_RW_EXIT 6	     /* the thread's exit: leave the shim stack, end
				F_SAVED_SELF's block (if any), then exit */

/* Lowest page: a landing pad for syscall numbers below this. */
#define KP_RW_SLED 512

#ifndef __ASSEMBLER__

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/base.h" /* kp_addr_hash */

/*
 * The caller's registers at the rewritten site, as entry.S saved
 * them below the caller's red zone. args: rdi rsi rdx r10 r8 r9.
 */
struct kp_rw_frame {
	uint64_t nr;
	uint64_t args[6];
	uint64_t ret_addr; /* the instruction after the site */
	uint64_t result;
	uint64_t sp;	   /* the caller's rsp minus 8 (where the call pushed) */
	/* for the calls made from entry.S (clone, vfork) */
	uint64_t saved_arg;  /* the argument register replaced for the child */
	uint64_t clone_flags;
	void *saved_self;
	uint64_t counted;
	uint64_t call[12];	  /* struct kp_call */
	uint64_t clone_args[12]; /* a copy of clone3's struct clone_args */
	/* the shim stack's depth before this frame (core/stack.h), or -1:
	 * the frame is on the stack the call came from */
	int64_t prev_depth;
	uint64_t spare;
	uint8_t xmm[256];
};
_Static_assert(offsetof(struct kp_rw_frame, ret_addr) == KP_RW_F_RET, "frame");
_Static_assert(offsetof(struct kp_rw_frame, sp) == KP_RW_F_SP, "frame");
_Static_assert(offsetof(struct kp_rw_frame, xmm) == KP_RW_F_XMM, "frame");
_Static_assert(offsetof(struct kp_rw_frame, prev_depth) == KP_RW_F_DEPTH, "frame");
_Static_assert(offsetof(struct kp_rw_frame, saved_self) == KP_RW_F_SAVED_SELF, "frame");
_Static_assert(sizeof(struct kp_rw_frame) == KP_RW_F_SIZE, "frame");

/* entry.S */
void kp_rw_entry(void);

/* hook.c: called from entry.S */
int kp_rw_hook(struct kp_rw_frame *f);
void kp_rw_post(struct kp_rw_frame *f);
void kp_rw_clone_parent(struct kp_rw_frame *f);
void kp_rw_vfork_parent(struct kp_rw_frame *f);
int kp_rw_sigreturn(uint64_t ret_addr);
/* The return address of the innermost vfork in flight on this thread. */
extern __thread uint64_t kp_rw_vfork_ret;
/* Threads that may be inside the hook (setup.c; kept by hook.c). */
extern long kp_rw_live_threads;
/*
 * The caller of the symbol hook a call came through (symbols/), for the
 * call sites of the syscalls it leads to; 0 outside a symbol hook.
 */
extern __thread uint64_t kp_caller_site;

/*
 * The hot path (entry.S, kp_rw_hook and the inline site lookup)
 * shares one 4 KiB page: with PTI and no PCID every syscall flushes the
 * TLB, and each further page touched per call costs a walk (~40 ns here).
 */
#define KP_RW_HOT __attribute__((section(".text.hot.kp_rw")))

/* sites.c: the rewritten sites, an open-addressing set. */
struct kp_rw_site_table {
	uint64_t mask;
	uint64_t used; /* keys and tombstones */
	uint64_t live;
	uint64_t slot[];
};
extern struct kp_rw_site_table *kp_rw_sites;

/* Lock-free: a table only ever gets keys put into empty slots. */
static inline __attribute__((always_inline)) bool kp_rw_site_known(uint64_t site)
{
	const struct kp_rw_site_table *t = __atomic_load_n(&kp_rw_sites, __ATOMIC_ACQUIRE);
	if (__builtin_expect(!t, 0))
		return false;
	for (uint64_t i = kp_addr_hash(site) & t->mask;; i = (i + 1) & t->mask) {
		uint64_t v = __atomic_load_n(&t->slot[i], __ATOMIC_RELAXED);
		if (__builtin_expect(v == site, 1))
			return true;
		if (v == 0)
			return false;
	}
}

/*
 * Bumped after any site is removed (munmap, mremap, revert). A thread
 * remembers the last site it found in the table with the generation it
 * read before looking: a loop that calls from one site skips the table
 * (its slot is one more page to refill after every syscall here), and a
 * site removed since is looked up again.
 */
extern uint64_t kp_rw_sites_gen;
extern __thread uint64_t kp_rw_cache_site, kp_rw_cache_gen;

static inline __attribute__((always_inline)) bool kp_rw_site_check(uint64_t site)
{
	uint64_t gen = __atomic_load_n(&kp_rw_sites_gen, __ATOMIC_ACQUIRE);
	if (__builtin_expect(site == kp_rw_cache_site && gen == kp_rw_cache_gen, 1))
		return true;
	if (!kp_rw_site_known(site))
		return false;
	kp_rw_cache_site = site;
	kp_rw_cache_gen = gen;
	return true;
}

int kp_rw_page_map(void);	   /* 0 or -errno (no privilege: -EPERM) */
void kp_rw_page_unmap(void);
int kp_rw_site_add(uint64_t site);
/* hook.c: counts an rt_sigreturn that came through patch mode's
 * dispatch (patch/dispatch.c, through struct kp_sud_host). */
void kp_rw_count_sigreturn(void);
void kp_rw_sites_forget(uint64_t start, uint64_t end);
void kp_rw_sites_move(uint64_t old_start, uint64_t len, uint64_t new_start);
uint64_t kp_rw_sites_count(void);
bool kp_rw_spans_overlap(uint64_t lo, uint64_t hi);
/* A growable list of addresses (or file offsets). */
struct kp_rw_list {
	uint64_t *v;
	size_t n, cap;
};
int kp_rw_list_add(struct kp_rw_list *l, uint64_t x);
void kp_rw_list_free(struct kp_rw_list *l);
/*
 * Rewrites the sites (sorted, on pages whose protection is prot) and
 * records them; sites already in the table are skipped. Returns how many
 * were rewritten, or -errno when the pages could not be made writable.
 */
long kp_rw_patch_apply(const uint64_t *sites, size_t n, int prot,
		       bool other_threads);
/* One site whose two bytes lie on two pages of different protections. */
long kp_rw_patch_split(uint64_t site, int prot_first, int prot_second,
		       bool other_threads);
/* Puts `syscall` back at every rewritten site (a failed start). */
void kp_rw_patch_revert_all(void);

/* scan.c */
struct kp_rw_scan_stats {
	uint64_t regions, sites, skipped_red_zone, heuristic_sites, helper_runs;
	uint64_t unplanned; /* KPROF_HOOK=patch: sites without a window */
};
extern struct kp_rw_scan_stats kp_rw_stats;
/* self_path: this library's file (the helper kprof-sites is next to it). */
int kp_rw_scan_init(const char *self_path);
/*
 * The syscall sites of [start, end), a mapping of file `path` at file
 * offset `offset` (path NULL or not an ELF file: anonymous code, where only
 * `mov $nr, %eax; syscall` counts), appended to out.
 */
int kp_rw_scan_region(uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, int prot, struct kp_rw_list *out);

/*
 * The unprivileged mode's plans for [start, end) of path (scan.c): per
 * site with a window, its window's address, the site's address and the
 * packed rest of its plan (kprof-sites --plan-bin). 0 or -errno.
 */
int kp_rw_plan_region(uint64_t start, uint64_t end, uint64_t offset,
		      const char *path, int prot, struct kp_rw_list *out);

/* setup.c */
extern bool kp_rw_active;
/* KPROF_HOOK=patch: every site leads to a trampoline (tramp.c), whose
 * original site is stored before the entry's return address. */
extern bool kp_rw_jmp;
/* Sites are being rewritten at start-up (kp_rw_active comes after). */
extern bool kp_rw_patching;
extern uint64_t kp_rw_text_start, kp_rw_text_end; /* libkprof.so's own code */
/* Called from setup(): decides the mode and rewrites; never fails. */
void kp_rw_start(void);
/* "KPROF_EXEC_SITES=<dir>": the site cache for a child image, or NULL
 * (no cache: symbol mode, or no home of our own). */
const char *kp_rw_sites_handoff(void);
/* After a successful mmap/mprotect that made [start, +len) executable. */
void kp_rw_rescan(uint64_t start, uint64_t len);
/*
 * Just before the program installs a seccomp filter (prctl PR_SET_SECCOMP,
 * seccomp SET_MODE_FILTER or STRICT), from every hook mode: the shim goes
 * passive (sink.h's kp_flush_passive), makes no call of its own from then
 * on (no rescan, no site helper) and patch mode's dispatch lets every
 * syscall instruction run as it is.
 */
void kp_rw_sandboxed(void);
/* After a successful munmap, and an mremap that moved a mapping. */
void kp_rw_unmapped(uint64_t start, uint64_t len);
void kp_rw_moved(uint64_t old_start, uint64_t old_len, uint64_t new_start);
/* Serializes scans (start-up, dlopen, JIT) */
void kp_rw_lock(void);
void kp_rw_unlock(void);

#endif /* __ASSEMBLER__ */
#endif
