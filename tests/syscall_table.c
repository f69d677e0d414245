/* SPDX-License-Identifier: MIT */
/*
 * Checks the generated syscall table against the running kernel: each
 * side-effect-free syscall is invoked through the number the table gives
 * for its name, and the result must equal the libc function's. Also checks
 * the table against <sys/syscall.h> for the same names and that the
 * number<->name lookup round-trips for every entry.
 */
#include <stdbool.h>
#include <stdint.h>
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
	/*
	 * The would-block list (retries): every name is a syscall of x86_64
	 * (the list's own naming), and of aarch64 but open; futex, clone and
	 * io_uring_enter are not in it; the bitmap says what the lookup says.
	 */
	unsigned nwb;
	const char *const *wb = kp_syscall_would_block_names(&nwb);
	for (unsigned a_i = 0; a_i < 2; a_i++) {
		unsigned missing = 0, differ = 0, set = 0;
		uint64_t bits[KP_SYSCALL_MAX / 64];
		kp_syscall_would_block_bits(arches[a_i], bits, KP_SYSCALL_MAX);
		for (unsigned i = 0; i < nwb; i++)
			if (kp_syscall_nr(arches[a_i], wb[i]) < 0 &&
			    !(a_i == 1 && strcmp(wb[i], "open") == 0)) {
				printf("FAIL %s: would-block name %s unknown\n", arches[a_i], wb[i]);
				missing++;
			}
		for (unsigned nr = 0; nr < KP_SYSCALL_MAX; nr++) {
			bool bit = (bits[nr / 64] >> (nr % 64)) & 1;
			set += bit;
			differ += bit != kp_syscall_would_block(arches[a_i], nr);
		}
		printf("%s: %u would-block syscalls of %u names, %u unknown, %u differ\n",
		       arches[a_i], set, nwb, missing, differ);
		failures += missing || differ || set + (a_i == 1) != nwb;
		const char *no[] = { "futex", "clone", "clone3", "io_uring_enter", "mmap" };
		for (unsigned i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
			char what[64];
			snprintf(what, sizeof(what), "%s %s would-block", arches[a_i], no[i]);
			check(what, 0, kp_syscall_would_block(arches[a_i],
							      (unsigned)kp_syscall_nr(arches[a_i], no[i])));
		}
		const char *yes[] = { "read", "accept4", "flock", "fcntl", "semop", "recvmsg" };
		for (unsigned i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			char what[64];
			snprintf(what, sizeof(what), "%s %s would-block", arches[a_i], yes[i]);
			check(what, 1, kp_syscall_would_block(arches[a_i],
							       (unsigned)kp_syscall_nr(arches[a_i], yes[i])));
		}
	}
	/* aarch64 is a different numbering: spot-check two well-known ones */
	check("aarch64 openat", 56, kp_syscall_nr("aarch64", "openat"));
	check("aarch64 getppid", 173, kp_syscall_nr("aarch64", "getppid"));
	check("x86_64 getppid", 110, kp_syscall_nr("x86_64", "getppid"));
	return failures ? 1 : 0;
}
