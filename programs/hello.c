/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest child the process benchmarks start. It prints one
 * line and exits 0. Two optional arguments serve the measurements:
 *   --since-ns=T --report-fd=FD  write (now - T) as 8 bytes (int64 ns,
 *                                CLOCK_MONOTONIC) to FD: the cost of execve
 *                                up to main, T read by the parent just before
 *                                it called execve
 *   --expect-argv-bytes=N        exit 3 unless the argv strings, each with
 *                                its NUL, add up to exactly N bytes (the
 *                                large-spawn blob arrived whole)
 * Any other argument is ignored (the blob's filler).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t since_ns = -1;
	int report_fd = -1;
	long long expect_argv_bytes = -1;

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--since-ns=", 11) == 0)
			since_ns = strtoll(argv[i] + 11, NULL, 10);
		else if (strncmp(argv[i], "--report-fd=", 12) == 0)
			report_fd = atoi(argv[i] + 12);
		else if (strncmp(argv[i], "--expect-argv-bytes=", 20) == 0)
			expect_argv_bytes = strtoll(argv[i] + 20, NULL, 10);
	}
	if (expect_argv_bytes >= 0) {
		long long total = 0;
		for (int i = 0; i < argc; i++)
			total += (long long)strlen(argv[i]) + 1;
		if (total != expect_argv_bytes)
			return 3;
	}
	if (since_ns >= 0 && report_fd >= 0) {
		int64_t delta = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - since_ns;
		if (write(report_fd, &delta, sizeof(delta)) != (ssize_t)sizeof(delta))
			return 4;
	}
	static const char line[] = "hello, world\n";
	if (write(STDOUT_FILENO, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1))
		return 5;
	return 0;
}
