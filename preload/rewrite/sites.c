/* SPDX-License-Identifier: MIT */
/*
 * Rewrite mode's memory: the page at address 0 that turns `call *%rax`
 * into a jump to entry.S, the table of rewritten sites, and the
 * 2-byte stores themselves. Separate from the scanner because the hook
 * reads the site table on every call and nothing here allocates: it is
 * raw mmap and mprotect.
 */
#include <string.h>

#include "../lifecycle/lifecycle.h"
#include "rewrite.h"

#define PAGE 4096UL

/*
 * The landing pad. A site's `call *%rax` enters it at offset rax (the
 * syscall number) and must reach the stub at KP_RW_SLED whatever the
 * offset. A plain nop sled costs up to 512 nops; instead the pad repeats
 * "eb 66 90": entered at an eb it jumps 0x66 ahead (onto a 90, then the
 * next eb), entered at the 66 it runs "66 90" (a 2-byte nop), entered at
 * the 90 it runs one nop: 4-5 jumps of 105 bytes from anywhere. The last
 * 104 bytes before the stub are plain nops, so that no jump overshoots.
 * The same pattern leads numbers from the stub's end to the end of the
 * page (no real syscall, but a call must land on code) to a second stub.
 */
/* The page is at address 0: UBSan's null check must not see these stores. */
#define KP_PAGE_ZERO __attribute__((no_sanitize("null")))

KP_PAGE_ZERO static void fill_pad(uint8_t *p, size_t from, size_t to)
{
	size_t jumps_end = to > from + 104 ? to - 104 : from;
	for (size_t i = from; i < to; i++) {
		if (i < jumps_end) {
			static const uint8_t pattern[3] = { 0xeb, 0x66, 0x90 };
			p[i] = pattern[(i - from) % 3];
		} else {
			p[i] = 0x90;
		}
	}
}

