/* SPDX-License-Identifier: MIT */
/*
 * The syscall column of symbols/hooks.def names x86_64's calls. On an architecture
 * with only the generic syscall table (aarch64), glibc implements those
 * functions with the *at / newer call below; this table is all a port of
 * symbols/hooks.def needs. (symbols/vfork.S is per architecture too.)
 */
#ifndef KPROF_ARCH_SYSCALLS_H
#define KPROF_ARCH_SYSCALLS_H

#include <sys/syscall.h>

#ifndef SYS_open
#define SYS_open SYS_openat
#endif
#ifndef SYS_creat
#define SYS_creat SYS_openat
#endif
#ifndef SYS_pipe
#define SYS_pipe SYS_pipe2
#endif
#ifndef SYS_poll
#define SYS_poll SYS_ppoll
#endif
#ifndef SYS_select
#define SYS_select SYS_pselect6
#endif
#ifndef SYS_access
#define SYS_access SYS_faccessat
#endif
#ifndef SYS_dup2
#define SYS_dup2 SYS_dup3
#endif
#ifndef SYS_epoll_wait
#define SYS_epoll_wait SYS_epoll_pwait
#endif
#ifndef SYS_epoll_create
#define SYS_epoll_create SYS_epoll_create1
#endif
#ifndef SYS_rename
#define SYS_rename SYS_renameat
#endif
#ifndef SYS_mkdir
#define SYS_mkdir SYS_mkdirat
#endif
#ifndef SYS_rmdir
#define SYS_rmdir SYS_unlinkat
#endif
#ifndef SYS_unlink
#define SYS_unlink SYS_unlinkat
#endif
#ifndef SYS_link
#define SYS_link SYS_linkat
#endif
#ifndef SYS_symlink
#define SYS_symlink SYS_symlinkat
#endif
#ifndef SYS_readlink
#define SYS_readlink SYS_readlinkat
#endif
#ifndef SYS_chmod
#define SYS_chmod SYS_fchmodat
#endif
#ifndef SYS_chown
#define SYS_chown SYS_fchownat
#endif
#ifndef SYS_lchown
#define SYS_lchown SYS_fchownat
#endif
#ifndef SYS_vfork
#define SYS_vfork SYS_clone
#endif

#endif
