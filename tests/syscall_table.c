/*
 * Checks the generated syscall table against the running kernel: each
 * side-effect-free syscall is invoked through the number the table gives
 * for its name, and the result must equal the libc function's. Also checks
 * the table against <sys/syscall.h> for the same names and that the
 * number<->name lookup round-trips for every entry.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "syscalls.h"

static int failures;

static void check(const char *what, long want, long got)
{
	if (want != got) {
		printf("FAIL %s: expected %ld, got %ld\n", what, want, got);
		failures++;
	} else {
		printf("ok %s = %ld\n", what, got);
	}
}

static long by_name(const char *name)
{
	int nr = kp_syscall_nr(NULL, name);
	if (nr < 0) {
		printf("FAIL %s: not in the %s table\n", name, kp_host_arch());
		failures++;
		return -1;
	}
	return syscall(nr);
}

int main(void)
{
	check("getpid", getpid(), by_name("getpid"));
	check("getppid", getppid(), by_name("getppid"));
	check("gettid", gettid(), by_name("gettid"));
	check("getuid", getuid(), by_name("getuid"));
	check("geteuid", geteuid(), by_name("geteuid"));
	check("getgid", getgid(), by_name("getgid"));
	check("getegid", getegid(), by_name("getegid"));
	check("getpgid(0)", getpgid(0), syscall(kp_syscall_nr(NULL, "getpgid"), 0));
	check("getsid(0)", getsid(0), syscall(kp_syscall_nr(NULL, "getsid"), 0));
	check("sched_yield", 0, by_name("sched_yield"));

	struct utsname a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	uname(&a);
	syscall(kp_syscall_nr(NULL, "uname"), &b);
	check("uname release matches", 0, strcmp(a.release, b.release));

	/* the table agrees with libc's SYS_ constants */
	check("SYS_read", SYS_read, kp_syscall_nr(NULL, "read"));
	check("SYS_openat", SYS_openat, kp_syscall_nr(NULL, "openat"));
	check("SYS_futex", SYS_futex, kp_syscall_nr(NULL, "futex"));
	check("SYS_clone3", SYS_clone3, kp_syscall_nr(NULL, "clone3"));
	check("SYS_epoll_pwait", SYS_epoll_pwait, kp_syscall_nr(NULL, "epoll_pwait"));
	check("SYS_io_uring_enter", SYS_io_uring_enter, kp_syscall_nr(NULL, "io_uring_enter"));

	/* every entry round-trips, on every architecture's table */
	const char *arches[] = { "x86_64", "aarch64" };
	for (unsigned a_i = 0; a_i < 2; a_i++) {
		unsigned count, bad = 0;
		const struct kp_syscall_entry *t = kp_syscall_table(arches[a_i], &count);
		for (unsigned i = 0; i < count; i++) {
			const char *n = kp_syscall_name(arches[a_i], t[i].nr);
			if (!n || kp_syscall_nr(arches[a_i], t[i].name) != (int)t[i].nr ||
			    t[i].nr >= KP_SYSCALL_MAX)
				bad++;
		}
		printf("%s: %u entries, %u bad\n", arches[a_i], count, bad);
		if (count < 250 || bad)
			failures++;
	}
	/* aarch64 is a different numbering: spot-check two well-known ones */
	check("aarch64 openat", 56, kp_syscall_nr("aarch64", "openat"));
	check("aarch64 getppid", 173, kp_syscall_nr("aarch64", "getppid"));
	check("x86_64 getppid", 110, kp_syscall_nr("x86_64", "getppid"));
	return failures ? 1 : 0;
}
