/* SPDX-License-Identifier: MIT */
/*
 * kbpf-trace: options, starting or attaching to the traced processes, and
 * the poll loop that turns kernel data into records until the processes
 * are gone, the duration is over or a signal asks to stop.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kbpf_trace.h"
#include "tracer.h"

#include "path_search.h"
#include "version.h"
#define VERSION KPROF_VERSION
#define EXIT_USAGE 2

int verbose;
static volatile sig_atomic_t stop_signal;
/* The signal was sent to us by a process (kill), not by the terminal. */
static volatile sig_atomic_t stop_signal_sent;
static int signalled;		/* the first stop signal */
static pid_t start_child;	/* the `--` child */

static const char usage_text[] =
"Usage: " TOOL " [OPTION]... -p PID[,PID...]\n"
"       " TOOL " [OPTION]... -- CMD [ARG]...\n"
"       " TOOL " [OPTION]... --comm=NAME[,NAME...] [--metrics=HOST:PORT]\n"
"Trace every syscall of processes from the kernel side (BPF on the raw\n"
"syscall tracepoints) and write kprof records (docs/FORMAT.md) that\n"
"kanalyze reads: per syscall count, time, EAGAIN retries, errors by errno,\n"
"min, max and a latency histogram, and for calls on a descriptor the same\n"
"by its kind (file, pipe, socket, other: kanalyze --by=kind), aggregated\n"
"in the kernel. Sees what an LD_PRELOAD shim cannot: static binaries, Go,\n"
"calls made inside libc.\n"
"\n"
"  -p, --pid=PID[,PID...]   attach to running processes (all their threads)\n"
"      --comm=NAME[,NAME...] trace every process of these names (comm, at most\n"
"                           8 of 15 characters), those running and those that\n"
"                           exec later, with their children, until SIGINT,\n"
"                           SIGTERM or --duration: an exporter's daemon mode\n"
"      --metrics=HOST:PORT  serve the streams to Prometheus at\n"
"                           http://HOST:PORT/metrics through a kanalyze --listen\n"
"                           --metrics of its own (kanalyze --help: the metrics)\n"
"  -f, --follow             with -p: also trace children (fork, clone, exec);\n"
"                           always on with -- CMD\n"
"  -t, --per-thread         aggregate per thread instead of per process\n"
"  -E, --events             also write one event per call (timelines)\n"
"  -s, --stacks             also record the user stack of every call,\n"
"                           counted per stack, and the processes' executable\n"
"                           mappings (`maps` records) to resolve them: for\n"
"                           kanalyze --sites and --folded. Frame-pointer\n"
"                           stacks: code built without frame pointers (Debian's\n"
"                           libc, most distribution libraries) shows only\n"
"                           part of its frames; the caller of a libc syscall\n"
"                           wrapper is recovered from .eh_frame. Costly: reading\n"
"                           the user stack adds ~10 us per call on the machine\n"
"                           this was measured on (see README)\n"
"      --events-buffer=KB   size of the kernel event ring buffer (default 8192)\n"
"      --map-entries=N      entries of the aggregation map (default 65536): one\n"
"                           per process image and syscall (and thread, -t);\n"
"                           the errno map holds N/16, and calls whose entry\n"
"                           cannot be made go to spill maps of N/64 (at\n"
"                           least 4), beyond which they are lost and said\n"
"  -o, --output=PATH        a directory (one file per process image, named\n"
"                           EXE.PID.N.msgpack) or, for a PATH ending in\n"
"                           .msgpack or an existing file, one file holding\n"
"                           every stream (default: kprof-trace); or\n"
"                           unix:SOCKET to stream live to `kanalyze\n"
"                           --listen=unix:SOCKET` (run by root, by this user\n"
"                           or by the user who ran sudo). Without a listener,\n"
"                           or when it goes away or takes nothing for 2 s,\n"
"                           the streams go on in ./kprof-trace/ (one warning;\n"
"                           what the lost connection held: a `drop` record)\n"
"  -i, --interval=MS        write cumulative aggregates every MS milliseconds\n"
"                           (default 1000; 0: only at the end)\n"
"  -d, --duration=SEC       stop tracing after SEC seconds\n"
"      --raw-tp             use raw_tp programs even where tp_btf works\n"
"  -v, --verbose            say what happens on stderr, with libbpf's warnings;\n"
"                           -vvv: libbpf's debug output too\n"
"  -h, --help               show this help\n"
"  -V, --version            show the version\n"
"\n"
"Tracing ends when every traced process is gone, after --duration, or on\n"
"SIGINT/SIGTERM; the final records are always written, and processes that\n"
"are still running go on untouched. With -- CMD, CMD is held before its\n"
"execve until the probes are attached (not one of its syscalls is missed),\n"
"and " TOOL " then waits for CMD and exits with its status. A signal to\n"
TOOL " is passed on to CMD.\n"
"\n"
"EXAMPLES\n"
"  " TOOL " -- ./server --port=8080      trace a command and its children\n"
"  " TOOL " -p 4242 -d 10                attach to 4242 for ten seconds\n"
"  " TOOL " -p 4242,4243 -f -o /tmp/t    several processes and their children\n"
"  " TOOL " -t -E -o run.msgpack -- make  per thread, with events, one file\n"
"  " TOOL " -s -o t -- ./server; kanalyze --folded t | flamegraph.pl > f.svg\n""  " TOOL " -o unix:/tmp/k.sock -- make   live, to kanalyze --listen=unix:/tmp/k.sock\n"
"  kanalyze kprof-trace                     read the trace\n"
"\n"
"EXIT STATUS\n"
"  with -- CMD: CMD's exit status (128+N when killed by signal N);\n"
"  126 CMD cannot be executed, 127 CMD not found;\n"
"  otherwise 0 when tracing ran and the records were written;\n"
"  1 when tracing could not start (privileges, kernel without BTF or\n"
"  tracepoints, no such process, output not writable); 2 on a usage error.\n";

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	stop_signal = sig;
	stop_signal_sent = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, TOOL ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '" TOOL " --help' for more information.\n");
	return EXIT_USAGE;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(struct options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int err = 0;
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long pid;
		if (parse_uint(tok, INT_MAX, &pid) || pid == 0) {
			err = -EINVAL;
			break;
		}
		bool seen = false; /* -p 5,5 and -p 5 -p 5: one process */
		for (unsigned i = 0; i < o->n_pids && !seen; i++)
			seen = o->pids[i] == (pid_t)pid;
		if (seen)
			continue;
		pid_t *np = realloc(o->pids, (o->n_pids + 1) * sizeof(*np));
		if (!np) {
			err = -ENOMEM;
			break;
		}
		o->pids = np;
		o->pids[o->n_pids++] = (pid_t)pid;
	}
	free(copy);
	return err;
}

