/* SPDX-License-Identifier: MIT */
/*
 * The net under patch mode: Syscall User Dispatch (prctl
 * PR_SET_SYSCALL_USER_DISPATCH, Linux 5.11, no privilege), the technique
 * of lazypoline, written here from its description. A syscall instruction
 * that no jump replaced (a window the planner refused, code made at run
 * time, a library whose plan failed) traps into SIGSYS; the handler sends
 * the thread to a trampoline of that site, which calls kp_rw_entry as a
 * patched site's trampoline does, so the call is counted, timed and made
 * with every rule of rewrite mode (vfork, clone with a stack, exit, exec).
 *
 * The allowed range is the shim's own code: its syscalls, and those of
 * the hook for the trampolines, never trap. The selector is one byte for
 * the whole process, always BLOCK. The kernel arms dispatch per thread and
 * clears it in a new thread, a fork child and an exec: the main thread is
 * armed at start, every other thread at its first hooked call (attach),
 * a fork child in the hook's fork path.
 *
 * A dispatch trampoline (50 bytes, on a page of its own kind):
 *
 *   lea -128(%rsp),%rsp            below the red zone the site may use
 *   jmp over 8 bytes ; .quad site   (the hook's site, as tramp.c writes)
 *   movabs $kp_rw_entry,%r11 ; call *%r11
 *   lea 128(%rsp),%rsp              (a clone child with a new stack
 *                                   returns past this: kp_sud_return)
 *   jmp *0(%rip) ; .quad site + 2
 *
 * The program's SIGSYS stays the program's: its rt_sigaction(SIGSYS) is
 * kept here and answered from here, a SIGSYS that is not a dispatch is
 * passed to its handler (or its default: the process dies of it), and
 * its masks never block SIGSYS for real (a blocked SIGSYS that dispatch
 * forces kills the process): SIGSYS in a mask given to rt_sigprocmask,
 * rt_sigaction's sa_mask or rt_sigsuspend is kept per thread, reported
 * back as set, and a SIGSYS sent while it is "blocked" waits until the
 * program unblocks it.
 */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "../core/account.h"
#include "../core/user_mem.h"
#include "../sink/sink.h"
#include "record_writer.h"
#include "dispatch.h"

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#define SYSCALL_DISPATCH_FILTER_BLOCK 1
#define SYSCALL_DISPATCH_FILTER_ALLOW 0
#endif
#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

#define SIGSYS_BIT (1ULL << (SIGSYS - 1))

/* the kernel's struct sigaction (x86_64) */
struct k_sigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

bool kp_sud_on;
static volatile char selector = SYSCALL_DISPATCH_FILTER_BLOCK;
static __thread bool armed;
static __thread bool virt_blocked;	 /* the program blocked SIGSYS */
static __thread bool pending;		 /* a SIGSYS waits for the unblock */
static __thread siginfo_t pending_info;
static struct k_sigaction program_act;	 /* the program's SIGSYS action */
static uint64_t sa_mask_sigsys;		 /* signals whose sa_mask had SIGSYS */

/* entry.S */
void kp_sud_restorer(void);
__attribute__((noreturn)) void kp_sud_sigreturn(uint64_t rsp);

/* ---- the sites that came through the dispatch path ---- */

#define SITES_MAX 1024 /* a power of 2 */

struct sud_site {
	uint64_t site;	/* the syscall instruction; 0: empty */
	uint64_t tramp; /* its trampoline; 0: none (yet) */
	uint64_t hits;
};
static struct sud_site sites[SITES_MAX];
/* in a dispatch trampoline's page: where the site is, where its call returns */
#define SUD_SITE_OFF 7
#define SUD_RET_OFF 28
static uint64_t tramp_lo = UINT64_MAX, tramp_hi; /* every trampoline page */
static uint64_t sud_calls, sud_unplaced;
/* the mode that started dispatch (kp_sud_start) */
static struct kp_sud_host host;

