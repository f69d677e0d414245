/* SPDX-License-Identifier: MIT */
/*
 * 1000 getppid() through libc and 500 through an inline syscall
 * instruction that no libc symbol sees: a shim counts 1000, the kernel
 * 1500. Prints getppid_libc=1000 getppid_raw=500.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static long raw_getppid(void)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_getppid;
	register long x0 __asm__("x0");
	__asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
#endif
}

int main(void)
{
	long first = getppid(), sum = first;
	for (int i = 1; i < 1000; i++)
		sum += getppid();
	for (int i = 0; i < 500; i++)
		sum -= raw_getppid();
	printf("getppid_libc=1000 getppid_raw=500 same=%s\n", sum == 500L * first ? "yes" : "no");
	return 0;
}
