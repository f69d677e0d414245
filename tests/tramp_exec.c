/* SPDX-License-Identifier: MIT */
/*
 * The unprivileged mode's trampolines run (preload/patch/tramp.c): four
 * functions of known bytes are patched with a jmp to a trampoline whose
 * entry is a stand-in for kp_rw_entry (it counts the call, notes its
 * number and return address, and makes it), then called. Each must return
 * what getpid() returns (39 is its number; rip_after adds 1000), through
 * the entry exactly once, with the original site's address where the hook
 * will look for it. The trampolines' page is placed by kp_patch_tramp_area
 * (within rel32 of the functions; written, then made read-execute), and a
 * 1 MiB area is placed within reach of libc's getpid:
 *   wrapper   mov $39,%eax ; syscall ; ret          (window 7: mov + syscall)
 *   rip       mov 39 from memory(%rip),%eax ; syscall ; ret
 *             (window 8: its disp32 moved for the trampoline's address)
 *   after     mov $39,%eax ; syscall ; cmp $-4,%rax ; ret
 *             (window syscall + cmp: 6, relocated after the call)
 *   rip_after mov $39,%eax ; syscall ; add 1000 from memory(%rip),%eax ; ret
 *             (window 8, a disp32 after the call: returns getpid() + 1000)
 * Prints "ok NAME" per function and "ok area"; exit 0 when all pass, 1
 * naming the first that does not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../preload/patch/tramp.c"

uint64_t entry_calls, entry_nr, entry_ret;

/* The stand-in entry: as kp_rw_entry is called (number in rax, return
 * address on the stack), the call made here. */
__asm__(".text\n.globl test_entry\n.type test_entry,@function\n"
	"test_entry:\n"
	"	incq entry_calls(%rip)\n"
	"	movq %rax, entry_nr(%rip)\n"
	"	movq (%rsp), %r11\n"
	"	movq %r11, entry_ret(%rip)\n"
	"	syscall\n"
	"	ret\n"
	".size test_entry, .-test_entry\n");
void test_entry(void);

struct fn {
	const char *name;
	uint8_t bytes[16];
	unsigned size;
	struct kp_patch_plan plan; /* start filled in below */
	unsigned data_disp_at;	/* offset of a disp32 to point at the word (0: none) */
	unsigned data_insn_end;
	int32_t word;		/* what the word at code page + 2048 holds */
	long plus;		/* what the function adds to getpid()'s value */
};

static long test_sys(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = syscall(nr, a1, a2, a3, a4, a5, a6);
	return r == -1 ? -errno : r;
}

static int run(const struct fn *f, uint8_t *code_page, uint8_t *tramp_page)
{
	if (mprotect(tramp_page, 4096, PROT_READ | PROT_WRITE)) {
		perror("mprotect");
		return 1;
	}
	uint8_t *fn = code_page;
	memcpy(fn, f->bytes, f->size);
	if (f->data_disp_at) {
		/* the word it reads, in the same page (within reach) */
		int32_t disp = (int32_t)(2048 - f->data_insn_end);
		memcpy(code_page + 2048, &f->word, 4);
		memcpy(fn + f->data_disp_at, &disp, 4);
	}
	struct kp_patch_plan p = f->plan;
	p.start = (uint64_t)(uintptr_t)fn + p.start;
	uint64_t key;
	int n = kp_patch_tramp_write(tramp_page, (uint64_t)(uintptr_t)tramp_page,
				  (const uint8_t *)(uintptr_t)p.start, &p,
				  (uint64_t)(uintptr_t)test_entry, &key);
	if (n < 0) {
		printf("%s: trampoline: %s\n", f->name, strerror(-n));
		return 1;
	}
	uint8_t jump[64];
	if (kp_patch_tramp_jump(jump, &p, (uint64_t)(uintptr_t)tramp_page)) {
		printf("%s: jump out of reach\n", f->name);
		return 1;
	}
	memcpy((void *)(uintptr_t)p.start, jump, p.len);
	/* written, then executable and no longer writable (W^X) */
	if (mprotect(tramp_page, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	__builtin___clear_cache((char *)code_page, (char *)code_page + 4096);
	entry_calls = entry_nr = entry_ret = 0;
	long got = ((long (*)(void))(uintptr_t)fn)();
	long want = (long)getpid() + f->plus;
	uint64_t site;
	memcpy(&site, (void *)(uintptr_t)(entry_ret - KP_PATCH_TRAMP_SITE_BACK), 8);
	if (got != want || entry_calls != 1 || entry_nr != SYS_getpid ||
	    entry_ret - 2 != key || site != p.start + p.sys_off) {
		printf("%s: returned %ld (getpid %ld), entry calls %llu, nr %llu, "
		       "key %s, site %s\n", f->name, got, want,
		       (unsigned long long)entry_calls, (unsigned long long)entry_nr,
		       entry_ret - 2 == key ? "ok" : "wrong",
		       site == p.start + p.sys_off ? "ok" : "wrong");
		return 1;
	}
	printf("ok %s: getpid %ld through a %d-byte trampoline\n", f->name, got, n);
	return 0;
}

int main(void)
{
#if !defined(__x86_64__)
	printf("x86_64 only\n");
	return 77;
#else
	static const struct fn fns[] = {
		{ "wrapper", { 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xc3 }, 8,
		  { .len = 7, .sys_off = 5 }, 0, 0, 0, 0 },
		{ "rip", { 0x8b, 0x05, 0, 0, 0, 0, 0x0f, 0x05, 0xc3 }, 9,
		  { .len = 8, .sys_off = 6, .n_rip = 1, .rip = { 2 } }, 2, 6, SYS_getpid, 0 },
		{ "after", { 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0x48, 0x83, 0xf8, 0xfc, 0xc3 }, 12,
		  { .start = 5, .len = 6, .sys_off = 0 }, 0, 0, 0, 0 },
		{ "rip_after", { 0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0x03, 0x05, 0, 0, 0, 0, 0xc3 }, 14,
		  { .start = 5, .len = 8, .sys_off = 0, .n_rip = 1, .rip = { 4 } }, 9, 13, 1000, 1000 },
	};
	/* the functions' page (writable and executable for the test), the
	 * trampolines' page placed within reach of it by kp_patch_tramp_area */
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	long tramp = kp_patch_tramp_area(test_sys, (uint64_t)(uintptr_t)code,
				      (uint64_t)(uintptr_t)code + 4096, 4096);
	if (tramp < 0) {
		printf("no trampoline area near %p: %s\n", (void *)code, strerror((int)-tramp));
		return 1;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (run(&fns[i], code, (uint8_t *)tramp))
			return 1;
	/* and near libc's code, where the shim will need one */
	uint64_t g = (uint64_t)(uintptr_t)getpid;
	long near = kp_patch_tramp_area(test_sys, g, g + 1, 1 << 20);
	int64_t dist = near < 0 ? 0 : (int64_t)((uint64_t)near - g);
	if (near < 0 || dist <= -(1ll << 31) || dist + (1 << 20) >= (1ll << 31)) {
		printf("area near libc: %s\n", near < 0 ? strerror((int)-near) : "out of reach");
		return 1;
	}
	printf("ok area: 1 MiB at %+lld MiB from libc's getpid\n", (long long)(dist >> 20));
	return 0;
#endif
}
