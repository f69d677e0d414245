/* SPDX-License-Identifier: MIT */
/*
 * Three callers of getppid() whose symbols carry mangled names, as a C++
 * or Rust compiler would write them (asm labels: no C++ or Rust compiler
 * needed): kprof_test::Caller::call(int) (C++), demo::caller (Rust's
 * legacy mangling, with its hash), demo::caller_v0 (Rust's v0) and
 * kprof_test::xxx...x() (a C++ name of 300 x, longer than a site's name
 * may be). Each is called with its own count: argv[1] times 1, 2, 3, 4.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * One caller: fn, whose symbol is asm_name; noinline and a use of the
 * result keep each call in its function.
 */
#define CALLER(fn, asm_name)                                                   \
	long fn(long n) __asm__(asm_name);                                     \
	__attribute__((noinline)) long fn(long n)                              \
	{                                                                      \
		long s = 0;                                                    \
		for (long i = 0; i < n; i++)                                   \
			s += getppid();                                        \
		return s;                                                      \
	}

CALLER(cxx_caller, "_ZN10kprof_test6Caller4callEi")
CALLER(rust_legacy_caller, "_ZN4demo6caller17h0123456789abcdefE")
CALLER(rust_v0_caller, "_RNvC4demo9caller_v0")
CALLER(long_caller, "_ZN10kprof_test300xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxEl")

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	long s = cxx_caller(n) + rust_legacy_caller(2 * n) + rust_v0_caller(3 * n) +
		 long_caller(4 * n);
	printf("calls=%ld %s\n", 10 * n, s ? "ok" : "no parent");
	return 0;
}
