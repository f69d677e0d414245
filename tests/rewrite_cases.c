/* SPDX-License-Identifier: MIT */
/*
 * The cases rewrite mode must get right (tests/t_rewrite_*.sh), one per
 * subcommand; each prints what it did and exits 0 only when the program
 * itself saw nothing wrong (under the shim or not):
 *
 *   vfork N      N times a vfork made with the program's own `syscall`
 *                instruction (glibc's way: the return address in a
 *                register), the child burning stack before it execs
 *                /bin/true; the parent checks that its frame survived
 *   syscall_vfork N  the same through libc's syscall(SYS_vfork)
 *   sigreturn N  N signals handled (each ends in rt_sigreturn), with the
 *                interrupted loop's registers checked after each
 *   jit N        code written at run time and made executable with
 *                mprotect: N calls each of getppid in one page, getuid in
 *                a `syscall` straddling two pages made executable
 *                together, getgid straddling two pages made executable
 *                one after the other
 *   straddle N   N calls of a getppid whose `syscall` straddles two pages
 *                of the executable's own text
 *   dlopen LIB N dlopen LIB after start and call its read_zero(N): N reads
 *   dlclose LIB N the same, then dlclose LIB (unmapped before the exit)
 *                of /dev/zero made with LIB's own `syscall` instruction
 *   cancel N     N threads cancelled (pthread_cancel) while blocked in
 *                read(): glibc unwinds them from inside the syscall, so
 *                through the shim's hook
 *   nullcall     call a NULL function pointer with the syscall number
 *                register form (`call *%rax`): must die of SIGSEGV, page 0
 *                mapped or not
 *   stalesite    a getppid made executable at run time and called by a
 *                thread that then waits without a syscall (the hook
 *                remembers that thread's site); the code is unmapped and
 *                new code mapped at the same address with `call *%rax`
 *                where the syscall was, which the thread then calls: no
 *                longer a site, so it must die of SIGSEGV
 *   exit HOW     end the process: exit (stdio still buffered), _exit,
 *                exit_group made with the program's own instruction, or
 *                thread (every thread leaves with the exit syscall, the
 *                last one included)
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "rewrite_cases: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ---- vfork with the program's own syscall instruction ---- */

pid_t own_vfork(void);
__asm__(".text\n"
	".globl own_vfork\n"
	".type own_vfork, @function\n"
	"own_vfork:\n"
	"	popq %rdi\n" /* the return address, kept in a register */
	"	movl $58, %eax\n"
	"	syscall\n"
	"	pushq %rdi\n"
	"	ret\n"
	".size own_vfork, .-own_vfork\n");

/* Overwrites a good deal of the stack below the caller (the vfork child). */
static __attribute__((noinline)) int burn(int depth)
{
	volatile char pad[512];
	memset((char *)pad, depth, sizeof(pad));
	return depth ? burn(depth - 1) + pad[7] : pad[3];
}

static int case_vfork(long n, bool through_libc)
{
	extern char **environ;
	for (long i = 0; i < n; i++) {
		volatile uint64_t canary[8];
		for (int k = 0; k < 8; k++)
			canary[k] = 0x5eed0000 + (uint64_t)k * 977 + (uint64_t)i;
		pid_t pid = through_libc ? (pid_t)syscall(SYS_vfork) : own_vfork();
		if (pid == 0) {
			burn(16);
			char *argv[] = { "/bin/true", NULL };
			execve("/bin/true", argv, environ);
			_exit(127);
		}
		if (pid < 0)
			die("vfork");
		for (int k = 0; k < 8; k++)
			if (canary[k] != 0x5eed0000 + (uint64_t)k * 977 + (uint64_t)i) {
				fprintf(stderr, "rewrite_cases: vfork %ld: the parent's frame was overwritten\n", i);
				return 1;
			}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			die("the vfork child");
	}
	printf("%s=%ld ok\n", through_libc ? "syscall_vfork" : "vfork", n);
	return 0;
}

/* ---- signals ---- */

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static int case_sigreturn(long n)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	for (long i = 0; i < n; i++) {
		/* values in callee-saved registers across the signal */
		register uint64_t a __asm__("r12") = 0x1111 + (uint64_t)i;
		register uint64_t b __asm__("r13") = 0x2222 + (uint64_t)i;
		register uint64_t c __asm__("r14") = 0x3333 + (uint64_t)i;
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c));
		if (raise(SIGUSR1))
			die("raise");
		__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c));
		if (a != 0x1111 + (uint64_t)i || b != 0x2222 + (uint64_t)i ||
		    c != 0x3333 + (uint64_t)i) {
			fprintf(stderr, "rewrite_cases: registers changed across a signal\n");
			return 1;
		}
	}
	if (handled != n) {
		fprintf(stderr, "rewrite_cases: %d of %ld signals handled\n", (int)handled, n);
		return 1;
	}
	printf("signals=%ld ok\n", n);
	return 0;
}

