/* SPDX-License-Identifier: MIT */
/*
 * A process image's start and its fork children: configuration from the
 * environment (read once), what the header says about the process, the
 * clock, the thread keys and the trace opened (kp_setup), and the fork
 * child's new stream (kp_after_fork_child). symbols/start.c runs kp_setup
 * once per image, from the constructor or whichever hook comes first,
 * then starts rewrite mode and calls kp_setup_done; if setup fails the
 * shim goes passive (pass-through, no output) and says so only with
 * KPROF_DEBUG=1.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/utsname.h>

#include "lifecycle.h"
#include "trace_dest.h"

extern char **environ;

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Unique per process image without a syscall (getrandom would be counted). */
uint64_t kp_new_stream_id(uint64_t mix)
{
	uint64_t x = mix64(kp_rdtsc() ^ mix64(kp_mono_ns()) ^ mix64(mix) ^
			   (uint64_t)(uintptr_t)&mix);
	return x ? x : 1;
}

static uint64_t parse_u64(const char *s, bool *ok)
{
	uint64_t v = 0;
	*ok = *s != 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			*ok = false;
			return 0;
		}
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* Takes *e out of environ (the entries after it move up). */
static void env_remove(char **e)
{
	do {
		e[0] = e[1];
	} while (*e++);
}

static bool env_true(const char *v)
{
	return v[0] && strcmp(v, "0") != 0 && strcmp(v, "no") != 0 &&
	       strcmp(v, "false") != 0;
}

/*
 * Reads KPROF_* once. KPROF_EXEC_STREAM (set by our execve hook: pid,
 * stream, output process and ppid of the image that exec'd), KPROF_EXEC_CLOCK and KPROF_EXEC_SITES
 * (the parent's clock calibration and site cache) are removed so the
 * program never sees them.
 */
static void read_config(uint64_t *exec_pid, uint64_t *exec_stream, uint64_t *exec_outproc,
			uint64_t *exec_ppid, uint64_t *parent_mark)
{
	copy_str(kp_config.out, sizeof(kp_config.out), KP_DEST_FALLBACK_DIR);
	kp_config.interval_ms = 1000;
	if (!environ)
		return;
	for (char **e = environ; *e;) {
		const char *s = *e;
		bool ok;
		if (strncmp(s, "KPROF_OUT=", 10) == 0 && s[10]) {
			copy_str(kp_config.out, sizeof(kp_config.out), s + 10);
		} else if (strncmp(s, "KPROF_INTERVAL_MS=", 18) == 0) {
			uint64_t v = parse_u64(s + 18, &ok);
			if (ok)
				kp_config.interval_ms = v;
		} else if (strncmp(s, "KPROF_EVENTS=", 13) == 0) {
			kp_config.events = env_true(s + 13);
		} else if (strncmp(s, "KPROF_GZIP=", 11) == 0) {
			kp_config.gzip = env_true(s + 11);
		} else if (strncmp(s, "LD_PRELOAD=", 11) == 0) {
			/* valgrind puts its core preload there for its client */
			kp_config.valgrind = strstr(s + 11, "/vgpreload_core-") != NULL;
		} else if (strncmp(s, "KPROF_DEBUG=", 12) == 0) {
			kp_config.debug = env_true(s + 12);
		} else if (strncmp(s, "KPROF_CLOCK=", 12) == 0) {
			kp_clock_config(s + 12);
		} else if (strncmp(s, "KPROF_EXEC_CLOCK=", 17) == 0) {
			/* the parent's TSC calibration (core/clock.c): ours, not the program's */
			kp_clock_inherit(s + 17);
			env_remove(e);
			continue;
		} else if (strncmp(s, "KPROF_PARENT=", 13) == 0) {
			/* the traced parent's pid (lifecycle/child_env.c): ours too */
			*parent_mark = parse_u64(s + 13, &ok);
			env_remove(e);
			continue;
		} else if (strncmp(s, "KPROF_EXEC_SITES=", 17) == 0) {
			/* the parent's site cache (rewrite/scan.c): ours too */
			copy_str(kp_config.exec_sites, sizeof(kp_config.exec_sites), s + 17);
			env_remove(e);
			continue;
		} else if (strncmp(s, "KPROF_EXEC_STREAM=", 18) == 0) {
			const char *colon = strchr(s + 18, ':');
			if (colon) {
				char pid[24];
				size_t n = (size_t)(colon - (s + 18));
				if (n < sizeof(pid)) {
					memcpy(pid, s + 18, n);
					pid[n] = 0;
					*exec_pid = parse_u64(pid, &ok);
					/* stream[:pid of the image's output process] */
					char stream[24];
					const char *p2 = strchr(colon + 1, ':');
					size_t m = p2 ? (size_t)(p2 - (colon + 1)) : strlen(colon + 1);
					if (m < sizeof(stream)) {
						memcpy(stream, colon + 1, m);
						stream[m] = 0;
						*exec_stream = parse_u64(stream, &ok);
					}
					/* [:<output process>[:<ppid>]] */
					if (p2) {
						const char *p3 = strchr(p2 + 1, ':');
						char num[24];
						size_t k = p3 ? (size_t)(p3 - (p2 + 1)) : strlen(p2 + 1);
						if (k < sizeof(num)) {
							memcpy(num, p2 + 1, k);
							num[k] = 0;
							*exec_outproc = parse_u64(num, &ok);
						}
						if (p3)
							*exec_ppid = parse_u64(p3 + 1, &ok);
					}
				}
			}
			env_remove(e);
			continue;
		}
		e++;
	}
}

