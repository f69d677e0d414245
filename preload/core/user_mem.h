/* SPDX-License-Identifier: MIT */
/*
 * Reading and writing the program's memory at addresses a call was given
 * and only the kernel would otherwise have touched: they may be bad (the
 * program then gets EFAULT from the kernel, and must not get a SIGSEGV or
 * SIGBUS from the shim instead). Everything goes through
 * process_vm_readv/process_vm_writev on our own process, which walk the
 * page tables as the kernel's own copies do and answer EFAULT where a load
 * would fault. Only the files that need it include it.
 */
#ifndef KPROF_USER_MEM_H
#define KPROF_USER_MEM_H

#include <stddef.h>
#include <sys/uio.h>

/*
 * The n iovecs of the program's memory remote[] into local[] (same
 * lengths): the bytes read, which stop at the first iovec that cannot be
 * read whole when each lies within one 4 KiB page (else anywhere inside
 * the first that cannot).
 */
long kp_user_readv(const struct iovec *local, const struct iovec *remote, size_t n);

/* n bytes at the program's address p into buf: 0, or -EFAULT. */
int kp_user_read(const void *p, void *buf, size_t n);

/* n bytes of buf to the program's address p: 0, or -EFAULT. */
int kp_user_write(void *p, const void *buf, size_t n);

/*
 * The string at p into buf (cap > 0 bytes, always NUL-terminated): its
 * length; -EFAULT when a byte before its NUL cannot be read, and
 * -ENAMETOOLONG when it does not fit, buf then holding what was read.
 */
long kp_user_string(const char *p, char *buf, size_t cap);

/* From now on copies are made directly, without process_vm_readv/writev. */
void kp_user_mem_direct(void);

#endif