/* ---- code made executable at run time ---- */

/* mov $nr, %eax; syscall; ret */
static void put_call(uint8_t *p, int nr)
{
	p[0] = 0xb8;
	memcpy(p + 1, &nr, 4);
	p[5] = 0x0f;
	p[6] = 0x05;
	p[7] = 0xc3;
}

typedef long (*fn0)(void);

static void expect(const char *what, long got, long want)
{
	if (got != want) {
		fprintf(stderr, "rewrite_cases: %s returned %ld, expected %ld\n", what, got, want);
		exit(1);
	}
}

static int case_jit(long n)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, 5 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	/* page 0: getppid; pages 1-2: getuid with the syscall at the end of 1;
	 * pages 3-4: getgid the same, made executable page by page */
	put_call(mem + 64, SYS_getppid);
	put_call(mem + 2 * page - 6, SYS_getuid);
	put_call(mem + 4 * page - 6, SYS_getgid);
	if (mprotect(mem, page, PROT_READ | PROT_EXEC) ||
	    mprotect(mem + page, 2 * page, PROT_READ | PROT_EXEC) ||
	    mprotect(mem + 3 * page, page, PROT_READ | PROT_EXEC) ||
	    mprotect(mem + 4 * page, page, PROT_READ | PROT_EXEC))
		die("mprotect");
	fn0 f_ppid = (fn0)(void *)(mem + 64);
	fn0 f_uid = (fn0)(void *)(mem + 2 * page - 6);
	fn0 f_gid = (fn0)(void *)(mem + 4 * page - 6);
	for (long i = 0; i < n; i++) {
		expect("jit getppid", f_ppid(), getppid());
		expect("jit getuid", f_uid(), (long)getuid());
		expect("jit getgid", f_gid(), (long)getgid());
	}
	printf("jit=%ld ok\n", n);
	return 0;
}

/*
 * Two threads: the caller makes one call from the site and then spins
 * without a syscall (its last site stays the one the hook remembers),
 * while the main thread unmaps the code and maps the new one.
 */
static uint8_t *stale_mem;
static int stale_step; /* 1: first call done; 2: new code in place */

static void *stale_caller(void *arg)
{
	(void)arg;
	fn0 f = (fn0)(void *)(stale_mem + 64);
	long want = getppid();
	expect("getppid before the unmap", f(), want);
	__atomic_store_n(&stale_step, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&stale_step, __ATOMIC_ACQUIRE) != 2)
		__builtin_ia32_pause();
	f(); /* faults: nothing is mapped at 110, or page 0 refuses */
	__atomic_store_n(&stale_step, 3, __ATOMIC_RELEASE);
	return NULL;
}

static int case_stale_site(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	put_call(mem + 64, SYS_getppid);
	if (mprotect(mem, page, PROT_READ | PROT_EXEC))
		die("mprotect");
	stale_mem = mem;
	pthread_t t;
	if (pthread_create(&t, NULL, stale_caller, NULL))
		die("pthread_create");
	while (__atomic_load_n(&stale_step, __ATOMIC_ACQUIRE) != 1)
		__builtin_ia32_pause();
	if (munmap(mem, page))
		die("munmap");
	uint8_t *again = mmap(mem, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (again != mem)
		die("mmap at the same address");
	put_call(mem + 64, SYS_getppid);
	mem[69] = 0xff; /* call *%rax where the syscall was: to address 110 */
	mem[70] = 0xd0;
	if (mprotect(mem, page, PROT_READ | PROT_EXEC))
		die("mprotect");
	printf("calling the new code\n");
	fflush(stdout);
	__atomic_store_n(&stale_step, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("stale site: the call returned\n");
	return 1;
}

/* ---- a syscall instruction across two pages of the text ---- */

long straddling_getppid(void);
__asm__(".text\n"
	".p2align 12\n"
	"straddle_pad:\n"
	".skip 4090, 0x90\n"
	".globl straddling_getppid\n"
	".type straddling_getppid, @function\n"
	"straddling_getppid:\n"
	"	movl $110, %eax\n" /* 5 bytes: the syscall is at page + 4095 */
	"	syscall\n"
	"	ret\n"
	".size straddling_getppid, .-straddling_getppid\n");

static int case_straddle(long n)
{
	uintptr_t at = (uintptr_t)straddling_getppid + 5;
	if ((at & 4095) != 4095) {
		fprintf(stderr, "rewrite_cases: the syscall is at page offset %lu\n",
			(unsigned long)(at & 4095));
		return 1;
	}
	for (long i = 0; i < n; i++)
		expect("straddling getppid", straddling_getppid(), getppid());
	printf("straddle=%ld ok\n", n);
	return 0;
}

/* ---- dlopen ---- */

static int case_dlopen(const char *lib, long n, bool unload)
{
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "rewrite_cases: %s\n", dlerror());
		return 2;
	}
	long (*read_zero)(long) = (long (*)(long))dlsym(h, "read_zero");
	if (!read_zero) {
		fprintf(stderr, "rewrite_cases: read_zero: %s\n", dlerror());
		return 2;
	}
	long got = read_zero(n);
	if (got != n) {
		fprintf(stderr, "rewrite_cases: read_zero made %ld reads, not %ld\n", got, n);
		return 1;
	}
	if (unload && dlclose(h)) {
		fprintf(stderr, "rewrite_cases: dlclose: %s\n", dlerror());
		return 2;
	}
	printf("dlopen_reads=%ld ok\n", n);
	return 0;
}