/* movabs $kp_rw_entry, %r11; jmp *%r11 (r11: clobbered by syscall anyway) */
#define STUB_BYTES 13
KP_PAGE_ZERO static void put_stub(uint8_t *p)
{
	uint64_t entry = (uint64_t)(uintptr_t)kp_rw_entry;
	p[0] = 0x49;
	p[1] = 0xbb;
	memcpy(p + 2, &entry, 8);
	p[10] = 0x41;
	p[11] = 0xff;
	p[12] = 0xe3;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

int kp_rw_page_map(void)
{
	long p = kp_raw(SYS_mmap, 0, PAGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p < 0 && p > -4096)
		return (int)p; /* EPERM: vm.mmap_min_addr and no CAP_SYS_RAWIO */
	if (p != 0) {
		/* a kernel that took the address as a hint */
		kp_raw(SYS_munmap, p, PAGE);
		return -EEXIST;
	}
	uint8_t *page = (uint8_t *)(uintptr_t)p;
	/* the compiler must not know this is NULL (it would trap the stores) */
	__asm__("" : "+r"(page));
	fill_pad(page, 0, KP_RW_SLED);
	put_stub(page + KP_RW_SLED);
	fill_pad(page, KP_RW_SLED + STUB_BYTES, PAGE - STUB_BYTES);
	put_stub(page + PAGE - STUB_BYTES);
	/* execute-only where protection keys make that possible */
	long err = kp_raw(SYS_mprotect, 0, PAGE, PROT_EXEC);
	if (err) {
		kp_raw(SYS_munmap, 0, PAGE);
		return (int)err;
	}
	return 0;
}

void kp_rw_page_unmap(void)
{
	kp_raw(SYS_munmap, 0, PAGE);
}

/*
 * The rewritten sites, an open-addressing set of addresses. The hook looks
 * up every call's site (a call of a small address that is not a site is a
 * program's NULL-pointer call, which must still crash). Readers take no
 * lock: a table is never changed but by adding a key into an empty slot,
 * and a grown table replaces the old one, which stays mapped (a reader may
 * still be in it). Writers hold kp_rw_lock.
 */
#define TOMBSTONE 1ULL
struct kp_rw_site_table *kp_rw_sites;
uint64_t kp_rw_sites_gen = 1; /* a thread's empty cache has generation 0 */

static struct kp_rw_site_table *table_new(uint64_t slots)
{
	size_t bytes = sizeof(struct kp_rw_site_table) + slots * sizeof(uint64_t);
	long p = kp_raw(SYS_mmap, 0, bytes, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096)
		return NULL;
	struct kp_rw_site_table *t = (struct kp_rw_site_table *)p;
	t->mask = slots - 1;
	return t;
}

static void table_put(struct kp_rw_site_table *t, uint64_t site)
{
	uint64_t i = kp_addr_hash(site) & t->mask;
	while (t->slot[i] > TOMBSTONE) {
		if (t->slot[i] == site)
			return;
		i = (i + 1) & t->mask;
	}
	if (t->slot[i] == 0)
		t->used++;
	t->live++;
	__atomic_store_n(&t->slot[i], site, __ATOMIC_RELEASE);
}

int kp_rw_site_add(uint64_t site)
{
	struct kp_rw_site_table *t = kp_rw_sites;
	if (!t || (t->used + 1) * 2 > t->mask + 1) {
		uint64_t slots = t ? (t->mask + 1) * (t->live * 4 > t->mask ? 2 : 1) : 4096;
		struct kp_rw_site_table *n = table_new(slots);
		if (!n)
			return -ENOMEM;
		for (uint64_t i = 0; t && i <= t->mask; i++)
			if (t->slot[i] > TOMBSTONE)
				table_put(n, t->slot[i]);
		__atomic_store_n(&kp_rw_sites, n, __ATOMIC_RELEASE);
		t = n;
	}
	table_put(t, site);
	return 0;
}

uint64_t kp_rw_sites_count(void)
{
	return kp_rw_sites ? kp_rw_sites->live : 0;
}

/*
 * Address ranges that hold rewritten sites, so that the frequent munmap
 * and mremap of data (malloc) skip the table walk.
 */
#define MAX_SPANS 256
static struct {
	uint64_t lo, hi;
} spans[MAX_SPANS];
static unsigned n_spans;

static void span_add(uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < n_spans; i++) {
		if (lo <= spans[i].hi && hi >= spans[i].lo) {
			if (lo < spans[i].lo)
				spans[i].lo = lo;
			if (hi > spans[i].hi)
				spans[i].hi = hi;
			return;
		}
	}
	if (n_spans == MAX_SPANS) {
		/* widen the last one: a few more table walks, nothing lost */
		if (lo < spans[n_spans - 1].lo)
			spans[n_spans - 1].lo = lo;
		if (hi > spans[n_spans - 1].hi)
			spans[n_spans - 1].hi = hi;
		return;
	}
	spans[n_spans].lo = lo;
	spans[n_spans].hi = hi;
	__atomic_store_n(&n_spans, n_spans + 1, __ATOMIC_RELEASE);
}

bool kp_rw_spans_overlap(uint64_t lo, uint64_t hi)
{
	unsigned n = __atomic_load_n(&n_spans, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n; i++)
		if (lo < spans[i].hi && hi > spans[i].lo)
			return true;
	return false;
}

/* Code unmapped: its sites are gone (a new mapping there is not ours). */
void kp_rw_sites_forget(uint64_t start, uint64_t end)
{
	struct kp_rw_site_table *t = kp_rw_sites;
	bool removed = false;
	for (uint64_t i = 0; t && i <= t->mask; i++) {
		uint64_t v = t->slot[i];
		if (v > TOMBSTONE && v >= start && v < end) {
			__atomic_store_n(&t->slot[i], TOMBSTONE, __ATOMIC_RELEASE);
			t->live--;
			removed = true;
		}
	}
	/* after the removal: a thread that reads the new generation sees it */
	if (removed)
		__atomic_add_fetch(&kp_rw_sites_gen, 1, __ATOMIC_RELEASE);
}

/* mremap moved code: its sites moved with it. */
void kp_rw_sites_move(uint64_t old_start, uint64_t len, uint64_t new_start)
{
	struct kp_rw_site_table *t = kp_rw_sites;
	for (uint64_t i = 0; t && i <= t->mask; i++) {
		uint64_t v = t->slot[i];
		if (v > TOMBSTONE && v >= old_start && v < old_start + len) {
			kp_rw_site_add(v - old_start + new_start);
			t = kp_rw_sites; /* may have grown; the old key stays valid */
		}
	}
	kp_rw_sites_forget(old_start, old_start + len);
	span_add(new_start, new_start + len);
}