static int start_argc = -1;
static char **start_argv;

void kp_start_args(int argc, char **argv)
{
	start_argc = argc;
	start_argv = argv;
}

/* The constructor's argv as /proc/self/cmdline has it (NUL after each). */
static ssize_t args_of_constructor(char *buf, size_t cap)
{
	if (start_argc < 0 || !start_argv)
		return -ENOENT;
	size_t len = 0;
	for (int i = 0; i < start_argc && start_argv[i]; i++) {
		size_t n = strlen(start_argv[i]) + 1;
		if (len + n > cap)
			n = cap - len;
		memcpy(buf + len, start_argv[i], n);
		len += n;
		if (len == cap)
			break;
	}
	return (ssize_t)len;
}

/* The kernel's name for the new image's thread: the base name of the file
 * given to execve (AT_EXECFN), cut to 15 bytes: no call. */
static void comm_of_exec(void)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	kp_proc.comm[0] = 0;
	if (!fn)
		return;
	const char *base = strrchr(fn, '/');
	base = base ? base + 1 : fn;
	size_t n = 0;
	for (; n < sizeof(kp_proc.comm) - 1 && base[n]; n++)
		kp_proc.comm[n] = base[n];
	kp_proc.comm[n] = 0;
}

static void read_process_info(void)
{
	comm_of_exec();
	long n = kp_raw(SYS_readlink, "/proc/self/exe", kp_proc.exe, sizeof(kp_proc.exe) - 1);
	kp_proc.exe[n > 0 ? n : 0] = 0;
	/* from the constructor's arguments when it started us: no call */
	ssize_t len = args_of_constructor(kp_proc.cmdline, sizeof(kp_proc.cmdline) - 1);
	if (len < 0)
		len = kp_read_file("/proc/self/cmdline", kp_proc.cmdline,
				   sizeof(kp_proc.cmdline) - 1);
	if (len < 0)
		len = 0;
	kp_proc.cmdline[len] = 0;
	kp_proc.argc = 0;
	for (ssize_t i = 0; i < len && kp_proc.argc < 256;) {
		kp_proc.argv[kp_proc.argc++] = &kp_proc.cmdline[i];
		i += (ssize_t)strlen(&kp_proc.cmdline[i]) + 1;
	}
	/* one call for both (the /proc/sys files took 8) */
	struct utsname u;
	if (kp_raw(SYS_uname, &u) == 0) {
		copy_str(kp_proc.host, sizeof(kp_proc.host), u.nodename);
		copy_str(kp_proc.kernel, sizeof(kp_proc.kernel), u.release);
	}
}

/* A relative KPROF_OUT is relative to the working directory at start. */
static void absolutize(char *path, size_t cap, const char *cwd)
{
	if (path[0] == '/' || !cwd[0] || strlen(cwd) + strlen(path) + 2 > cap)
		return;
	char tmp[KP_PATH_MAX];
	copy_str(tmp, sizeof(tmp), path);
	copy_str(path, cap, cwd);
	if (strcmp(cwd, "/") != 0)
		strcat(path, "/");
	strcat(path, tmp);
}

static void absolutize_out(void)
{
	char cwd[KP_PATH_MAX];
	long n = kp_raw(SYS_getcwd, cwd, sizeof(cwd));
	if (n <= 0)
		cwd[0] = 0;
	copy_str(kp_config.fallback_dir, sizeof(kp_config.fallback_dir),
		 KP_DEST_FALLBACK_DIR);
	absolutize(kp_config.fallback_dir, sizeof(kp_config.fallback_dir), cwd);
	if (strncmp(kp_config.out, "unix:", 5) != 0)
		absolutize(kp_config.out, sizeof(kp_config.out), cwd);
	kp_child_env_init(cwd);
}

