/* SPDX-License-Identifier: MIT */
/*
 * Syscall number <-> name tables per architecture. The tables themselves
 * are generated at build time from the kernel headers
 * (scripts/gen-syscalls.sh); this is the lookup over them. Supporting a
 * new architecture is one more generated table here.
 */
#ifndef KPROF_SYSCALLS_H
#define KPROF_SYSCALLS_H

#include <stdbool.h>
#include <stdint.h>

/* Larger than any syscall number of a supported architecture. */
#define KP_SYSCALL_MAX 512

struct kp_syscall_entry {
	unsigned nr;
	const char *name;
};

extern const struct kp_syscall_entry kp_syscalls_x86_64[];
extern const unsigned kp_syscalls_x86_64_count;
extern const struct kp_syscall_entry kp_syscalls_aarch64[];
extern const unsigned kp_syscalls_aarch64_count;

/* "x86_64" or "aarch64": the architecture this binary was built for. */
const char *kp_host_arch(void);
/* Name of syscall nr on arch (NULL arch = host); NULL when unknown. */
const char *kp_syscall_name(const char *arch, unsigned nr);
/* Number of the named syscall on arch (NULL = host); -1 when unknown. */
int kp_syscall_nr(const char *arch, const char *name);
/*
 * Whether the first argument of syscall nr on arch (NULL = host) is a
 * descriptor whose kind the `kinds` breakdown counts (read, write, sendto,
 * close, fcntl, ...). Linear in the names list: callers on a hot path
 * build a bitmap once.
 */
bool kp_syscall_fd_arg(const char *arch, unsigned nr);
/*
 * The same as a bitmap of nbits syscall numbers (bit nr of bits[nr / 64]),
 * in microseconds: for a hot path's table built at start-up.
 */
void kp_syscall_fd_arg_bits(const char *arch, uint64_t *bits, unsigned nbits);
/*
 * Whether an EAGAIN (EWOULDBLOCK) of syscall nr on arch (NULL = host) means
 * the call would have blocked, and so counts as a retry: read, write,
 * recvmsg, accept4, flock, fcntl, semop, ... but not futex (the word had
 * changed), clone (a limit) and the like, whose EAGAIN is an error.
 * Linear in the list; hot paths use the bitmap below.
 */
bool kp_syscall_would_block(const char *arch, unsigned nr);
/* kp_syscall_would_block as a bitmap, like kp_syscall_fd_arg_bits. */
void kp_syscall_would_block_bits(const char *arch, uint64_t *bits, unsigned nbits);
/* The list itself (names as on x86_64), for tests and documentation. */
const char *const *kp_syscall_would_block_names(unsigned *count);
/* The table of arch and its length; NULL for an unknown architecture. */
const struct kp_syscall_entry *kp_syscall_table(const char *arch,
						unsigned *count);

#endif