/*
 * One 2-byte store of `ff d0` over `0f 05`. x86 makes an unaligned store
 * atomic when it stays within a cache line, so another thread executing
 * the site sees one instruction or the other. A site across a line (or a
 * page) cannot be written atomically: with other threads running its
 * second byte goes first, so that a thread that races the store executes
 * `0f d0`, an invalid opcode, rather than `ff 05 ...`, an increment of a
 * random address.
 */
static void store_site(uint8_t *p)
{
	if (((uintptr_t)p & 63) != 63) {
		__atomic_store_n((uint16_t *)(void *)p, (uint16_t)0xd0ff, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&p[1], (uint8_t)0xd0, __ATOMIC_RELEASE);
	__atomic_store_n(&p[0], (uint8_t)0xff, __ATOMIC_RELEASE);
}

/*
 * Pages stay executable while they are writable (running threads must
 * not fault); where the system refuses W+X, a process without other
 * threads can do without X for the moment of the stores.
 */
static long make_writable(uint64_t lo, uint64_t hi, int prot, bool other_threads)
{
	long err = kp_raw(SYS_mprotect, lo, hi - lo, prot | PROT_READ | PROT_WRITE | PROT_EXEC);
	if (err && !other_threads)
		err = kp_raw(SYS_mprotect, lo, hi - lo, PROT_READ | PROT_WRITE);
	return err;
}

long kp_rw_patch_apply(const uint64_t *list, size_t n, int prot, bool other_threads)
{
	if (!n)
		return 0;
	uint64_t lo = list[0] & ~(PAGE - 1);
	uint64_t hi = ((list[n - 1] + 1) | (PAGE - 1)) + 1;
	long err = make_writable(lo, hi, prot, other_threads);
	if (err)
		return err;
	long done = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)list[i];
		if (p[0] != 0x0f || p[1] != 0x05 || kp_rw_site_known(list[i]))
			continue;
		/* in the table before the store: a thread may run it at once */
		if (kp_rw_site_add(list[i]))
			break;
		store_site(p);
		done++;
	}
	kp_raw(SYS_mprotect, lo, hi - lo, prot);
	if (done)
		span_add(list[0], list[n - 1] + 2);
	return done;
}

long kp_rw_patch_split(uint64_t site, int prot_first, int prot_second,
		       bool other_threads)
{
	uint64_t first = site & ~(PAGE - 1), second = first + PAGE;
	if ((site & (PAGE - 1)) != PAGE - 1 || prot_first == prot_second)
		return kp_rw_patch_apply(&site, 1, prot_first, other_threads);
	long err = make_writable(first, second, prot_first, other_threads);
	if (!err)
		err = make_writable(second, second + PAGE, prot_second, other_threads);
	long done = 0;
	uint8_t *p = (uint8_t *)(uintptr_t)site;
	if (!err && p[0] == 0x0f && p[1] == 0x05 && !kp_rw_site_known(site) &&
	    kp_rw_site_add(site) == 0) {
		store_site(p);
		span_add(site, site + 2);
		done = 1;
	}
	kp_raw(SYS_mprotect, first, PAGE, prot_first);
	kp_raw(SYS_mprotect, second, PAGE, prot_second);
	return err ? err : done;
}

void kp_rw_patch_revert_all(void)
{
	struct kp_rw_site_table *t = kp_rw_sites;
	for (uint64_t i = 0; t && i <= t->mask; i++) {
		uint64_t v = t->slot[i];
		if (v <= TOMBSTONE)
			continue;
		uint64_t lo = v & ~(PAGE - 1), hi = ((v + 1) | (PAGE - 1)) + 1;
		if (make_writable(lo, hi, PROT_READ | PROT_EXEC, true))
			continue;
		uint8_t *p = (uint8_t *)(uintptr_t)v;
		if (p[0] == 0xff && p[1] == 0xd0) {
			p[0] = 0x0f;
			p[1] = 0x05;
		}
		kp_raw(SYS_mprotect, lo, hi - lo, PROT_READ | PROT_EXEC);
		__atomic_store_n(&t->slot[i], TOMBSTONE, __ATOMIC_RELEASE);
		t->live--;
	}
	__atomic_add_fetch(&kp_rw_sites_gen, 1, __ATOMIC_RELEASE);
}
