/* SPDX-License-Identifier: MIT */
/*
 * kprof: the front door. `kprof -- CMD` runs CMD under the shim (auto
 * mode), `kprof --bpf -- CMD` under kbpf-trace, `kprof -p PID` attaches
 * kbpf-trace to running processes; when CMD ends (or on Ctrl-C) the
 * profile is printed on stderr, strace -c's way (kanalyze
 * --format=summary), and kprof exits with CMD's status. The traces go to
 * a fresh temporary directory removed afterwards unless -o keeps them.
 * kprof finds libkprof.so, kanalyze and kbpf-trace beside itself (the
 * build directory) or in its installed places (KPROF_LIBDIR).
 */
#include <elf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "path_search.h"
#include "version.h"

#ifndef KPROF_LIBDIR
#define KPROF_LIBDIR "/usr/local/lib/kprof"
#endif

#define EXIT_USAGE 2
#define MAX_PASS 64

struct options {
	const char *out;	/* -o: kept here */
	const char *pids;	/* -p */
	const char *hook;	/* --hook */
	bool bpf, verbose;
	bool by; /* -b: kanalyze's table, which has sections (the summary has none) */
	const char *pass[MAX_PASS]; /* to kanalyze */
	int n_pass;
};

static void usage(FILE *f)
{
	fputs("Usage: kprof [OPTION]... [--] CMD [ARG]...\n"
	      "       kprof [OPTION]... -p PID[,PID]...\n"
	      "Run CMD (or watch running processes) and print, when it ends or on\n"
	      "Ctrl-C, its system calls as strace -c does: % time, seconds, usecs\n"
	      "per call, calls, errors and EAGAIN retries per syscall, the calls that\n"
	      "wait by nature (futex, poll, epoll_wait, ...) in a block of their own.\n"
	      "Every process CMD starts is followed. Exits with CMD's status.\n"
	      "\n"
	      "  -o, --output=DIR      keep the traces in DIR (a new or empty\n"
	      "                        directory; kanalyze DIR reads them again)\n"
	      "  -p, --pid=PID[,PID]   attach to running processes (kbpf-trace, root)\n"
	      "      --bpf             trace CMD from the kernel side (kbpf-trace, root)\n"
	      "                        instead of with the preload shim; chosen by\n"
	      "                        itself for a statically linked CMD as root\n"
	      "      --hook=MODE       the shim's hook mode: auto (default), rewrite,\n"
	      "                        patch or symbols (KPROF_HOOK, docs/SHIM.md)\n"
	      "  -e, --trace=LIST      only these syscalls and %classes (-e trace=LIST\n"
	      "                        as strace writes it; kanalyze --help: classes)\n"
	      "  -S, --sort=KEY        time (default), calls, avg, errors, retries, name\n"
	      "  -f, --follow          accepted for strace's sake: children are always\n"
	      "                        followed\n"
	      "  -v, --verbose         the full footer (descriptors open at exit,\n"
	      "                        coverage, the shim's own calls)\n"
	      "      --exclude-waits   leave the %wait block out\n"
	      "  -n, --top=N, -E, --errors, -P, --percentiles, -b, --by=WHAT,\n"
	      "      --format=FORMAT, --html=FILE, --pprof=FILE, --flame=FILE,\n"
	      "      --timeline=FILE, --sites, --strict\n"
	      "                        as kanalyze's (kanalyze --help)\n"
	      "  -h, --help            this help\n"
	      "  -V, --version         version\n"
	      "\n"
	      "Examples:\n"
	      "  kprof -- node app.js\n"
	      "  kprof -e %file -- make -j2\n"
	      "  kprof -o trace --html=report.html -- python3 script.py\n"
	      "  sudo kprof -p 4433             (Ctrl-C to stop and print)\n"
	      "\n"
	      "Exit status: CMD's (kprof is killed by the same signal when CMD was;\n"
	      "126 CMD cannot be executed, 127 CMD not found, 2 usage error, 1 when\n"
	      "tracing or the profile failed.\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("kprof: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'kprof --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* A tool beside this executable, else in KPROF_LIBDIR (libkprof.so) or
 * on PATH's install place (bin); into buf (PATH_MAX). */
static bool find_tool(const char *name, char buf[PATH_MAX], size_t size)
{
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, size, "%s/%s", self, name);
			if (access(buf, X_OK) == 0 || access(buf, R_OK) == 0)
				return true;
			/* installed: bin/kprof and lib/kprof/libkprof.so */
			char up[PATH_MAX];
			snprintf(up, sizeof(up), "%s/../lib/kprof/%s", self, name);
			if (access(up, R_OK) == 0 && realpath(up, buf))
				return true;
		}
	}
	snprintf(buf, size, "%s/%s", KPROF_LIBDIR, name);
	return access(buf, R_OK) == 0;
}