static struct sud_site *site_slot(uint64_t site, bool add)
{
	for (uint64_t i = kp_addr_hash(site) & (SITES_MAX - 1), n = 0; n < SITES_MAX;
	     i = (i + 1) & (SITES_MAX - 1), n++) {
		uint64_t v = __atomic_load_n(&sites[i].site, __ATOMIC_ACQUIRE);
		if (v == site)
			return &sites[i];
		if (v == 0) {
			if (!add)
				return NULL;
			uint64_t expect = 0;
			if (__atomic_compare_exchange_n(&sites[i].site, &expect, site, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
			    expect == site)
				return &sites[i];
		}
	}
	return NULL;
}

int kp_sud_tramp_write(uint8_t *b, uint64_t site, uint64_t entry, uint64_t *key)
{
	static const uint8_t down[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 };
	static const uint8_t up[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00 };
	static const uint8_t jmp_abs[] = { 0xff, 0x25, 0, 0, 0, 0 };
	size_t n = 0;
	memcpy(b + n, down, sizeof(down));
	n += sizeof(down);
	b[n++] = 0xeb;
	b[n++] = 8;
	memcpy(b + n, &site, 8);
	n += 8;
	b[n++] = 0x49;
	b[n++] = 0xbb;
	memcpy(b + n, &entry, 8);
	n += 8;
	b[n++] = 0x41;
	b[n++] = 0xff;
	b[n++] = 0xd3;
	*key = (uint64_t)n - 2; /* relative: the caller adds the address */
	_Static_assert(SUD_RET_OFF == 5 + 2 + 8 + 10 + 3, "the trampoline's layout");
	memcpy(b + n, up, sizeof(up));
	n += sizeof(up);
	memcpy(b + n, jmp_abs, sizeof(jmp_abs));
	n += sizeof(jmp_abs);
	uint64_t back = site + 2;
	memcpy(b + n, &back, 8);
	n += 8;
	return (int)n;
}

/*
 * The trampoline of a site: a page of its own, written while it is not
 * executable, then made executable and never written again (another
 * thread may be running it). Sites that trap are few (a process that
 * makes thousands of them is one whose code the planner could not read,
 * and it says so in the trace).
 */
static uint64_t tramp_make(uint64_t site)
{
	long p = kp_raw(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (p < 0 && p > -4096)
		return 0;
	uint64_t key;
	kp_sud_tramp_write((uint8_t *)p, site, host.entry, &key);
	if (kp_raw(SYS_mprotect, p, 4096, PROT_READ | PROT_EXEC, 0, 0, 0) < 0 ||
	    host.site_add((uint64_t)p + key)) {
		kp_raw(SYS_munmap, p, 4096, 0, 0, 0, 0);
		return 0;
	}
	if ((uint64_t)p < tramp_lo)
		__atomic_store_n(&tramp_lo, (uint64_t)p, __ATOMIC_RELEASE);
	if ((uint64_t)p + 4096 > tramp_hi)
		__atomic_store_n(&tramp_hi, (uint64_t)p + 4096, __ATOMIC_RELEASE);
	return (uint64_t)p;
}

/*
 * A clone child's return address: past the trampoline's `lea
 * 128(%rsp),%rsp` when the call came from a dispatch trampoline (its
 * stack is its own). Known exactly, not by range: the pages of patch
 * mode's jump trampolines (tramp.c) may lie between two dispatch pages,
 * and a clone3 child of one sent 8 bytes too far died of SIGSEGV
 * (Chromium's thread start in patch mode).
 */
uint64_t kp_sud_return(uint64_t ret_addr)
{
	if (ret_addr < tramp_lo || ret_addr >= tramp_hi || (ret_addr & 4095) != SUD_RET_OFF)
		return ret_addr;
	uint64_t page = ret_addr - SUD_RET_OFF, site;
	memcpy(&site, (const void *)(uintptr_t)(page + SUD_SITE_OFF), sizeof(site));
	const struct sud_site *s = site_slot(site, false);
	if (s && __atomic_load_n(&s->tramp, __ATOMIC_ACQUIRE) == page)
		return ret_addr + 8; /* past `lea 128(%rsp),%rsp` */
	return ret_addr;
}

void kp_sud_passive(void)
{
	selector = SYSCALL_DISPATCH_FILTER_ALLOW;
}

/* ---- the program's SIGSYS ---- */

static void real_mask(int how, uint64_t set, uint64_t *old)
{
	kp_raw(SYS_rt_sigprocmask, how, (long)&set, (long)old, 8, 0, 0);
}

static void forward(siginfo_t *si, ucontext_t *uc)
{
	if (virt_blocked) {
		pending_info = *si;
		pending = true;
		return;
	}
	struct k_sigaction a = program_act;
	if (a.handler == (uint64_t)(uintptr_t)SIG_IGN)
		return;
	if (a.handler == (uint64_t)(uintptr_t)SIG_DFL) {
		/* its default: the process dies of it, as it would have */
		struct k_sigaction dfl = { 0 };
		kp_raw(SYS_rt_sigaction, SIGSYS, (long)&dfl, 0, 8, 0, 0);
		kp_raw(SYS_rt_tgsigqueueinfo, kp_raw(SYS_getpid, 0, 0, 0, 0, 0, 0),
		    kp_raw(SYS_gettid, 0, 0, 0, 0, 0, 0), SIGSYS, (long)si, 0, 0);
		return;
	}
	if (a.flags & SA_RESETHAND)
		program_act.handler = (uint64_t)(uintptr_t)SIG_DFL;
	/* the program's handler runs with the program's mask, SIGSYS in it
	 * unless SA_NODEFER, and SIGSYS kept open for real */
	uint64_t mask = 0;
	memcpy(&mask, &uc->uc_sigmask, 8);
	mask |= a.mask;
	bool blocks = !(a.flags & SA_NODEFER) || (mask & SIGSYS_BIT);
	bool saved = virt_blocked;
	virt_blocked = blocks;
	real_mask(SIG_SETMASK, mask & ~SIGSYS_BIT, NULL);
	if (a.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))(uintptr_t)a.handler)(SIGSYS, si, uc);
	else
		((void (*)(int))(uintptr_t)a.handler)(SIGSYS);
	virt_blocked = saved;
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	ucontext_t *uc = ucv;
	int e = errno;
	/* the shim's own: the rt_sigreturn of kp_sud_restorer that ends this */
	if (kp_own_counting())
		__atomic_fetch_add(&kp_own_calls[SYS_rt_sigreturn], 1, __ATOMIC_RELAXED);
	if (si->si_code != SYS_USER_DISPATCH) {
		forward(si, uc);
		errno = e;
		return;
	}
	uint64_t site = (uint64_t)(uintptr_t)si->si_call_addr - 2;
	long nr = si->si_syscall;
	__atomic_fetch_add(&sud_calls, 1, __ATOMIC_RELAXED);
	struct sud_site *s = site_slot(site, true);
	if (s)
		__atomic_fetch_add(&s->hits, 1, __ATOMIC_RELAXED);
	if (nr == SYS_rt_sigreturn) {
		/* made on the program's stack, where its frame is: the
		 * program's, not the restorer's */
		if (kp_own_counting())
			__atomic_fetch_sub(&kp_own_calls[SYS_rt_sigreturn], 1, __ATOMIC_RELAXED);
		host.count_sigreturn();
		kp_sud_sigreturn((uint64_t)uc->uc_mcontext.gregs[REG_RSP]);
	}
	uint64_t tramp = s ? __atomic_load_n(&s->tramp, __ATOMIC_ACQUIRE) : 0;
	if (!tramp && s) {
		host.lock();
		tramp = s->tramp;
		if (!tramp) {
			tramp = tramp_make(site);
			__atomic_store_n(&s->tramp, tramp, __ATOMIC_RELEASE);
		}
		host.unlock();
	}
	greg_t *g = uc->uc_mcontext.gregs;
	if (tramp) {
		g[REG_RIP] = (greg_t)tramp;
		g[REG_RAX] = (greg_t)nr;
	} else {
		/* no trampoline (no memory, a full table): made here, uncounted */
		__atomic_fetch_add(&sud_unplaced, 1, __ATOMIC_RELAXED);
		g[REG_RAX] = (greg_t)kp_raw(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
					 g[REG_R8], g[REG_R9]);
	}
	errno = e;
}

