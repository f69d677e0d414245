/* SPDX-License-Identifier: MIT */
/*
 * What the shim knows of its process (core/base.c): the configuration read
 * from KPROF_* once at start-up and the process's identity and stream,
 * both filled by lifecycle/init.c; stderr and debug messages; small /proc
 * reads through raw syscalls.
 */
#ifndef KPROF_CORE_BASE_H
#define KPROF_CORE_BASE_H

#include "raw.h"

/* An address mixed for the open-addressed site tables (rewrite's,
 * dispatch's). */
static inline uint64_t kp_addr_hash(uint64_t a)
{
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ULL;
	return a ^ (a >> 32);
}

#define KP_PATH_MAX 4096
#define KP_MAX_PENDING_FORKS 64

struct kp_config {
	char out[KP_PATH_MAX];
	char fallback_dir[KP_PATH_MAX]; /* for unix: when nobody listens */
	uint64_t interval_ms;
	bool events;
	bool gzip;
	bool debug;
	/* KPROF_EXEC_SITES: the parent's site cache, for a child image whose
	 * environment names no home (rewrite/scan.c) */
	char exec_sites[KP_PATH_MAX];
	/* valgrind runs the program (its vgpreload_core library in
	 * LD_PRELOAD): no output process (valgrind refuses its clone), no
	 * rewritten code or dispatch (it emulates the CPU and the syscalls) */
	bool valgrind;
};

struct kp_proc {
	uint64_t pid; /* 0: not known yet (fork child, resolved at flush) */
	uint64_t ppid;
	uint64_t stream;
	uint64_t parent_stream;
	const char *origin;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	bool header_written;
	bool maps_written;
	uint64_t seq; /* records numbered so far in this stream */
	int64_t exit_status;
	bool have_exit_status;
	bool final_done;
	char exe[KP_PATH_MAX];
	/* the main thread's name at the stream's start, as the kernel set it
	 * (the exec'd file's base name, 15 bytes) or the fork inherited it */
	char comm[16];
	char cmdline[8192];
	const char *argv[256];
	unsigned argc;
	char host[65];
	char kernel[65];
	uint32_t pending_fork_child[KP_MAX_PENDING_FORKS];
	const char *pending_fork_how[KP_MAX_PENDING_FORKS];
	/* the child's exec that cannot load the shim: why (NULL: none) and path */
	const char *pending_fork_why[KP_MAX_PENDING_FORKS];
	char pending_fork_path[KP_MAX_PENDING_FORKS][256];
	uint32_t pending_forks;
	uint32_t lost_forks;
	bool shared_vm; /* a clone(CLONE_VM) child without CLONE_VFORK was made */
	/* the header's hook_mode and coverage: set when the front end chose
	 * the mode (rewrite/setup.c's kp_rw_start) */
	const char *hook_mode;
	const char *coverage;
	/* the exec record's not_entered: why the image being exec'd cannot
	 * load the shim (lifecycle/entry_check.c); NULL: it can, or unknown */
	const char *exec_not_entered;
	/* the header's untraced_parent: the parent meant to be traced that is
	 * not (lifecycle/entry_check.c); pid 0: none said */
	uint64_t untraced_parent_pid;
	const char *untraced_parent_why;
	char untraced_parent_exe[KP_PATH_MAX];
	/* the header's runtime: "go" for a Go program; NULL: not said */
	const char *runtime;
	/* the header's site_cache_note (rewrite/scan.c); NULL: none */
	const char *site_cache_note;
};
extern struct kp_config kp_config;
extern struct kp_proc kp_proc;
/* base.c: KPROF_DEBUG=1 messages, stderr, /proc reads */
void kp_debug(const char *msg);
void kp_write_stderr(const char *s);
int kp_read_pids(uint64_t *pid, uint64_t *ppid);
/* A fork child's pid, and its ppid when its parent did not know its own
 * (a fork child's fork before that one's first batch). */
void kp_learn_pids(void);
/* base.c: a whole small file (raw syscalls), its length or -errno; one
 * line of it, without the newline, "" if unreadable. */
ssize_t kp_read_file(const char *path, char *buf, size_t cap);
void kp_read_line_file(const char *path, char *dst, size_t cap);
/* /proc/PID/stat into buf (NUL-terminated): its length, or -errno (base.c). */
long kp_read_proc_stat(uint64_t pid, char *buf, size_t cap);

/* A process the program made that the shim must not trace as its own
 * (the output process, a CLONE_VM child without its own stack). */
bool kp_foreign_process(void);

#endif