/* --comm: the running processes of those names join o->pids. */
static int pids_of_comms(struct options *o)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *e;
	pid_t self = getpid();
	while ((e = readdir(d))) {
		char *end, path[64], comm[KBPF_COMM_LEN + 2];
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		bool got = fgets(comm, sizeof(comm), f) != NULL;
		fclose(f);
		if (!got)
			continue;
		comm[strcspn(comm, "\n")] = 0;
		for (unsigned i = 0; i < o->n_comms; i++)
			if (!strcmp(comm, o->comms[i])) {
				char pidtext[24];
				snprintf(pidtext, sizeof(pidtext), "%ld", pid);
				if (parse_pids(o, pidtext)) {
					closedir(d);
					return -ENOMEM;
				}
				break;
			}
	}
	closedir(d);
	info(1, "--comm: %u running processes of those names\n", o->n_pids);
	return 0;
}

/*
 * --metrics: a kanalyze beside us (the one next to this program, else
 * the one on PATH) listening on a socket of ours and serving Prometheus;
 * the streams go to it. It ends with us (SIGTERM), printing its profile.
 */
static pid_t exporter;
static char exporter_sock[108];
static void stop_exporter(void);

static int start_exporter(struct options *o)
{
	char self[PATH_MAX], kanalyze[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(kanalyze, sizeof(kanalyze), "%s/kanalyze", self);
	bool beside = slash && access(kanalyze, X_OK) == 0;
	snprintf(exporter_sock, sizeof(exporter_sock), "/tmp/kbpf-trace-metrics.%d.sock",
		 (int)getpid());
	char listen[160], metrics[160];
	snprintf(listen, sizeof(listen), "--listen=unix:%s", exporter_sock);
	snprintf(metrics, sizeof(metrics), "--metrics=%s", o->metrics);
	char *argv[] = { "kanalyze", listen, metrics, "--refresh=0", NULL };
	exporter = fork();
	if (exporter < 0)
		return -errno;
	if (exporter == 0) {
		/* a terminal's ^C is ours: the exporter ends after our last record */
		setpgid(0, 0);
		if (beside)
			execv(kanalyze, argv);
		else
			execvp("kanalyze", argv);
		fprintf(stderr, TOOL ": --metrics: cannot run kanalyze: %s\n", strerror(errno));
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		struct stat st;
		if (stat(exporter_sock, &st) == 0 && S_ISSOCK(st.st_mode)) {
			static char out[128];
			snprintf(out, sizeof(out), "unix:%s", exporter_sock);
			o->out_path = out;
			return 0;
		}
		int status;
		if (waitpid(exporter, &status, WNOHANG) == exporter) {
			exporter = 0;
			fprintf(stderr, TOOL ": --metrics: the exporter (kanalyze) ended at start\n");
			return -ECHILD;
		}
		struct timespec ts = { 0, 25000000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, TOOL ": --metrics: the exporter (kanalyze) did not start\n");
	stop_exporter();
	return -ETIMEDOUT;
}

static void stop_exporter(void)
{
	if (exporter <= 0)
		return;
	kill(exporter, SIGTERM);
	while (waitpid(exporter, NULL, 0) < 0 && errno == EINTR)
		;
	exporter = 0;
}

static int parse_comms(struct options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int err = 0;
	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!*tok || strlen(tok) >= KBPF_COMM_LEN || o->n_comms == KBPF_COMMS_MAX) {
			err = -EINVAL;
			break;
		}
		strcpy(o->comms[o->n_comms++], tok);
	}
	free(copy);
	return err;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(struct options *o, int argc, char **argv)
{
	enum { OPT_RAW_TP = 256, OPT_EVENTS_BUFFER, OPT_MAP_ENTRIES, OPT_COMM, OPT_METRICS };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "follow", no_argument, NULL, 'f' },
		{ "per-thread", no_argument, NULL, 't' },
		{ "events", no_argument, NULL, 'E' },
		{ "stacks", no_argument, NULL, 's' },
		{ "events-buffer", required_argument, NULL, OPT_EVENTS_BUFFER },
		{ "map-entries", required_argument, NULL, OPT_MAP_ENTRIES },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "raw-tp", no_argument, NULL, OPT_RAW_TP },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	unsigned long v;
	int c;

	o->interval_ms = 1000;
	o->events_buffer_kb = 8192;
	o->map_entries = 65536;
	o->out_path = "kprof-trace";
	while ((c = getopt_long(argc, argv, "+p:ftEso:i:d:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(o, optarg))
				return usage_error("invalid pid list '%s'", optarg);
			break;
		case 'f':
			o->follow = true;
			break;
		case 't':
			o->per_thread = true;
			break;
		case 'E':
			o->events = true;
			break;
		case 's':
			o->stacks = true;
			break;
		case OPT_EVENTS_BUFFER:
			if (parse_uint(optarg, 1u << 20, &v) || v < 4)
				return usage_error("invalid --events-buffer '%s' (KB, 4 or more)", optarg);
			o->events_buffer_kb = (unsigned)v;
			break;
		case OPT_MAP_ENTRIES:
			if (parse_uint(optarg, 1u << 24, &v) || v < 1)
				return usage_error("invalid --map-entries '%s' (1 to 16777216)", optarg);
			o->map_entries = (unsigned)v;
			break;
		case 'o':
			if (!*optarg || strcmp(optarg, "unix:") == 0)
				return usage_error("empty output path '%s'", optarg);
			o->out_path = optarg;
			break;
		case 'i':
			if (parse_uint(optarg, 86400000, &v))
				return usage_error("invalid interval '%s' (milliseconds)", optarg);
			o->interval_ms = (unsigned)v;
			break;
		case 'd': {
			char *end;
			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration_s > 0))
				return usage_error("invalid duration '%s' (seconds)", optarg);
			break;
		}
		case OPT_RAW_TP:
			o->raw_tp = true;
			break;
		case OPT_COMM:
			if (parse_comms(o, optarg))
				return usage_error("invalid --comm '%s' (at most 8 names of at "
						   "most 15 characters, comma separated)", optarg);
			break;
		case OPT_METRICS:
			o->metrics = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf(TOOL " " VERSION " (libbpf %s)\n", libbpf_version_string());
			return 0;
		default:
			fprintf(stderr, "Try '" TOOL " --help' for more information.\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (!o->cmd && !o->n_pids && !o->n_comms)
		return usage_error("nothing to trace: give -p PID, --comm=NAME or -- CMD%s", "");
	if (o->cmd && o->n_pids)
		return usage_error("-p and a command exclude each other%s", "");
	if (o->n_comms && (o->cmd || o->n_pids))
		return usage_error("--comm traces by name alone: no -p, no command%s", "");
	if (o->metrics && strcmp(o->out_path, "kprof-trace") != 0)
		return usage_error("--metrics sends the streams to its exporter: no -o%s", "");
	if (o->cmd || o->n_comms)
		o->follow = true;
	return -1;
}

/* execvp's search, done before forking so the child makes one execve. */
static char *resolve_command(const char *name, int *status)
{
	struct stat st;
	if (strchr(name, '/')) {
		if (stat(name, &st) != 0) {
			*status = 127;
			fprintf(stderr, TOOL ": %s: %s\n", name, strerror(errno));
			return NULL;
		}
		return realpath(name, NULL);
	}
	const char *path = getenv("PATH");
	char full[PATH_MAX];
	char *found = NULL;
	if (kp_path_search(path && *path ? path : "/usr/local/bin:/usr/bin:/bin", name, full,
			   sizeof(full)) == 0)
		found = realpath(full, NULL);
	if (!found) {
		*status = 127;
		fprintf(stderr, TOOL ": %s: command not found\n", name);
	}
	return found;
}

/*
 * The child blocks on the pipe until its pid is in the traced map, then
 * makes exactly one syscall of its own before CMD: the execve itself,
 * which is counted (in CMD's stream, where it returns).
 */
static pid_t spawn_held(const char *path, char **argv, int *release_fd)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		char go = 0;
		ssize_t n;
		close(fds[1]);
		do
			n = read(fds[0], &go, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1 || go != 'g')
			_exit(127);
		execv(path, argv);
		fprintf(stderr, TOOL ": cannot execute %s: %s\n", path, strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(fds[0]);
	*release_fd = fds[1];
	return pid;
}

static uint64_t monotonic_ms(void)
{
	return now_ns(CLOCK_MONOTONIC) / 1000000u;
}

static void raise_fd_limit(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
}

/* Polls and writes until the end of tracing; returns 0 or -errno. */
static int trace_loop(struct tracer *t, const struct options *o)
{
	uint64_t start = monotonic_ms();
	uint64_t check_every = o->interval_ms ? o->interval_ms : 1000;
	uint64_t next_interval = start + (o->interval_ms ? o->interval_ms : UINT64_MAX / 2);
	uint64_t next_check = start + (check_every < 1000 ? check_every : 1000);
	uint64_t deadline = o->duration_s > 0
				    ? start + (uint64_t)(o->duration_s * 1000)
				    : UINT64_MAX;

	bool grace = false;

	for (;;) {
		uint64_t now = monotonic_ms();
		/*
		 * With -- CMD the first signal goes on to CMD (a terminal's ^C
		 * reached it already) and tracing goes on a little while, to
		 * record how CMD ends; a second signal stops at once.
		 */
		if (stop_signal) {
			if (!o->cmd || grace)
				break;
			grace = true;
			if (stop_signal_sent)
				kill(start_child, stop_signal);
			stop_signal_sent = 0;
			signalled = stop_signal;
			stop_signal = 0;
			if (deadline > now + 1000)
				deadline = now + 1000;
		}
		if (now >= deadline)
			break;
		uint64_t wake = next_interval < next_check ? next_interval : next_check;
		if (deadline < wake)
			wake = deadline;
		int timeout = wake > now ? (int)(wake - now) : 0;
		if (timeout > 100)
			timeout = 100;
		struct pollfd fds[2] = {
			{ .fd = ring_buffer__epoll_fd(t->rings), .events = POLLIN },
			{ .fd = t->event_ring ? ring_buffer__epoll_fd(t->event_ring) : -1,
			  .events = POLLIN },
		};
		if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, TOOL ": waiting for the ring buffers failed: %s\n",
				strerror(errno));
			return -errno;
		}
		int n = ring_buffer__consume(t->rings);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, TOOL ": reading the ring buffers failed: %s\n",
				strerror(-n));
			return n;
		}
		collect_events_poll();
		if (o->stacks)
			mappings_drain();
		collect_process_notes();

		now = monotonic_ms();
		if (now >= next_interval) {
			collect_interval();
			next_interval = now + o->interval_ms;
		}
		if (now >= next_check) {
			collect_check_liveness();
			next_check = now + (check_every < 1000 ? check_every : 1000);
		}
		/* --comm runs like a daemon: until a signal or --duration */
		if (!o->n_comms && images_live() == 0 && !collect_start_pending())
			break;
	}
	return 0;
}

