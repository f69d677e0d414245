/* SPDX-License-Identifier: MIT */
/*
 * kprof-sites --plan: where patch mode's 5-byte jmp to a trampoline can
 * go around each site, from capstone's decoding of the site's function
 * and the branch targets near it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sites.h"
#include "sites_protocol.h"

/*
 * For the unprivileged hook mode (docs/SHIM.md): a site is patched by
 * replacing a window of whole instructions around its `syscall` with a
 * 5-byte `jmp rel32` to a trampoline that runs them relocated. The window
 * must hold at least 5 bytes, lie inside the site's function, hold no
 * relative branch or call (their targets would move) and no second
 * syscall, and no direct branch of the section (its function's, or one
 * from elsewhere) may land inside it but at its first byte. RIP-relative operands are relocatable (their disp32 is
 * rewritten for the trampoline's address); their offsets are given.
 * Windows that end with the syscall come first (a thread blocked in the
 * call while the window is written resumes after it), then the shortest.
 */
#define PLAN_SCAN 4	/* instructions tried on each side of the site */
#define PLAN_MAX 8192	/* instructions of one function we look at */

struct plan_insn {
	uint64_t addr;
	uint8_t size;
	bool relative;	 /* a relative jump, call or loop */
	bool syscall;
	uint8_t rip_off; /* offset of a RIP-relative disp32, 0: none */
	uint64_t target; /* of a direct branch, 0: none */
};

static struct plan_insn plan_buf[PLAN_MAX];

/* --plan prints text; --plan-bin writes plan_recs after the sweep. */
static bool plan_text;
static struct kp_plan_rec *plan_recs;
static size_t n_plan_recs, cap_plan_recs;