/* CMD as execvp would find it: into buf; false when not found. */
static bool resolve(const char *cmd, char *buf, size_t size)
{
	if (strchr(cmd, '/')) {
		snprintf(buf, size, "%s", cmd);
		return access(buf, F_OK) == 0;
	}
	const char *path = getenv("PATH");
	return kp_path_search(path ? path : "/usr/local/bin:/usr/bin:/bin", cmd, buf, size) == 0;
}

/* Whether path is an ELF executable without a program interpreter. */
static bool is_static_elf(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf64_Ehdr eh;
	bool stat_elf = false;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 256) {
		stat_elf = true;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph)) {
				stat_elf = false;
				break;
			}
			if (ph.p_type == PT_INTERP)
				stat_elf = false;
		}
	}
	close(fd);
	return stat_elf;
}

static int parse(int argc, char **argv, struct options *o)
{
	enum { OPT_BPF = 256, OPT_HOOK, OPT_PASS_ARG, OPT_PASS_FLAG };
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "bpf", no_argument, NULL, OPT_BPF },
		{ "hook", required_argument, NULL, OPT_HOOK },
		{ "trace", required_argument, NULL, 'e' },
		{ "sort", required_argument, NULL, 'S' },
		{ "follow", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "top", required_argument, NULL, 'n' },
		{ "errors", no_argument, NULL, 'E' },
		{ "percentiles", no_argument, NULL, 'P' },
		{ "by", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, OPT_PASS_ARG },
		{ "html", required_argument, NULL, OPT_PASS_ARG },
		{ "pprof", required_argument, NULL, OPT_PASS_ARG },
		{ "flame", required_argument, NULL, OPT_PASS_ARG },
		{ "timeline", required_argument, NULL, OPT_PASS_ARG },
		{ "exclude-waits", no_argument, NULL, OPT_PASS_FLAG },
		{ "sites", no_argument, NULL, OPT_PASS_FLAG },
		{ "strict", no_argument, NULL, OPT_PASS_FLAG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	static char buf[MAX_PASS][PATH_MAX + 32];
	int c, idx;
	opterr = 0;
	/* '+': options end at CMD, whose own options are its own */
	while ((c = getopt_long(argc, argv, "+:o:p:e:S:fvn:EPb:hV", longs, &idx)) != -1) {
		if (o->n_pass >= MAX_PASS - 2)
			return usage_error("%s", "too many options");
		char *slot = buf[o->n_pass];
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'p': o->pids = optarg; break;
		case OPT_BPF: o->bpf = true; break;
		case OPT_HOOK:
			if (strcmp(optarg, "auto") && strcmp(optarg, "rewrite") &&
			    strcmp(optarg, "patch") && strcmp(optarg, "symbols"))
				return usage_error("--hook: unknown mode '%s' (auto, rewrite, "
						   "patch, symbols)", optarg);
			o->hook = optarg;
			break;
		case 'e': /* strace's -e trace=LIST */
			snprintf(slot, sizeof(buf[0]), "--trace=%s",
				 strncmp(optarg, "trace=", 6) ? optarg : optarg + 6);
			o->pass[o->n_pass++] = slot;
			break;
		case 'S': {
			const char *key = strcmp(optarg, "calls") == 0 ? "count" : optarg;
			snprintf(slot, sizeof(buf[0]), "--sort=%s", key);
			o->pass[o->n_pass++] = slot;
			break;
		}
		case 'f': break;
		case 'v': o->verbose = true; break;
		case 'n': snprintf(slot, sizeof(buf[0]), "--top=%s", optarg);
			o->pass[o->n_pass++] = slot; break;
		case 'E': o->pass[o->n_pass++] = "--errors"; break;
		case 'P': o->pass[o->n_pass++] = "--percentiles"; break;
		case 'b': snprintf(slot, sizeof(buf[0]), "--by=%s", optarg);
			o->by = strcmp(optarg, "syscall") != 0 && strcmp(optarg, "errno") != 0;
			o->pass[o->n_pass++] = slot; break;
		case OPT_PASS_ARG:
			snprintf(slot, sizeof(buf[0]), "--%s=%s", longs[idx].name, optarg);
			o->pass[o->n_pass++] = slot;
			break;
		case OPT_PASS_FLAG:
			snprintf(slot, sizeof(buf[0]), "--%s", longs[idx].name);
			o->pass[o->n_pass++] = slot;
			break;
		case 'h': usage(stdout); return -1;
		case 'V': printf("kprof %s\n", KPROF_VERSION); return -1;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unrecognized option '%s'", argv[optind - 1]);
		}
	}
	if (o->pids && optind < argc)
		return usage_error("%s", "-p and CMD: one or the other");
	if (!o->pids && optind >= argc)
		return usage_error("%s", "no command to run (kprof -- CMD [ARG]...) and no -p PID");
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)type, (void)f;
	return remove(path);
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* Runs argv (argv[0] found on PATH) with extra environment; its wait
 * status, or -1. Ctrl-C and Ctrl-\ reach the child through the terminal,
 * and kprof waits for it; SIGTERM and SIGHUP are passed on. */