static int child_exit_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WEXITSTATUS(wstatus);
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct tracer t = { 0 };
	char *cmd_path = NULL;
	pid_t child = 0;
	int release_fd = -1;
	int status = 1, err;

	status = parse_options(&o, argc, argv);
	if (status >= 0)
		goto out_options;
	status = 1;

	for (unsigned i = 0; i < o.n_pids; i++) {
		if (!proc_exists(o.pids[i])) {
			fprintf(stderr, TOOL ": no process with pid %d: check the "
				"pid (ps -p %d)\n", (int)o.pids[i], (int)o.pids[i]);
			goto out_options;
		}
	}
	if (o.cmd) {
		cmd_path = resolve_command(o.cmd[0], &status);
		if (!cmd_path)
			goto out_options;
		status = 1;
	}
	raise_fd_limit();

	err = tracer_start(&t, &o);
	if (err)
		goto out_cmd;
	if (o.metrics && (err = start_exporter(&o)))
		goto out_tracer;
	err = output_open(o.out_path);
	if (err)
		goto out_tracer;
	/* before CMD starts: its first mappings are made by its execve */
	if (o.stacks && (err = mappings_start()))
		goto out_output;

	struct collector_config cc = {
		.per_thread = o.per_thread,
		.events = o.events,
		.stacks = o.stacks,
		.interval_ms = o.interval_ms,
	};
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (o.cmd) {
		child = spawn_held(cmd_path, o.cmd, &release_fd);
		if (child < 0) {
			err = child;
			child = 0;
			fprintf(stderr, TOOL ": cannot fork: %s\n", strerror(-err));
			goto out_output;
		}
		start_child = child;
		collector_init(&t, &cc, child);
		err = tracer_add_pid(&t, child, 0, KBPF_PROC_BEFORE_START);
		if (err) {
			fprintf(stderr, TOOL ": cannot add pid %d to the BPF map: %s\n",
				(int)child, strerror(-err));
			goto out_child;
		}
		if (write(release_fd, "g", 1) != 1) {
			err = -errno;
			fprintf(stderr, TOOL ": cannot start %s: %s\n", o.cmd[0],
				strerror(-err));
			goto out_child;
		}
		close(release_fd);
		release_fd = -1;
	} else {
		unsigned n_attached = 0;
		collector_init(&t, &cc, 0);
		/* --comm: the processes of those names that run already */
		if (o.n_comms && (err = pids_of_comms(&o)))
			goto out_images;
		for (unsigned i = 0; i < o.n_pids; i++) {
			/* --comm: one that ended since the scan is not an error */
			if (o.n_comms && !proc_exists(o.pids[i]))
				continue;
			err = tracer_add_pid(&t, o.pids[i], 1, 0);
			/* --comm: exec'd between the program's load and the scan,
			 * traced from that exec (its note is on the ring), once */
			if (err == -EEXIST && o.n_comms)
				continue;
			if (err) {
				fprintf(stderr, TOOL ": cannot add pid %d to the BPF map: %s\n",
					(int)o.pids[i], strerror(-err));
				goto out_images;
			}
			struct image *im = image_new((uint32_t)o.pids[i], 1);
			if (!im) {
				fprintf(stderr, TOOL ": out of memory\n");
				goto out_images;
			}
			im->origin = "attach";
			if (image_fill_from_proc(im)) {
				/* --comm: one that ended since the check is not an error */
				if (o.n_comms) {
					tracer_remove_pid(&t, o.pids[i]);
					image_free(im);
					continue;
				}
				fprintf(stderr, TOOL ": no process with pid %d: it is gone\n",
					(int)o.pids[i]);
				goto out_images;
			}
			n_attached++;
			/* mapped before tracing began: only /proc knows */
			if (o.stacks)
				mappings_read_proc((uint32_t)o.pids[i]);
			image_begin(im, 0);
		}
		/* --comm: ready for the next exec of those names, once */
		if (o.n_comms) {
			fprintf(stderr, TOOL ": tracing processes named ");
			for (unsigned i = 0; i < o.n_comms; i++)
				fprintf(stderr, "%s%s", i ? "," : "", o.comms[i]);
			fprintf(stderr, ": %u running attached, each one exec'd later "
				"from its exec; until %s\n", n_attached,
				o.duration_s ? "--duration ends" : "SIGINT (Ctrl-C) or SIGTERM");
		}
		/* -p: what was attached and how it ends, once */
		if (o.n_pids && !o.n_comms)
			fprintf(stderr, TOOL ": attached to %u process%s%s; tracing until %s\n",
				o.n_pids, o.n_pids == 1 ? "" : "es",
				o.follow ? " and their children" : "",
				o.duration_s ? "--duration ends" :
				o.n_pids == 1 ? "it exits, or SIGINT (Ctrl-C) or SIGTERM" :
						"they exit, or SIGINT (Ctrl-C) or SIGTERM");
	}

	err = trace_loop(&t, &o);
	collect_finish();
	status = err ? 1 : 0;
	struct rusage ru;
	if (verbose && getrusage(RUSAGE_SELF, &ru) == 0)
		info(1, "own CPU time: %.3f s user, %.3f s system\n",
		     ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		     ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	if (stop_signal || signalled)
		info(1, "stopped by signal %d\n", stop_signal ? (int)stop_signal : signalled);

out_images:
	/* Nothing stays attached: the programs go with the skeleton. */
	tracer_stop(&t);
	if (child) {
		int wstatus = 0;
		/* A second signal while CMD still runs: it goes on too. */
		if (stop_signal && stop_signal_sent)
			kill(child, stop_signal);
		while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR)
			;
		status = child_exit_status(wstatus);
		child = 0;
	}
	output_close();
	stacks_free();
	goto out_cmd;

out_child:
	/* The child sees the pipe closed without "g" and exits 127 unexecuted. */
	if (release_fd >= 0)
		close(release_fd);
	waitpid(child, NULL, 0);
out_output:
	output_close();
	stacks_free();
out_tracer:
	tracer_stop(&t);
out_cmd:
	stop_exporter();
	free(cmd_path);
out_options:
	free(o.pids);
	return status;
}