/* ---- what the trace says of it ---- */

static unsigned sites_busiest(struct kp_rec_site_calls *out, unsigned cap, uint64_t *calls)
{
	*calls = __atomic_load_n(&sud_calls, __ATOMIC_RELAXED);
	unsigned n = 0;
	for (unsigned i = 0; i < SITES_MAX; i++) {
		uint64_t site = __atomic_load_n(&sites[i].site, __ATOMIC_ACQUIRE);
		uint64_t hits = __atomic_load_n(&sites[i].hits, __ATOMIC_RELAXED);
		if (!site || !hits)
			continue;
		if (n < cap) {
			out[n].site = site;
			out[n].calls = hits;
			n++;
		} else {
			/* keep the busiest */
			unsigned least = 0;
			for (unsigned k = 1; k < cap; k++)
				if (out[k].calls < out[least].calls)
					least = k;
			if (cap && hits > out[least].calls) {
				out[least].site = site;
				out[least].calls = hits;
			}
		}
	}
	return n;
}

/* ---- what /proc says of the process's signals ---- */

/*
 * /proc/self/status lists SIGSYS as caught (SigCgt), which without the
 * shim it is not, unless the program caught it: a read of the process's
 * own status file gets the program's view. The descriptors that hold one
 * are marked when opened (every successful open sets or clears its
 * descriptor's mark).
 */