/* ---- cancellation inside a blocked call ---- */

static void *blocked_reader(void *arg)
{
	int fd = *(int *)arg;
	char c;
	if (read(fd, &c, 1) >= 0)
		fprintf(stderr, "rewrite_cases: the cancelled read returned\n");
	return NULL;
}

static int case_cancel(long n)
{
	for (long i = 0; i < n; i++) {
		int fds[2];
		if (pipe(fds))
			die("pipe");
		pthread_t t;
		if (pthread_create(&t, NULL, blocked_reader, &fds[0]))
			die("pthread_create");
		usleep(20000); /* in read() by now, most likely */
		void *ret;
		if (pthread_cancel(t) || pthread_join(t, &ret))
			die("pthread_cancel");
		if (ret != PTHREAD_CANCELED) {
			fprintf(stderr, "rewrite_cases: thread %ld was not cancelled\n", i);
			return 1;
		}
		close(fds[0]);
		close(fds[1]);
	}
	printf("cancelled=%ld ok\n", n);
	return 0;
}

/* ---- the ways out ---- */

static void *leave_thread(void *arg)
{
	(void)arg;
	getppid();
	syscall(SYS_exit, 0);
	return NULL;
}

static int case_exit(const char *how)
{
	/* buffered by stdio: written by exit's flush, after the destructors */
	printf("exit=%s", how);
	if (strcmp(how, "exit") == 0)
		exit(3);
	printf("\n");
	fflush(stdout);
	if (strcmp(how, "_exit") == 0)
		_exit(4);
	if (strcmp(how, "exit_group") == 0) {
		register long nr __asm__("rax") = SYS_exit_group;
		register long code __asm__("rdi") = 5;
		__asm__ volatile("syscall" : : "r"(nr), "r"(code) : "rcx", "r11", "memory");
	}
	if (strcmp(how, "thread") == 0) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, leave_thread, NULL))
				die("pthread_create");
		/* the main thread leaves too: the last one out ends the process */
		syscall(SYS_exit, 0);
	}
	fprintf(stderr, "rewrite_cases: exit how?\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		goto usage;
	long n = argc > 2 ? strtol(argv[argc - 1], NULL, 10) : 0;
	setvbuf(stdout, NULL, _IOFBF, 4096);
	int r;
	if (strcmp(argv[1], "vfork") == 0)
		r = case_vfork(n, false);
	else if (strcmp(argv[1], "syscall_vfork") == 0)
		r = case_vfork(n, true);
	else if (strcmp(argv[1], "sigreturn") == 0)
		r = case_sigreturn(n);
	else if (strcmp(argv[1], "jit") == 0)
		r = case_jit(n);
	else if (strcmp(argv[1], "straddle") == 0)
		r = case_straddle(n);
	else if (strcmp(argv[1], "cancel") == 0)
		r = case_cancel(n);
	else if (strcmp(argv[1], "nullcall") == 0) {
		fflush(stdout);
		void (*volatile fp)(void) = NULL;
		register void (*target)(void) __asm__("rax") = fp;
		__asm__ volatile("call *%%rax" : : "r"(target) : "memory");
		r = 1; /* not reached */
	}
	else if (strcmp(argv[1], "stalesite") == 0)
		r = case_stale_site();
	else if (strcmp(argv[1], "dlopen") == 0 && argc == 4)
		r = case_dlopen(argv[2], n, false);
	else if (strcmp(argv[1], "dlclose") == 0 && argc == 4)
		r = case_dlopen(argv[2], n, true);
	else if (strcmp(argv[1], "exit") == 0 && argc == 3)
		r = case_exit(argv[2]);
	else
		goto usage;
	fflush(stdout);
	return r;
usage:
	fprintf(stderr, "usage: rewrite_cases vfork|syscall_vfork|sigreturn|jit|straddle|cancel N | "
			"dlopen|dlclose LIB N | exit exit|_exit|exit_group|thread\n");
	return 2;
}
