/* SPDX-License-Identifier: MIT */
/*
 * Patch mode's dispatch path, case by case; each prints what it saw, and a
 * run under the shim must print the same as a plain run.
 *
 *   dlopen LIB N   dlopen LIB (tests/rewrite/unpatchable.S) after start and
 *                  make N getppid through its unpatchable syscall
 *   blocked LIB N  all signals blocked (SIGSYS included) around N calls of
 *                  the unpatchable site; the mask read back; a SIGSYS sent
 *                  meanwhile waits for the unblock, then runs its handler
 *   handler LIB N  the program's own SIGSYS handler: read back by
 *                  sigaction, run by kill (si_code SI_USER, si_pid ours),
 *                  reset by SA_RESETHAND; N calls of the site in between
 *   default        a child whose SIGSYS is SIG_DFL dies of SIGSYS
 *   jit N          code written at run time (an anonymous mapping made
 *                  executable): N getppid from its own syscall
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t handled, handled_code, handled_pid_ok;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	handled++;
	handled_code = si->si_code;
	handled_pid_ok = sig == SIGSYS && si->si_pid == getpid();
}

typedef long (*call_fn)(void);

static call_fn load(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "sud_cases: %s\n", dlerror());
		exit(1);
	}
	call_fn f = (call_fn)(long)dlsym(h, "unpatchable_getppid");
	if (!f) {
		fprintf(stderr, "sud_cases: no unpatchable_getppid in %s\n", lib);
		exit(1);
	}
	return f;
}

static int calls(call_fn f, long n)
{
	long ppid = getppid(), bad = 0;
	for (long i = 0; i < n; i++)
		bad += f() != ppid;
	return bad == 0;
}

static int case_blocked(const char *lib, long n)
{
	call_fn f = load(lib);
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	sigaction(SIGSYS, &sa, NULL);
	sigset_t all, now, pending;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	int ok = calls(f, n);
	kill(getpid(), SIGSYS);
	int early = handled;
	ok &= calls(f, n);
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("calls_ok=%d sigsys_blocked=%d sigint_blocked=%d handled_while_blocked=%d\n", ok,
	       sigismember(&now, SIGSYS), sigismember(&now, SIGINT), early);
	sigpending(&pending);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("after_unblock handled=%d code_user=%d pid_ok=%d sigsys_blocked=%d\n", handled,
	       handled_code == SI_USER, handled_pid_ok, sigismember(&now, SIGSYS));
	return 0;
}

static int case_handler(const char *lib, long n)
{
	call_fn f = load(lib);
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO | SA_RESETHAND },
			 old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGSYS);
	sigaddset(&sa.sa_mask, SIGUSR1);
	sigaction(SIGSYS, &sa, NULL);
	sigaction(SIGSYS, NULL, &old);
	printf("read_back handler_ours=%d siginfo=%d resethand=%d mask_sigsys=%d mask_usr1=%d\n",
	       old.sa_sigaction == on_sigsys, !!(old.sa_flags & SA_SIGINFO),
	       !!(old.sa_flags & SA_RESETHAND), sigismember(&old.sa_mask, SIGSYS),
	       sigismember(&old.sa_mask, SIGUSR1));
	int ok = calls(f, n);
	kill(getpid(), SIGSYS);
	sigaction(SIGSYS, NULL, &old);
	printf("calls_ok=%d handled=%d code_user=%d pid_ok=%d reset_to_default=%d\n",
	       ok & calls(f, n), handled, handled_code == SI_USER, handled_pid_ok,
	       old.sa_handler == SIG_DFL);
	/* another signal's sa_mask with SIGSYS in it reads back the same */
	struct sigaction u = { .sa_handler = SIG_IGN };
	sigfillset(&u.sa_mask);
	sigaction(SIGUSR2, &u, NULL);
	sigaction(SIGUSR2, NULL, &old);
	printf("usr2_mask_sigsys=%d\n", sigismember(&old.sa_mask, SIGSYS));
	return 0;
}

static int case_default(void)
{
	pid_t p = fork();
	if (p == 0) {
		kill(getpid(), SIGSYS);
		_exit(0);
	}
	int ws = 0;
	waitpid(p, &ws, 0);
	printf("child_signaled=%d signal_sigsys=%d\n", WIFSIGNALED(ws),
	       WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS);
	return 0;
}

static int case_jit(long n)
{
	static const unsigned char code[] = { 0xb8, 110, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	printf("jit_calls_ok=%d\n", calls((call_fn)(long)p, n));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *c = argc > 1 ? argv[1] : "";
	long n = argc > 3 ? atol(argv[3]) : 0;
	if (!strcmp(c, "dlopen") && argc > 3) {
		int ok = calls(load(argv[2]), n);
		printf("unpatchable_calls_ok=%d\n", ok);
		return !ok;
	}
	if (!strcmp(c, "blocked") && argc > 3)
		return case_blocked(argv[2], n);
	if (!strcmp(c, "handler") && argc > 3)
		return case_handler(argv[2], n);
	if (!strcmp(c, "default"))
		return case_default();
	if (!strcmp(c, "jit") && argc > 2)
		return case_jit(atol(argv[2]));
	fprintf(stderr, "usage: sud_cases dlopen|blocked|handler LIB N | default | jit N\n");
	return 2;
}