static int run(char *const argv[], const char *preload, const char *out, const char *hook,
	       int stdout_to)
{
	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (preload) {
			const char *old = getenv("LD_PRELOAD");
			char *v = NULL;
			if (old && *old && asprintf(&v, "%s:%s", preload, old) > 0)
				setenv("LD_PRELOAD", v, 1);
			else
				setenv("LD_PRELOAD", preload, 1);
			setenv("KPROF_OUT", out, 1);
			if (hook)
				setenv("KPROF_HOOK", hook, 1);
		}
		if (stdout_to >= 0)
			dup2(stdout_to, STDOUT_FILENO);
		execvp(argv[0], argv);
		int e = errno;
		fprintf(stderr, "kprof: cannot run %s: %s\n", argv[0], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	int status;
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	child = 0;
	return status;
}

/* The time, in us, that some runnable task of the machine waited for a
 * CPU (PSI, /proc/pressure/cpu "some total="); -1 where the kernel has
 * no PSI. */
static long long cpu_wait_us(void)
{
	FILE *f = fopen("/proc/pressure/cpu", "re");
	if (!f)
		return -1;
	char line[256];
	long long total = -1;
	while (fgets(line, sizeof(line), f)) {
		const char *t = strstr(line, "total=");
		if (strncmp(line, "some ", 5) == 0 && t)
			total = strtoll(t + 6, NULL, 10);
	}
	fclose(f);
	return total;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	char **cmd = argv + optind;

	char shim[PATH_MAX], kanalyze[PATH_MAX], kbpf[PATH_MAX], path[PATH_MAX];
	if (!find_tool("kanalyze", kanalyze, sizeof(kanalyze))) {
		fputs("kprof: kanalyze not found beside kprof nor in " KPROF_LIBDIR "\n", stderr);
		return 1;
	}
	bool have_kbpf = find_tool("kbpf-trace", kbpf, sizeof(kbpf));
	if (!o.pids && !resolve(cmd[0], path, sizeof(path))) {
		fprintf(stderr, "kprof: %s: command not found\n", cmd[0]);
		return 127;
	}
	if (!o.pids && !o.bpf && is_static_elf(path)) {
		if (geteuid() == 0 && have_kbpf) {
			fprintf(stderr, "kprof: %s is statically linked, which the shim cannot "
				"enter: traced with kbpf-trace\n", path);
			o.bpf = true;
		} else {
			fprintf(stderr, "kprof: %s is statically linked, which the shim cannot "
				"enter, and kbpf-trace needs root: its own calls will not be "
				"in the profile\n", path);
		}
	}
	if ((o.bpf || o.pids) && !have_kbpf) {
		fputs("kprof: kbpf-trace not found beside kprof (make builds it where "
		      "libbpf and clang are installed)\n", stderr);
		return 1;
	}
	if ((o.bpf || o.pids) && geteuid() != 0) {
		fputs("kprof: --bpf and -p need root (kbpf-trace loads BPF programs)\n", stderr);
		return 1;
	}
	if (!o.bpf && !o.pids && !find_tool("libkprof.so", shim, sizeof(shim))) {
		fputs("kprof: libkprof.so not found beside kprof nor in " KPROF_LIBDIR "\n",
		      stderr);
		return 1;
	}

	/* the traces' directory: -o's (new or empty), or a fresh one */
	char dir[PATH_MAX];
	if (o.out) {
		if (mkdir(o.out, 0700) && errno != EEXIST) {
			fprintf(stderr, "kprof: -o %s: %s\n", o.out, strerror(errno));
			return EXIT_USAGE;
		}
		DIR *d = opendir(o.out);
		if (!d) {
			fprintf(stderr, "kprof: -o %s: %s\n", o.out, strerror(errno));
			return EXIT_USAGE;
		}
		struct dirent *e;
		bool empty = true;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty) {
			fprintf(stderr, "kprof: -o %s: the directory holds files; give a new or "
				"empty one (runs in one directory would be merged)\n", o.out);
			return EXIT_USAGE;
		}
		if (!realpath(o.out, dir)) {
			fprintf(stderr, "kprof: -o %s: %s\n", o.out, strerror(errno));
			return EXIT_USAGE;
		}
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/kprof.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			fprintf(stderr, "kprof: cannot make a directory in %s for the traces: %s "
				"(TMPDIR, or -o DIR)\n", tmp && *tmp ? tmp : "/tmp", strerror(errno));
			return 1;
		}
	}

	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward };
	/* with CMD, Ctrl-C reaches it from the terminal; with -p, kbpf-trace
	 * stops on it (kill -INT to kprof included) */
	sigaction(SIGINT, o.pids ? &fwd : &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	sigaction(SIGTERM, &fwd, NULL);
	sigaction(SIGHUP, &fwd, NULL);

	long long wait0 = cpu_wait_us();
	double t0 = now();
	int status;
	if (o.bpf || o.pids) {
		const char *bargv[8 + 1024];
		int n = 0;
		bargv[n++] = kbpf;
		bargv[n++] = "-o";
		bargv[n++] = dir;
		if (o.pids) {
			bargv[n++] = "-f";
			bargv[n++] = "-p";
			bargv[n++] = o.pids; /* kbpf-trace says when it is attached */
		} else {
			bargv[n++] = "--";
			for (int i = 0; cmd[i] && n < (int)(sizeof(bargv) / sizeof(bargv[0])) - 1; i++)
				bargv[n++] = cmd[i];
		}
		bargv[n] = NULL;
		status = run((char *const *)bargv, NULL, NULL, NULL, -1);
	} else {
		status = run(cmd, shim, dir, o.hook, -1);
	}
	double wall = now() - t0;
	long long wait1 = cpu_wait_us();

	/* the header, then the profile on stderr */
	char what[128];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (status < 0)
		snprintf(what, sizeof(what), "could not be waited for");
	else if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "killed by SIG%s", sigabbrev_np(WTERMSIG(status)) ?
			 sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(what, sizeof(what), "exited with status %d", WEXITSTATUS(status));
	if (o.pids)
		fprintf(stderr, "\nkprof: pid %s and its children, traced for %.3f s (wall "
			"clock) on %ld CPUs\n", o.pids, wall, cpus);
	else
		fprintf(stderr, "\nkprof: %s %s after %.3f s (wall clock) on %ld CPUs\n",
			basename(cmd[0]), what, wall, cpus);
	/* what the times mean on a busy machine: a call's time runs from its
	 * start to its end, a wait for a CPU in between included */
	double waited = wait0 >= 0 && wait1 >= wait0 && wall > 0 ?
				(double)(wait1 - wait0) / 1e6 / wall : 0;
	if (waited >= 0.10)
		fprintf(stderr, "kprof: the CPUs were contended: some runnable task waited for "
			"one %.0f%% of the run (/proc/pressure/cpu); the calls' times include "
			"such waits (kprof --bpf -o DIR, then kanalyze DIR: its OffCPU column "
			"tells them apart)\n",
			100.0 * (waited > 1 ? 1 : waited));

	const char *kargv[MAX_PASS + 8];
	int n = 0;
	kargv[n++] = kanalyze;
	kargv[n++] = o.by ? "--format=table" : "--format=summary";
	if (o.verbose)
		kargv[n++] = "-v";
	for (int i = 0; i < o.n_pass; i++)
		kargv[n++] = o.pass[i];
	kargv[n++] = dir;
	kargv[n] = NULL;
	int ks = run((char *const *)kargv, NULL, NULL, NULL, STDERR_FILENO);
	/* 1: nothing read or written, 2: an option kanalyze refused (5, 3,
	 * 4: printed, with a warning of its own) */
	bool profile_failed = ks < 0 || !WIFEXITED(ks) || WEXITSTATUS(ks) == 1 ||
			      WEXITSTATUS(ks) == 2;

	if (o.out)
		fprintf(stderr, "kprof: the traces are in %s (kanalyze %s)\n", o.out, o.out);
	else if (profile_failed) /* kept: the run is not lost */
		fprintf(stderr, "kprof: no profile printed; the traces are kept in %s "
			"(kanalyze %s)\n", dir, dir);
	else
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);

	if (status >= 0 && WIFSIGNALED(status) && !o.pids) {
		int sig = WTERMSIG(status);
		struct rlimit no_core = { 0, 0 };
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		return 128 + sig;
	}
	if (status < 0)
		return 1;
	if (o.pids)
		return profile_failed ? 1 : 0;
	return WEXITSTATUS(status);
}
