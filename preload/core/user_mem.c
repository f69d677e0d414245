/* SPDX-License-Identifier: MIT */
/*
 * The program's memory read and written the way the kernel does it
 * (user_mem.h): process_vm_readv and process_vm_writev on our own pid.
 * No ptrace check applies to one's own thread group, so the calls always
 * work unless a seccomp filter refuses them (ENOSYS, EPERM); then the
 * copies are made directly, as the shim did before it had these, and a
 * bad pointer faults as it would have.
 */
#include <string.h>

#include "raw.h"
#include "user_mem.h"

/*
 * A piece never crosses a 4 KiB boundary: a page is readable whole or not
 * at all (any page size is a multiple of 4 KiB), so a short transfer ends
 * exactly where the first piece that cannot be read begins.
 */
#define PIECE 4096UL
#define PIECES_PER_CALL 16
#define IOVECS_PER_CALL 1024 /* the kernel's UIO_MAXIOV */

static bool vm_calls_refused;

/* A seccomp filter is about to go in (the shim goes passive): such a
 * filter may kill for these calls rather than refuse them. */
void kp_user_mem_direct(void)
{
	__atomic_store_n(&vm_calls_refused, true, __ATOMIC_RELAXED);
}

static long vm_call(long nr, const struct iovec *local, const struct iovec *remote, size_t n)
{
	/* a vfork child's calls are not this stream's: left out of `own` */
	if (kp_tls_flags & KP_TLS_VFORK_CHILD) {
		long pid = kp_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
		return kp_raw_syscall6(nr, pid, (long)local, (long)n, (long)remote, (long)n, 0);
	}
	return kp_raw(nr, kp_raw0(SYS_getpid), local, n, remote, n, 0);
}

/* Some of the pieces, writing or reading: the bytes moved. */
static size_t move(bool write, const struct iovec *local, const struct iovec *remote, size_t n)
{
	size_t want = 0;
	for (size_t i = 0; i < n; i++)
		want += local[i].iov_len;
	if (!__atomic_load_n(&vm_calls_refused, __ATOMIC_RELAXED)) {
		long r = vm_call(write ? SYS_process_vm_writev : SYS_process_vm_readv, local,
				 remote, n);
		if (r != -ENOSYS && r != -EPERM)
			return r > 0 ? (size_t)r : 0;
		__atomic_store_n(&vm_calls_refused, true, __ATOMIC_RELAXED);
	}
	for (size_t i = 0; i < n; i++) {
		if (write)
			memcpy(remote[i].iov_base, local[i].iov_base, local[i].iov_len);
		else
			memcpy(local[i].iov_base, remote[i].iov_base, local[i].iov_len);
	}
	return want;
}

long kp_user_readv(const struct iovec *local, const struct iovec *remote, size_t n)
{
	long total = 0;
	while (n) {
		size_t k = n < IOVECS_PER_CALL ? n : IOVECS_PER_CALL, want = 0;
		for (size_t i = 0; i < k; i++)
			want += local[i].iov_len;
		size_t got = move(false, local, remote, k);
		total += (long)got;
		if (got < want)
			break;
		local += k;
		remote += k;
		n -= k;
	}
	return total;
}

/* n bytes between buf and the program's address p, in whole-page pieces. */
static int transfer(bool write, uintptr_t p, char *buf, size_t n)
{
	while (n) {
		struct iovec local[PIECES_PER_CALL], remote[PIECES_PER_CALL];
		size_t k = 0, want = 0;
		while (k < PIECES_PER_CALL && want < n) {
			size_t len = PIECE - ((p + want) & (PIECE - 1));
			if (len > n - want)
				len = n - want;
			local[k] = (struct iovec){ buf + want, len };
			remote[k] = (struct iovec){ (void *)(p + want), len };
			want += len;
			k++;
		}
		if (move(write, local, remote, k) != want)
			return -EFAULT;
		p += want;
		buf += want;
		n -= want;
	}
	return 0;
}

int kp_user_read(const void *p, void *buf, size_t n)
{
	return transfer(false, (uintptr_t)p, buf, n);
}

int kp_user_write(void *p, const void *buf, size_t n)
{
	return transfer(true, (uintptr_t)p, (char *)(uintptr_t)buf, n);
}

long kp_user_string(const char *p, char *buf, size_t cap)
{
	size_t have = 0;
	while (have + 1 < cap) {
		/* to the end of the page first: most strings end there */
		size_t len = PIECE - (((uintptr_t)p + have) & (PIECE - 1));
		if (len > cap - 1 - have)
			len = cap - 1 - have;
		if (kp_user_read(p + have, buf + have, len)) {
			buf[have] = 0;
			return -EFAULT;
		}
		const char *nul = memchr(buf + have, 0, len);
		if (nul)
			return nul - buf;
		have += len;
	}
	buf[have] = 0;
	return -ENAMETOOLONG;
}