#define STATUS_FDS 1024
static uint64_t status_fd[STATUS_FDS / 64];
/* Descriptors marked ever (reads are looked at only then: dispatch.h). */
bool kp_sud_status_marked;

static const char *digits(const char *p, uint64_t *v)
{
	const char *q = p;
	*v = 0;
	while (*q >= '0' && *q <= '9')
		*v = *v * 10 + (uint64_t)(*q++ - '0');
	return q == p ? NULL : q;
}

/* /proc/{self,thread-self,PID}[/task/TID]/status of this process */
static bool own_status_path(const char *p)
{
	if (strncmp(p, "/proc/", 6) != 0)
		return false;
	p += 6;
	uint64_t v;
	if (strncmp(p, "self/", 5) == 0)
		p += 5;
	else if (strncmp(p, "thread-self/", 12) == 0)
		return strcmp(p + 12, "status") == 0;
	else if ((p = digits(p, &v)) && *p == '/' &&
		 (long)v == kp_raw(SYS_getpid, 0, 0, 0, 0, 0, 0))
		p++;
	else
		return false;
	if (strncmp(p, "task/", 5) == 0) {
		if (!(p = digits(p + 5, &v)) || *p != '/')
			return false;
		p++;
	}
	return strcmp(p, "status") == 0;
}

/*
 * In the status text (the whole file, as read now), the hex digit of
 * "Name:\t%016llx" that holds signal sig's bit, with the bit set or
 * cleared: its offset and the digit, or -1.
 */
static long status_digit(const char *text, size_t n, const char *name, int sig, bool set,
			 char *digit)
{
	size_t len = strlen(name);
	for (size_t i = 0; i + len + 16 <= n; i++) {
		if ((i && text[i - 1] != '\n') || memcmp(text + i, name, len) != 0)
			continue;
		/* sig 31 is bit 30: hex digit 15 - 30 / 4, bit 30 % 4 */
		size_t at = i + len + 15 - (size_t)(sig - 1) / 4;
		char c = text[at];
		int x = c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= '0' && c <= '9' ? c - '0' : -1;
		if (x < 0)
			return -1;
		x = set ? x | 1 << ((sig - 1) % 4) : x & ~(1 << ((sig - 1) % 4));
		*digit = (char)(x < 10 ? '0' + x : 'a' + x - 10);
		return (long)at;
	}
	return -1;
}