bool kp_fork_reset_done;

bool kp_after_fork_child(void)
{
	if (kp_state != KP_ACTIVE || (kp_tls_flags & KP_TLS_VFORK_CHILD))
		return false;
	if (kp_fork_reset_done) {
		/* rewrite mode's syscall hook did it already in this child */
		kp_fork_reset_done = false;
		return false;
	}
	uint64_t old_stream = kp_proc.stream;
	kp_proc.ppid = kp_proc.pid;
	kp_proc.pid = 0; /* learnt at the first flush: no syscall at fork time */
	kp_proc.parent_stream = old_stream;
	kp_proc.stream = kp_new_stream_id(old_stream);
	kp_proc.origin = "fork";
	/* the child's thread has the forking thread's name */
	if (kp_self && kp_self->name[0])
		memcpy(kp_proc.comm, kp_self->name, sizeof(kp_proc.comm));
	kp_proc.start_mono_ns = kp_mono_ns();
	kp_proc.start_real_ns = kp_real_ns();
	kp_own_startup_ns = kp_proc.start_mono_ns;
	kp_proc.header_written = false;
	kp_proc.maps_written = false;
	kp_proc.seq = 0;
	kp_proc.final_done = false;
	kp_proc.have_exit_status = false;
	kp_proc.exit_status = -1;
	kp_proc.pending_forks = 0;
	kp_proc.lost_forks = 0;
	kp_proc.shared_vm = false;
	kp_proc.untraced_parent_pid = 0; /* its parent is the traced image */
	kp_threads_after_fork();
	kp_own_reset();
	kp_output_after_fork();
	kp_flush_after_fork();
	kp_reset_deadline();
	return true;
}

int kp_setup(void)
{
	uint64_t exec_pid = 0, exec_stream = 0, exec_outproc = 0, exec_ppid = 0, parent_mark = 0;
	read_config(&exec_pid, &exec_stream, &exec_outproc, &exec_ppid, &parent_mark);
	if (getauxval(AT_SECURE)) {
		/* setuid/setgid/capabilities: never write files for such a program */
		kp_debug("secure-execution mode (setuid, setgid or file capabilities): not tracing");
		return -EPERM;
	}
	kp_events_enabled = kp_config.events;
	kp_phase("config");
	int err = kp_clock_init();
	kp_phase("clock");
	if (err)
		return err;
	/* an exec'd image's ppid is its exec'ing image's (no getppid: a call
	 * the kernel would count in the program's pid) */
	kp_proc.pid = (uint64_t)kp_raw0(SYS_getpid);
	if (exec_pid && exec_pid == kp_proc.pid && exec_ppid)
		kp_proc.ppid = exec_ppid;
	else
		kp_read_pids(&kp_proc.pid, &kp_proc.ppid);
	read_process_info();
	absolutize_out();
	kp_phase("process");
	kp_proc.stream = kp_new_stream_id(kp_proc.pid);
	kp_proc.exit_status = -1;
	if (exec_pid && exec_pid == kp_proc.pid) {
		kp_proc.origin = "exec";
		kp_proc.parent_stream = exec_stream;
		/* the image before us left its output process, exiting, as our child */
		if (exec_outproc)
			kp_outproc_reap_later((int)exec_outproc);
	} else {
		kp_proc.origin = "start";
		/* a parent meant to be traced that is not (a static program) */
		kp_parent_check(parent_mark);
		kp_phase("parent");
	}
	kp_proc.runtime = kp_exe_runtime();
	err = kp_thread_key_init();
	if (err)
		return err;
	/* which EAGAINs are retries (common/syscalls.c); before any call counts */
	kp_syscall_would_block_bits(NULL, kp_would_block_bits, KP_SYSCALL_MAX);
	/* the descriptors open now, before the trace's own */
	kp_fd_kinds_init();
	kp_phase("descriptors");
	kp_reset_deadline();
	/* the core's deadline and the output process call the flush */
	kp_flush_init();
	/* zlib only for a gzip trace, and now: before rewrite mode's scan */
	if (kp_output_gzip_wanted())
		kp_zlib_load();
	/*
	 * Open the trace now, before main (in the output process, whose
	 * descriptor table is its own: the program's limits and closes never
	 * reach it). A failure here is retried at the first flush.
	 */
	kp_output_open();
	return 0;
}

/* The stream starts where the calls start being seen: the start-up's own
 * calls are those before this moment. */
void kp_setup_done(void)
{
	kp_proc.start_mono_ns = kp_mono_ns();
	kp_proc.start_real_ns = kp_real_ns();
	kp_own_mark_start();
}