static int plan_keep(const struct kp_plan_rec *r)
{
	if (n_plan_recs == cap_plan_recs) {
		size_t cap = cap_plan_recs ? cap_plan_recs * 2 : 256;
		struct kp_plan_rec *v = realloc(plan_recs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		plan_recs = v;
		cap_plan_recs = cap;
	}
	plan_recs[n_plan_recs++] = *r;
	return 0;
}

static void plan_decode_one(const cs_insn *i, struct plan_insn *p)
{
	const cs_x86 *x = &i->detail->x86;
	memset(p, 0, sizeof(*p));
	p->addr = i->address;
	p->size = (uint8_t)i->size;
	p->syscall = is_syscall(i);
	p->relative = in_group(i, X86_GRP_BRANCH_RELATIVE);
	if (p->relative && x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		p->target = (uint64_t)x->operands[0].imm;
	for (unsigned k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM && x->operands[k].mem.base == X86_REG_RIP &&
		    x->encoding.disp_size == 4)
			p->rip_off = x->encoding.disp_offset;
}

/*
 * The targets of every direct branch and call of the section being
 * planned, sorted: a jump from another function (hand-written assembly
 * shares tails that way) may land inside a window too. From a linear
 * sweep that steps one byte past what does not decode; a target read from
 * data that looked like code only makes a window more careful.
 */
static uint64_t *targets;
static size_t n_targets, cap_targets;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int plan_target_add(uint64_t t)
{
	if (n_targets == cap_targets) {
		size_t cap = cap_targets ? cap_targets * 2 : 4096;
		uint64_t *v = realloc(targets, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		targets = v;
		cap_targets = cap;
	}
	targets[n_targets++] = t;
	return 0;
}

static bool plan_bounds(const struct file *f, uint64_t sec_addr, size_t sec_size, uint64_t x,
			uint64_t *start, uint64_t *len);

/*
 * Which targets can matter: a window lies within PLAN_SCAN instructions
 * (at most 15 bytes each) of its site, so only targets within PLAN_NEAR of
 * a site are kept. A rel8 branch reaches 128 bytes at most: it can land in
 * a window only from within PLAN_REL8 of the site.
 */
#define PLAN_NEAR 128
#define PLAN_REL8 256
#define PLAN_BACK_MAX (64u << 10) /* a known start further back: bytes taken raw */

/* Whether t is within PLAN_NEAR of one of the n sorted site addresses. */
static bool near_site(const uint64_t *sites, size_t n, uint64_t t)
{
	uint64_t lo = t > PLAN_NEAR ? t - PLAN_NEAR : 0;
	size_t a = lo ? first_above(sites, n, lo - 1) : 0;
	return a < n && sites[a] <= t + PLAN_NEAR;
}

static int plan_target_near(const uint64_t *sites, size_t n_sites, uint64_t sec_addr,
			    size_t size, uint64_t t)
{
	if (t < sec_addr || t >= sec_addr + size || !near_site(sites, n_sites, t))
		return 0;
	return plan_target_add(t);
}

/* The direct branch targets of [*a, hi) decoded from *a, an instruction
 * boundary; *a ends where decoding stopped (a boundary again). */
static int plan_targets_decode(const uint8_t *data, uint64_t sec_addr, size_t size,
			       uint64_t *a, uint64_t hi, const uint64_t *sites, size_t n_sites)
{
	if (*a >= hi || *a >= sec_addr + size)
		return 0;
	const uint8_t *code = data + (*a - sec_addr);
	size_t left = (size_t)(sec_addr + size - *a);
	/* whole instructions: the last one may run past hi */
	while (*a < hi && next_insn(dis_detail, insn_detail, &code, &left, a)) {
		const cs_x86 *x = &insn_detail->detail->x86;
		if (!in_group(insn_detail, X86_GRP_BRANCH_RELATIVE) || x->op_count != 1 ||
		    x->operands[0].type != X86_OP_IMM)
			continue;
		if (plan_target_near(sites, n_sites, sec_addr, size, (uint64_t)x->operands[0].imm))
			return -ENOMEM;
	}
	return 0;
}

/* Every rel8 jump, conditional jump and loop of [lo, hi) from its bytes
 * alone (no boundary known there): more careful, never less. */
static int plan_targets_rel8_raw(const uint8_t *data, uint64_t sec_addr, size_t size, uint64_t lo,
				 uint64_t hi, const uint64_t *sites, size_t n_sites)
{
	for (uint64_t b = lo; b < hi && b + 2 <= sec_addr + size; b++) {
		uint8_t op = data[b - sec_addr];
		if (!((op >= 0x70 && op <= 0x7f) || op == 0xeb || (op >= 0xe0 && op <= 0xe3)))
			continue;
		uint64_t t = b + 2 + (uint64_t)(int64_t)(int8_t)data[b - sec_addr + 1];
		if (plan_target_near(sites, n_sites, sec_addr, size, t))
			return -ENOMEM;
	}
	return 0;
}

/* The start of a known function at or before addr (the unwind table's or
 * the symbol or Go table's), at least floor; floor when none. */
static uint64_t known_start_upto(const struct file *f, uint64_t addr, uint64_t floor)
{
	uint64_t best = floor;
	uint64_t k = f->table ? functions_upto(f, addr) : 0;
	if (k && table_addr(f, k - 1, false) > best)
		best = table_addr(f, k - 1, false);
	size_t a = first_above(f->funcs.start, f->funcs.n, addr);
	if (a && f->funcs.start[a - 1] > best && f->funcs.start[a - 1] <= addr)
		best = f->funcs.start[a - 1];
	return best;
}

/*
 * The targets near the section's sites (sorted addresses), without
 * decoding the whole section (capstone's detail mode takes ~250 ns an
 * instruction: 2.7 s for node's 60 MB of text, most of a cold start in
 * patch mode):
 * - the function starts of the symbol table or Go's table: a call through
 *   a pointer lands there, and a symbol whose size is too large must not
 *   let a window run over the next one's entry;
 * - every rel32 jump, call and conditional jump of the section, from its
 *   bytes alone: each E8, E9 and 0F 80-8F is taken as the start of one.
 *   A byte that is no instruction's start gives a target that is not one,
 *   which only makes a window more careful (few: a random target lands
 *   near a site once in millions);
 * - rel8 branches, which only reach 128 bytes: decoded around each site
 *   that has bounds (plan_bounds: a site without gets no window), from the
 *   known function start before them (the site's function or gap, and the
 *   one before it); when none is known within 64 KiB, the 256 bytes before
 *   the site's function are taken byte by byte as the rel32 ones are.
 */
static int plan_targets(const struct file *f, const uint8_t *data, uint64_t sec_addr,
			size_t size, const uint64_t *sites, size_t n_sites)
{
	n_targets = 0;
	if (!n_sites)
		return 0;
	for (size_t k = 0; k < f->funcs.n; k++)
		if (plan_target_near(sites, n_sites, sec_addr, size, f->funcs.start[k]))
			return -ENOMEM;
	for (size_t i = 0; i + 5 <= size; i++) {
		uint8_t op = data[i];
		size_t at;
		if (op == 0xe8 || op == 0xe9)
			at = i + 1;
		else if (op == 0x0f && i + 6 <= size && (data[i + 1] & 0xf0) == 0x80)
			at = i + 2;
		else
			continue;
		int32_t rel = (int32_t)load_u32(data + at);
		uint64_t t = sec_addr + at + 4 + (uint64_t)(int64_t)rel;
		if (plan_target_near(sites, n_sites, sec_addr, size, t))
			return -ENOMEM;
	}
	uint64_t done = sec_addr; /* decoded up to here, a boundary */
	for (size_t k = 0; k < n_sites; k++) {
		uint64_t fs, fl;
		/* a site without bounds gets no window: nothing to check */
		if (!plan_bounds(f, sec_addr, size, sites[k], &fs, &fl))
			continue;
		uint64_t lo = fs > sec_addr + PLAN_REL8 ? fs - PLAN_REL8 : sec_addr;
		uint64_t a = known_start_upto(f, lo, sec_addr);
		if (a < done)
			a = done; /* decoded already: go on from where it stopped */
		if (lo > a + PLAN_BACK_MAX) {
			/* no boundary known near: the bytes before the function raw */
			if (plan_targets_rel8_raw(data, sec_addr, size, lo, fs, sites, n_sites))
				return -ENOMEM;
			a = fs;
		}
		if (plan_targets_decode(data, sec_addr, size, &a, sites[k] + PLAN_REL8, sites,
					n_sites))
			return -ENOMEM;
		done = a;
	}
	qsort(targets, n_targets, sizeof(*targets), cmp_u64);
	return 0;
}

/* Whether a branch of the function, or any of the section, lands inside
 * (lo, hi). */
static bool plan_target_inside(const struct plan_insn *v, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].target > lo && v[k].target < hi)
			return true;
	size_t a = first_above(targets, n_targets, lo);
	return a < n_targets && targets[a] < hi;
}

/* The window [i, j] of v for the site at index s, or false with why. */
static bool plan_window(const struct plan_insn *v, size_t n, size_t s, size_t *wi, size_t *wj,
			const char **why)
{
	size_t best_i = 0, best_j = 0;
	unsigned best = 0;
	bool best_last = false;
	*why = "no 5-byte window of movable whole instructions";
	for (size_t i = s >= PLAN_SCAN ? s - PLAN_SCAN : 0; i <= s; i++) {
		for (size_t j = s; j < n && j <= s + PLAN_SCAN; j++) {
			unsigned len = 0;
			bool ok = true;
			for (size_t k = i; k <= j && ok; k++) {
				len += v[k].size;
				ok = !v[k].relative && (k == s || !v[k].syscall);
			}
			if (!ok || len < 5)
				continue;
			if (plan_target_inside(v, n, v[i].addr, v[j].addr + v[j].size))
				continue;
			/* the syscall last: a thread blocked in it when the
			 * window is written returns past the window */
			bool last = j == s;
			if (!best || (last && !best_last) || (last == best_last && len < best)) {
				best = len;
				best_i = i;
				best_j = j;
				best_last = last;
			}
		}
	}
	if (!best)
		return false;
	*wi = best_i;
	*wj = best_j;
	return true;
}

__attribute__((format(printf, 1, 2)))
static void plan_say(const char *fmt, ...)
{
	if (!plan_text)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * The code around site x whose branches are checked: its function from
 * the unwind tables; for code they do not describe (hand-written
 * assembly, Go), its sized symbol or Go's function table entry; else the
 * gap between the functions of the unwind tables before and after it
 * (or the section's ends).
 */
static bool plan_bounds(const struct file *f, uint64_t sec_addr, size_t sec_size, uint64_t x,
			uint64_t *start, uint64_t *len)
{
	uint64_t lo = sec_addr, hi = sec_addr + sec_size, fs, fl;
	uint64_t k = f->table ? functions_upto(f, x) : 0;
	bool inside = false;
	if (k) {
		uint64_t fde = table_addr(f, k - 1, true);
		fs = table_addr(f, k - 1, false);
		fl = fde_length(f, fde);
		inside = x < fs + fl;
		/* a signal frame's FDE starts a byte early: decode from the code */
		lo = inside ? fs + (fde_signal_frame(f, fde) ? 1 : 0) : fs + fl;
		if (inside)
			hi = fs + fl;
	}
	if (!inside && func_bounds_at(&f->funcs, x, &fs, &fl)) {
		/* within the gap the unwind tables leave */
		if (fs > lo)
			lo = fs;
		if (fs + fl < hi)
			hi = fs + fl;
	}
	/* outside the table's functions: up to the next one's start */
	if (f->table && !inside && k < f->n_fde && table_addr(f, k, false) < hi)
		hi = table_addr(f, k, false);
	if (lo < sec_addr || hi > sec_addr + sec_size || x < lo || x + 2 > hi || hi - lo > (1u << 20))
		return false;
	*start = lo;
	*len = hi - lo;
	return true;
}

/* One line per site of the section: its window, or why it has none. */
static void plan_sites(const struct file *f, const uint8_t *data, uint64_t sec_addr,
		       size_t sec_size, const struct list *sites, uint64_t sec_off,
		       uint64_t *patchable)
{
	for (size_t k = 0; k < sites->n; k++) {
		uint64_t off = sites->v[k];
		if (off < sec_off || off >= sec_off + sec_size)
			continue;
		uint64_t x = sec_addr + (off - sec_off), start, len;
		if (!plan_bounds(f, sec_addr, sec_size, x, &start, &len)) {
			plan_say("0x%llx nopatch no function bounds\n", (unsigned long long)x);
			continue;
		}
		const uint8_t *code = data + (start - sec_addr);
		size_t left = len, n = 0, s = SIZE_MAX;
		uint64_t a = start;
		bool whole = true;
		while (left && n < PLAN_MAX) {
			if (!cs_disasm_iter(dis_detail, &code, &left, &a, insn_detail)) {
				whole = false;
				break;
			}
			plan_decode_one(insn_detail, &plan_buf[n]);
			if (plan_buf[n].addr == x)
				s = n;
			n++;
		}
		const char *why = NULL;
		size_t wi, wj;
		if (!whole || left)
			why = "its function does not decode whole";
		else if (s == SIZE_MAX)
			why = "not on an instruction boundary of its function";
		if (why || !plan_window(plan_buf, n, s, &wi, &wj, &why)) {
			plan_say("0x%llx nopatch %s\n", (unsigned long long)x, why);
			continue;
		}
		uint64_t w0 = plan_buf[wi].addr;
		struct kp_plan_rec rec = {
			.site = off,
			.start = sec_off + (w0 - sec_addr),
			.len = (uint8_t)(plan_buf[wj].addr + plan_buf[wj].size - w0),
			.sys_off = (uint8_t)(x - w0),
		};
		for (size_t i = wi; i <= wj; i++)
			if (plan_buf[i].rip_off && rec.n_rip < 4)
				rec.rip[rec.n_rip++] = (uint8_t)(plan_buf[i].addr - w0 + plan_buf[i].rip_off);
		if (rec.len > 64 || plan_keep(&rec)) {
			plan_say("0x%llx nopatch window too long or out of memory\n",
			       (unsigned long long)x);
			continue;
		}
		plan_say("0x%llx patch 0x%llx %llu insns=", (unsigned long long)x,
		       (unsigned long long)w0,
		       (unsigned long long)(plan_buf[wj].addr + plan_buf[wj].size - w0));
		for (size_t i = wi; i <= wj; i++)
			plan_say("%s%u", i > wi ? "," : "", plan_buf[i].size);
		for (size_t i = wi, first = 1; i <= wj; i++) {
			if (!plan_buf[i].rip_off)
				continue;
			plan_say("%s%llu", first ? " rip=" : ",",
			       (unsigned long long)(plan_buf[i].addr - w0 + plan_buf[i].rip_off));
			first = 0;
		}
		plan_say("\n");
		(*patchable)++;
	}
}

/* The addresses of the sites in the section at sec_off, sorted. */
static size_t section_sites(const struct list *sites, uint64_t sec_off, size_t sec_size,
			    uint64_t sec_addr, uint64_t *out)
{
	size_t n = 0;
	for (size_t k = 0; k < sites->n; k++)
		if (sites->v[k] >= sec_off && sites->v[k] < sec_off + sec_size)
			out[n++] = sec_addr + (sites->v[k] - sec_off);
	qsort(out, n, sizeof(*out), cmp_u64);
	return n;
}

static void plan_file(const struct file *f, const struct list *sites, uint64_t *patchable)
{
	Elf_Scn *scn = NULL;
	uint64_t *addrs = malloc((sites->n ? sites->n : 1) * sizeof(*addrs));
	if (!addrs) {
		plan_say("no memory for the sites\n");
		return;
	}
	GElf_Shdr sh;
	const uint8_t *data;
	while ((data = next_code_section(f->elf, &scn, &sh))) {
		size_t n = section_sites(sites, sh.sh_offset, sh.sh_size, sh.sh_addr, addrs);
		if (!n)
			continue;
		if (plan_targets(f, data, sh.sh_addr, sh.sh_size, addrs, n)) {
			plan_say("no memory for the section's branch targets\n");
			continue;
		}
		plan_sites(f, data, sh.sh_addr, sh.sh_size, sites, sh.sh_offset, patchable);
	}
	free(addrs);
}

int plan_output(const struct file *f, const struct list *sites, bool text, const char *path)
{
	uint64_t patchable = 0;
	int status = 0;
	plan_text = text;
	plan_file(f, sites, &patchable);
	struct kp_sites_head head = { KP_PLAN_MAGIC, n_plan_recs, sites->n - n_plan_recs };
	if (!plan_text && (write_all(1, &head, sizeof(head)) ||
			   write_all(1, plan_recs, n_plan_recs * sizeof(*plan_recs)))) {
		fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
		status = 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "kprof-sites: write: %s\n", strerror(errno));
		status = 1;
	}
	if (verbose)
		fprintf(stderr, "kprof-sites: %s: %llu of %zu sites patchable with a 5-byte jmp\n",
			path, (unsigned long long)patchable, sites->n);
	free(plan_recs);
	free(targets);
	return status;
}