void kp_sud_after_call(uint64_t nr, const uint64_t *a, long r)
{
	if (r < 0)
		return;
	if (nr == SYS_openat || nr == SYS_open) {
		if (r >= STATUS_FDS)
			return;
		const char *path = (const char *)(uintptr_t)(nr == SYS_openat ? a[1] : a[0]);
		uint64_t bit = 1ULL << (r % 64);
		if (own_status_path(path)) {
			__atomic_fetch_or(&status_fd[r / 64], bit, __ATOMIC_RELAXED);
			__atomic_store_n(&kp_sud_status_marked, true, __ATOMIC_RELAXED);
		}
		else
			__atomic_fetch_and(&status_fd[r / 64], ~bit, __ATOMIC_RELAXED);
		return;
	}
	bool dup = nr == SYS_dup || nr == SYS_dup2 || nr == SYS_dup3 ||
		   (nr == SYS_fcntl && (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC));
	if (dup) {
		/* a shell's `< file`: the mark goes with the copy */
		if (r >= STATUS_FDS)
			return;
		bool from = a[0] < STATUS_FDS &&
			    (__atomic_load_n(&status_fd[a[0] / 64], __ATOMIC_RELAXED) >> (a[0] % 64) & 1);
		uint64_t bit = 1ULL << (r % 64);
		if (from)
			__atomic_fetch_or(&status_fd[r / 64], bit, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&status_fd[r / 64], ~bit, __ATOMIC_RELAXED);
		return;
	}
	if ((nr != SYS_read && nr != SYS_pread64) || a[0] >= STATUS_FDS || !r ||
	    !(__atomic_load_n(&status_fd[a[0] / 64], __ATOMIC_RELAXED) >> (a[0] % 64) & 1))
		return;
	/* where the read was in the file, and the file as it reads now (a
	 * shell's `read` takes it a byte at a time) */
	long fd = (long)a[0];
	long start = nr == SYS_pread64 ? (long)a[3] : kp_raw(SYS_lseek, fd, 0, SEEK_CUR, 0, 0, 0) - r;
	char text[4096];
	long n = kp_raw(SYS_pread64, fd, (long)text, sizeof(text), 0, 0, 0);
	if (start < 0 || n <= 0)
		return;
	uint64_t h = program_act.handler;
	char *buf = (char *)(uintptr_t)a[1];
	char d;
	long at = status_digit(text, (size_t)n, "SigCgt:\t", SIGSYS,
			       h != (uint64_t)(uintptr_t)SIG_DFL && h != (uint64_t)(uintptr_t)SIG_IGN, &d);
	if (at >= start && at < start + r)
		buf[at - start] = d;
	at = status_digit(text, (size_t)n, "SigIgn:\t", SIGSYS, h == (uint64_t)(uintptr_t)SIG_IGN, &d);
	if (at >= start && at < start + r)
		buf[at - start] = d;
}

/* ---- arming ---- */

void kp_sud_arm_thread(void)
{
	if (!kp_sud_on)
		return;
	armed = kp_raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		    (long)host.text_start, (long)(host.text_end - host.text_start),
		    (long)&selector, 0) == 0;
}

/* The child of fork: the kernel disarmed it; its counts start at zero. */
void kp_sud_after_fork_child(void)
{
	armed = false;
	kp_sud_arm_thread();
	__atomic_store_n(&sud_calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sud_unplaced, 0, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < SITES_MAX; i++)
		sites[i].hits = 0;
}

static void on_attach(void)
{
	if (!armed)
		kp_sud_arm_thread();
}

/* Ours in the kernel; on the alternate stack when the program's asks. */
static long install(bool onstack, struct k_sigaction *old)
{
	struct k_sigaction mine = {
		.handler = (uint64_t)(uintptr_t)on_sigsys,
		.flags = SA_SIGINFO | SA_RESTORER | SA_RESTART | (onstack ? SA_ONSTACK : 0),
		.restorer = (uint64_t)(uintptr_t)kp_sud_restorer,
		.mask = 0,
	};
	return kp_raw(SYS_rt_sigaction, SIGSYS, (long)&mine, (long)old, 8, 0, 0);
}

int kp_sud_start(const struct kp_sud_host *h)
{
	host = *h;
	/* the program's action so far, kept to be answered and used */
	struct k_sigaction old;
	long r = install(false, &old);
	if (r < 0)
		return (int)r;
	program_act = old;
	kp_sud_on = true;
	r = kp_raw(SYS_prctl, PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
		(long)host.text_start, (long)(host.text_end - host.text_start),
		(long)&selector, 0);
	if (r < 0) {
		kp_sud_on = false;
		kp_raw(SYS_rt_sigaction, SIGSYS, (long)&old, 0, 8, 0, 0);
		return (int)r;
	}
	armed = true;
	kp_on_attach = on_attach;
	kp_own_dispatch = sites_busiest;
	return 0;
}

/* ---- the program's signal calls, while dispatch is on ---- */

