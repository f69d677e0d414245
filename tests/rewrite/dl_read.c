/* SPDX-License-Identifier: MIT */
/*
 * A library for tests/t_rewrite_dlopen.sh, loaded with dlopen after the
 * program started: read_zero(n) reads /dev/zero n times with this
 * library's own `syscall` instruction, which only a rescan of code mapped
 * after start can see. Built by the test (cc -shared).
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

long read_zero(long n)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long done = 0;
	for (long i = 0; i < n; i++) {
		char c;
		long r;
		__asm__ volatile("syscall"
				 : "=a"(r)
				 : "a"((long)SYS_read), "D"((long)fd), "S"(&c), "d"(1L)
				 : "rcx", "r11", "memory");
		done += r == 1;
	}
	close(fd);
	return done;
}