long kp_sud_sigaction(long sig, uint64_t act_p, uint64_t old_p, uint64_t size,
		      kp_sud_call_fn call, void *ctx)
{
	if (size != 8 || sig < 1 || sig > 64)
		return call(ctx, act_p, old_p);
	struct k_sigaction act;
	if (act_p && kp_user_read((const void *)(uintptr_t)act_p, &act, sizeof(act)))
		return -EFAULT;
	uint64_t bit = 1ULL << (sig - 1);
	if (sig == SIGSYS) {
		/* the program's own: kept here, the kernel's stays ours; the
		 * call is made as a query, so that it is counted as made */
		struct k_sigaction prev = program_act;
		long r = call(ctx, 0, 0);
		if (r)
			return r;
		if (old_p && kp_user_write((void *)(uintptr_t)old_p, &prev, sizeof(prev)))
			return -EFAULT;
		if (act_p) {
			program_act = act;
			install(act.flags & SA_ONSTACK, NULL);
		}
		return 0;
	}
	bool had = __atomic_load_n(&sa_mask_sigsys, __ATOMIC_RELAXED) & bit;
	uint64_t copy = 0;
	if (act_p) {
		act.mask &= ~SIGSYS_BIT;
		copy = (uint64_t)(uintptr_t)&act;
	}
	long r = call(ctx, copy, old_p);
	if (r == 0 && old_p && had) {
		struct k_sigaction o;
		if (!kp_user_read((const void *)(uintptr_t)old_p, &o, sizeof(o))) {
			o.mask |= SIGSYS_BIT;
			kp_user_write((void *)(uintptr_t)old_p, &o, sizeof(o));
		}
	}
	if (r == 0 && act_p) {
		uint64_t orig;
		kp_user_read((const void *)(uintptr_t)(act_p + 24), &orig, 8);
		if (orig & SIGSYS_BIT)
			__atomic_fetch_or(&sa_mask_sigsys, bit, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&sa_mask_sigsys, ~bit, __ATOMIC_RELAXED);
	}
	return r;
}

long kp_sud_sigprocmask(long how, uint64_t set_p, uint64_t old_p, uint64_t size,
			kp_sud_call_fn call, void *ctx)
{
	if (size != 8)
		return call(ctx, set_p, old_p);
	uint64_t set = 0;
	if (set_p && kp_user_read((const void *)(uintptr_t)set_p, &set, 8))
		return -EFAULT;
	bool was = virt_blocked, now = was;
	if (set_p) {
		bool in = set & SIGSYS_BIT;
		if (how == SIG_BLOCK)
			now = was || in;
		else if (how == SIG_UNBLOCK)
			now = was && !in;
		else if (how == SIG_SETMASK)
			now = in;
		else
			return call(ctx, set_p, old_p); /* EINVAL from the kernel */
		set &= ~SIGSYS_BIT;
	}
	long r = call(ctx, set_p ? (uint64_t)(uintptr_t)&set : 0, old_p);
	if (r != 0)
		return r;
	if (old_p && was) {
		uint64_t o;
		if (!kp_user_read((const void *)(uintptr_t)old_p, &o, 8)) {
			o |= SIGSYS_BIT;
			kp_user_write((void *)(uintptr_t)old_p, &o, 8);
		}
	}
	virt_blocked = now;
	if (!now && pending) {
		pending = false;
		kp_raw(SYS_rt_tgsigqueueinfo, kp_raw(SYS_getpid, 0, 0, 0, 0, 0, 0),
		    kp_raw(SYS_gettid, 0, 0, 0, 0, 0, 0), SIGSYS, (long)&pending_info, 0, 0);
	}
	return r;
}

long kp_sud_sigsuspend(uint64_t set_p, uint64_t size, kp_sud_call_fn call, void *ctx)
{
	uint64_t set;
	if (size != 8 || !set_p || kp_user_read((const void *)(uintptr_t)set_p, &set, 8))
		return call(ctx, set_p, 0);
	set &= ~SIGSYS_BIT;
	return call(ctx, (uint64_t)(uintptr_t)&set, 0);
}

void kp_sud_before_exec(void)
{
	/* the new image starts with the mask the program believes it has */
	if (kp_sud_on && virt_blocked)
		real_mask(SIG_BLOCK, SIGSYS_BIT, NULL);
}

void kp_sud_exec_failed(void)
{
	if (kp_sud_on && virt_blocked)
		real_mask(SIG_UNBLOCK, SIGSYS_BIT, NULL);
}
