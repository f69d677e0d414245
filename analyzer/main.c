/* SPDX-License-Identifier: MIT */
/*
 * kanalyze: reads kprof record streams and prints profiles. This file is
 * the command line: options, walking the paths, exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coverage.h"
#include "input.h"
#include "listen.h"
#include "profile.h"
#include "perf_map.h"
#include "symbolize.h"
#include "views.h"
#include "record_reader.h"
#include "report.h"

#ifndef KPROF_VERSION
#define KPROF_VERSION "0.1.0"
#endif

#define EXIT_USAGE 1
#define EXIT_DAMAGED 2
#define MAX_DIR_DEPTH 16

static const char usage_text[] =
"Usage: kanalyze [OPTIONS] PATH...\n"
"Print the syscall profile of kprof traces (libkprof.so, kbpf-trace).\n"
"PATH is a trace file (msgpack, plain or gzip) or a directory: every\n"
"*.msgpack and *.msgpack.gz file under it is read. All processes are merged\n"
"into one profile unless --by says otherwise. For each process stream and\n"
"thread the last aggregate record counts (they are cumulative).\n"
"\n"
"Options:\n"
"  -f, --format=FORMAT   table (default), json, csv or markdown\n"
"  -b, --by=WHAT         syscall (default: one merged table), process (one\n"
"                        table per process image), thread (one per thread),\n"
"                        errno (failed calls by errno and syscall; JSON:\n"
"                        {failed_calls, errnos: [{errno, number, calls,\n"
"                        syscalls: [{name, nr, calls}]}]}), kind (one\n"
"                        table per kind of descriptor the calls used: file\n"
"                        (also directories and devices), pipe (and FIFOs),\n"
"                        socket, other (eventfd, epoll, timerfd, ... and\n"
"                        descriptors that were not open); then 'none', the\n"
"                        syscalls without a descriptor argument, so that the\n"
"                        tables add up to the whole profile (narrow it with\n"
"                        -e); 'unknown' for descriptor calls whose kind the\n"
"                        trace does not say. Kind rows have count, time,\n"
"                        retries and errors, no latency distribution\n"
"  -s, --sort=KEY        time (default), count, avg, retries, errors, name\n"
"  -n, --top=N           only the first N syscalls of each table (0 = all)\n"
"  -E, --errors          add errors and the errno breakdown per syscall\n"
"  -p, --percentiles     add p50/p90/p99/max latency columns (microseconds)\n"
"  -c, --coverage        exactly two PATHs, A and B, traces of the same\n"
"                        workload: per syscall, the calls A saw next to those\n"
"                        B saw and the share (shim vs kbpf-trace: what the\n"
"                        shim cannot see). --format=table, json or markdown.\n"
"                        The filters apply to both; --pid needs processes\n"
"                        in both, so two traces of one run (the shim under\n"
"                        kbpf-trace)\n"
"      --after-start     with --coverage: count only B's calls made while A's\n"
"                        shim was running in the process (after its start-up,\n"
"                        before the exec that replaced the image), and set\n"
"                        aside the calls A's shim made itself (its `own`\n"
"                        records); then account for every call of B in the\n"
"                        images A traced: before A's start-up, in it, A's\n"
"                        own, counted, in progress at an exit, not seen.\n"
"                        B needs events (kbpf-trace --events)\n"
"\n"
"Filters (before any view):\n"
"  -e, --trace=LIST      only these syscalls: names and classes, comma\n"
"                        separated (-e read,write,%net); a leading ! excludes.\n"
"                        Classes: %file %desc %net %process %memory %ipc\n"
"                        %sync %time %signal %wait\n"
"      --pid=LIST        only these processes (pids, comma separated)\n"
"      --exclude-waits   set aside the calls that wait by nature (class %wait:\n"
"                        futex, poll, select, epoll_wait, nanosleep, wait4,\n"
"                        sigsuspend, ...): idle threads waiting fill a\n"
"                        profile's time; every view shows the rest, and the\n"
"                        table says what was set aside (also --listen's)\n"
"      --min-duration=T  only calls that took T or longer (event records;\n"
"                        T in ns, us, ms or s, default unit us)\n"
"      --failed          only calls that failed (event records)\n"
"      --succeeded       only calls that succeeded (event records)\n"
"\n"
"Views:\n"
"      --listen=unix:PATH  accept producers on a unix socket (the shim with\n"
"                        KPROF_OUT=unix:PATH; any producer of the record\n"
"                        stream), merge them live,\n"
"                        print a snapshot every --refresh (top-like on a\n"
"                        terminal, fitted to it: calls/s and ms/s since the\n"
"                        last snapshot, the busiest processes; keys t c a r\n"
"                        e n sort; or plain on a pipe), and the final\n"
"                        profile when every producer\n"
"                        closed (and none came for --linger) or on Ctrl-C\n"
"      --metrics=HOST:PORT  with --listen: serve the merged profile to\n"
"                        Prometheus at http://HOST:PORT/metrics (per process\n"
"                        name and syscall: calls, errors, retries, a latency\n"
"                        histogram), and run until Ctrl-C or SIGTERM\n"
"      --save=DIR        with --listen: also write each connection to DIR as\n"
"                        a trace file\n"
"      --refresh=MS      with --listen: snapshot period (default 1000, 0 = none)\n"
"      --linger=MS       with --listen: wait this long after the last producer\n"
"                        closed for new ones (default 500)\n"
"      --diff            exactly two PATHs, A and B: per-syscall change of\n"
"                        count, time and average; rows that got worse (time\n"
"                        +5% with count +5% or average +25%) are flagged\n"
"      --timeline=FILE   write the event records as Chrome trace JSON\n"
"                        (Perfetto, chrome://tracing); needs KPROF_EVENTS=1\n"
"                        or kbpf-trace --events (without events, or when no\n"
"                        event passes the filters: exit 1, no FILE)\n"
"      --timeline-max=MB  the largest timeline written (default 256, about\n"
"                        what Perfetto's UI opens; 0: no limit): a longer one\n"
"                        is cut at a time, said on stderr\n"
"      --sites           top call sites per syscall (--top of them, default 5,\n"
"                        0 = all); with kbpf-trace --stacks, each stack's\n"
"                        innermost frame outside libc and ld.so\n"
"      --folded          folded stacks for flamegraph.pl (lib`function;...;\n"
"                        syscall count): the shim's site, or kbpf-trace's\n"
"                        whole stacks, root first\n"
"      --debug-dir=DIR   with --sites, --folded, --html, --pprof: look for separate\n"
"                        debug files under DIR/.build-id/ (repeatable, in\n"
"                        order; default /usr/lib/debug)\n"
"      --perf-map-dir=DIR  where the perf maps of JITs are (perf-PID.map, as\n"
"                        node --perf-basic-prof writes them; default /tmp):\n"
"                        code in no file is named from its process's map\n"
"      --interval=MS     time series: per-interval deltas of the periodic\n"
"                        aggregates\n"
"      --blocking        EAGAIN retries per logical operation (a run of EAGAIN\n"
"                        on one thread, syscall and descriptor), time from the\n"
"                        first EAGAIN to success, per descriptor kind and\n"
"                        syscall (per syscall for events without descriptors);\n"
"                        event records; --format=json for scripts\n"
"      --html=FILE       one self-contained HTML report with SVG charts\n"
"      --flame=FILE      a flame graph of the stacks (--folded's) as one SVG:\n"
"                        click a frame to zoom, Search for a regular\n"
"                        expression; widths by time in the calls, or by\n"
"                        calls with --flame-weight=calls\n"
"      --flame-weight=W  time (default) or calls, for --flame and --html\n"
"      --pprof=FILE      the profile in pprof's format (profile.proto, gzipped)\n"
"                        for go tool pprof, Pyroscope, Parca, speedscope:\n"
"                        sample types calls and time (ns, the default), each\n"
"                        syscall a leaf `syscall:NAME` under its call site\n"
"                        (the shim) or whole stack (kbpf-trace --stacks);\n"
"                        labels pid, tid, process\n"
"      --strict          any loss is an error (exit 3): records missing (gaps in\n"
"                        sequence numbers), drop records, streams that ended\n"
"                        without their exit record, empty or headerless\n"
"                        inputs, fork children without a stream (and, for\n"
"                        --diff and --coverage, in either trace)\n"
"      --assert=EXPR     check the end state, repeatable: exit 4 naming the\n"
"                        first that fails. EXPR: NAME OP NUMBER, OP one of\n"
"                        == != < <= > >=, NAME one of pending_pipe_readers,\n"
"                        pending_pipe_writers, open_fds.KIND (file, pipe,\n"
"                        socket, other, total), count(SYSCALL),\n"
"                        retries(SYSCALL), errors(SYSCALL), time_ms(SYSCALL),\n"
"                        drops, missing_records, processes, exit_status_max\n"
"  -h, --help            this help\n"
"  -V, --version         version\n"
"\n"
"Output: the table's footer gives pipe readers/writers still blocked at\n"
"exit, descriptors open at exit by kind, dropped records and what was\n"
"merged. JSON always has every column (times in ns, stream ids as hex\n"
"strings), per-process profiles, drops and the list of damaged inputs.\n"
"\n"
"Losses: stderr names every stream that ended without its exit record\n"
"('stream of pid N (sleep) ended without exit: killed or lost after byte B\n"
"of FILE': the process was killed, or the rest of its trace was lost; its\n"
"counts are those of its last flush), records missing in the middle of a\n"
"stream, and every fork child without a stream of its own. Children are\n"
"looked for when the inputs should hold the whole tree: a directory,\n"
"several files, --listen, or kbpf-trace's output; not in one file of the\n"
"shim, which holds one process image. An exec record ends a stream too, and\n"
"so does kbpf-trace's exit record of a process still running when tracing\n"
"ended (shown as detached). JSON lists them in \"unended\" and\n"
"\"forks_without_stream\"; each process has \"ending\": exit, detached, exec,\n"
"unknown, running (a --listen producer still connected at the end) or empty.\n"
"Processes of the run the shim could not enter (a static or setuid program,\n"
"said by the traced ones) are named with why, and kbpf-trace as the way to\n"
"see them; JSON \"not_traced\".\n"
"\n"
"Exit status:\n"
"  0  profile printed, every input read completely (losses the inputs\n"
"     themselves show, see Losses above, are warnings without --strict)\n"
"  1  usage error, no input could be read, or the output failed\n"
"  2  profile printed, but an input was truncated or corrupt (the records\n"
"     before the damage are used; a warning gives file and byte offset,\n"
"     counted in the decompressed stream for gzip; after 10 per input the\n"
"     rest are counted), or is not a kprof trace at all (said once), or\n"
"     held no record at all, or did not start with a header (a process\n"
"     whose trace never arrived, or whose start is missing), or a PATH\n"
"     could not be read while others could\n"
"  3  --strict: a loss (see --strict), damaged input or not\n"
"  4  --assert: an assertion does not hold (named on stderr), whatever else\n"
"\n"
"Examples:\n"
"  LD_PRELOAD=build/libkprof.so KPROF_OUT=/tmp/t node app.js\n"
"  kanalyze /tmp/t                          # classic profile, all processes\n"
"  kanalyze --by=process --top=5 /tmp/t     # top 5 syscalls per process\n"
"  kanalyze --sort=retries --errors /tmp/t  # who gets EAGAIN, and which errno\n"
"  kanalyze --percentiles trace.msgpack.gz\n"
"  kanalyze --format=json /tmp/t | jq '.syscalls[] | {name, count}'\n"
"  kanalyze --format=csv --by=thread /tmp/t > threads.csv\n"
"  kanalyze --coverage shim-trace/ bpf-trace/  # what the shim saw of all calls\n"
"  kanalyze --listen=unix:/tmp/kprof.sock --save=/tmp/live &\n"
"  LD_PRELOAD=build/libkprof.so KPROF_OUT=unix:/tmp/kprof.sock node app.js\n"
"  kanalyze --diff before/ after/ --format=markdown\n"
"  kanalyze --by=thread -e %file,%net /tmp/t\n"
"  KPROF_EVENTS=1 ... ; kanalyze --timeline=out.json /tmp/t\n"
"  kanalyze --sites /tmp/t; kanalyze --folded /tmp/t > stacks.txt\n"
"  kanalyze --html=report.html --interval=100 /tmp/t\n"
"  kanalyze --pprof=prof.pb.gz /tmp/t; go tool pprof -top prof.pb.gz\n"
"  kanalyze --flame=flame.svg /tmp/t        # open it in a browser\n"
"  kanalyze --assert 'pending_pipe_readers==0' --assert 'exit_status_max==0' /tmp/t\n";

struct ka_inputs {
	struct ka_model model;
	size_t printed_damage;
	size_t inputs_read;
	size_t inputs_failed;
	size_t dirs_read; /* PATHs that were directories */
};

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kanalyze: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see kanalyze --help)\n");
}

static int pick(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

static void print_new_damage(struct ka_inputs *run)
{
	struct ka_model *m = &run->model;
	for (; run->printed_damage < m->n_damaged; run->printed_damage++)
		ka_print_damage(stderr, &m->damaged[run->printed_damage]);
}

/* 0, or -ENOMEM (fatal); unreadable files are counted, not returned. */
static int read_file(struct ka_inputs *run, const char *path)
{
	int err = ka_input_read_file(&run->model, path);
	if (err || run->printed_damage < run->model.n_damaged)
		ka_input_progress_done(); /* the messages on lines of their own */
	print_new_damage(run);
	if (err == -ENOMEM)
		return err;
	if (err) {
		fprintf(stderr, "kanalyze: cannot read %s: %s\n", path, strerror(-err));
		run->inputs_failed++;
		return 0;
	}
	run->model.files++;
	run->inputs_read++;
	return 0;
}

static bool is_trace_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 8 && strcmp(name + n - 8, ".msgpack") == 0) ||
	       (n > 11 && strcmp(name + n - 11, ".msgpack.gz") == 0);
}

/* Reads the trace files under dir in name order; *found counts them. */
static int read_dir(struct ka_inputs *run, const char *dir, int depth, size_t *found)
{
	struct dirent **names = NULL;
	int err = 0;
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "kanalyze: cannot read %s: %s\n", dir, strerror(errno));
		run->inputs_failed++;
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		char path[PATH_MAX];
		struct stat st;
		if (err || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			continue;
		/* lstat: a symlink to a directory is not followed (no loops). */
		if (lstat(path, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < MAX_DIR_DEPTH)
				err = read_dir(run, path, depth + 1, found);
		} else if (is_trace_name(name) &&
			   (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			(*found)++;
			err = read_file(run, path);
		}
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

static int read_path(struct ka_inputs *run, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "kanalyze: cannot read %s: %s\n", path, strerror(errno));
		run->inputs_failed++;
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return read_file(run, path);
	run->dirs_read++;
	size_t found = 0;
	int err = read_dir(run, path, 0, &found);
	if (!err && found == 0) {
		fprintf(stderr, "kanalyze: %s: no *.msgpack or *.msgpack.gz files in it\n",
			path);
		run->inputs_failed++;
	}
	return err;
}

/* Reads one PATH into run; 0, EXIT_USAGE (nothing read) or -errno. */
static int read_one(struct ka_inputs *run, const char *path, bool keep_events)
{
	ka_model_init(&run->model);
	run->model.keep_events = keep_events;
	int err = read_path(run, path);
	ka_input_progress_done();
	if (err)
		return err;
	if (run->inputs_read == 0) {
		fprintf(stderr, "kanalyze: no trace could be read from %s\n", path);
		return EXIT_USAGE;
	}
	run->model.whole_tree = run->dirs_read || run->model.files > 1;
	return ka_model_check_forks(&run->model);
}

#define EXIT_STRICT 3

/*
 * Prints the losses no profile shows (records missing, streams without
 * their end, fork children without a stream) and, with strict, the
 * summary line (naming the trace, name, when there are two). Returns
 * whether there was any loss, damaged inputs without a stream start
 * included.
 */
static bool report_losses(const struct ka_model *m, const char *name, bool strict)
{
	ka_report_runs(stderr, m, name);
	uint64_t missing = ka_report_gaps(stderr, m);
	struct ka_ends ends;
	ka_report_ends(stderr, m, &ends);
	bool lost = missing || m->drops || ends.unended || ends.orphans ||
		    ends.exec_orphans || ends.silent_live || ends.no_start || ends.untraced;
	char execs[128] = "";
	if (ends.exec_orphans)
		snprintf(execs, sizeof(execs), ", %" PRIu64 " execs without a stream",
			 ends.exec_orphans);
	if (ends.untraced)
		snprintf(execs + strlen(execs), sizeof(execs) - strlen(execs),
			 ", %" PRIu64 " untraced parents", ends.untraced);
	if (strict && lost)
		fprintf(stderr, "kanalyze: --strict%s%s: %" PRIu64 " records missing, %" PRIu64
			" drop records, %" PRIu64 " streams without exit, %" PRIu64
			" inputs without a stream start, %" PRIu64
			" fork children without a stream%s%s\n",
			name ? " on " : "", name ? name : "", missing, m->drops,
			ends.unended + ends.silent_live, ends.no_start, ends.orphans, execs,
			m->forks_checked ? "" : " (not checked: one file of the shim)");
	return lost;
}

/* Exit status of a two-trace command (--coverage, --diff) that printed. */
static int pair_status(const struct ka_inputs *a, const struct ka_inputs *b, const char *path_a,
		       const char *path_b, bool strict)
{
	bool lost_a = report_losses(&a->model, path_a, strict);
	bool lost_b = report_losses(&b->model, path_b, strict);
	if (strict && (lost_a || lost_b))
		return EXIT_STRICT;
	return a->model.n_damaged || a->inputs_failed || b->model.n_damaged ||
			       b->inputs_failed ? EXIT_DAMAGED : 0;
}

#define EXIT_ASSERT 4
#define MAX_ASSERTS 32

enum {
	OPT_LISTEN = 1000, OPT_SAVE, OPT_REFRESH, OPT_LINGER, OPT_METRICS, OPT_DIFF,
	OPT_TIMELINE, OPT_SITES, OPT_FOLDED, OPT_INTERVAL, OPT_HTML, OPT_PPROF, OPT_FLAME, OPT_FLAME_WEIGHT, OPT_STRICT,
	OPT_ASSERT, OPT_PID, OPT_MIN_DURATION, OPT_FAILED, OPT_SUCCEEDED,
	OPT_BLOCKING, OPT_AFTER_START, OPT_DEBUG_DIR, OPT_PERF_MAP_DIR, OPT_EXCLUDE_WAITS,
	OPT_TIMELINE_MAX,
};

struct cli {
	struct ka_report_opts opts;
	bool coverage, diff, sites, folded, strict, blocking, by_errno, after_start;
	bool exclude_waits;
	const char *listen, *save, *timeline, *html, *pprof, *flame, *metrics;
	uint64_t refresh_ms, linger_ms, interval_ms;
	uint64_t timeline_max_mb;
	const char *asserts[MAX_ASSERTS];
	size_t n_asserts;
	const char *debug_dirs[KA_DEBUG_DIRS_MAX];
	size_t n_debug_dirs;
	struct ka_filter filter;
};

static int parse_u64(const char *opt, const char *arg, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-') {
		fprintf(stderr, "kanalyze: %s needs a number, not '%s' (see kanalyze --help)\n",
			opt, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "10", "10us", "250ns", "1.5ms", "2s" -> ns; plain numbers are us. */
static int parse_duration(const char *arg, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	double unit = 1e3;
	if (errno || end == arg || v < 0) {
		usage_error("--min-duration needs a duration such as 10us, not '%s'", arg);
		return -EINVAL;
	}
	if (strcmp(end, "ns") == 0)
		unit = 1;
	else if (strcmp(end, "us") == 0 || *end == 0)
		unit = 1e3;
	else if (strcmp(end, "ms") == 0)
		unit = 1e6;
	else if (strcmp(end, "s") == 0)
		unit = 1e9;
	else {
		usage_error("--min-duration: unknown unit in '%s' (ns, us, ms, s)", arg);
		return -EINVAL;
	}
	*ns = (uint64_t)(v * unit);
	return 0;
}

static int parse_cli(int argc, char **argv, struct cli *cli)
{
	static const struct option long_options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "by", required_argument, NULL, 'b' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "errors", no_argument, NULL, 'E' },
		{ "trace", required_argument, NULL, 'e' },
		{ "percentiles", no_argument, NULL, 'p' },
		{ "coverage", no_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "refresh", required_argument, NULL, OPT_REFRESH },
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "timeline", required_argument, NULL, OPT_TIMELINE },
		{ "timeline-max", required_argument, NULL, OPT_TIMELINE_MAX },
		{ "sites", no_argument, NULL, OPT_SITES },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "flame-weight", required_argument, NULL, OPT_FLAME_WEIGHT },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "assert", required_argument, NULL, OPT_ASSERT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "min-duration", required_argument, NULL, OPT_MIN_DURATION },
		{ "failed", no_argument, NULL, OPT_FAILED },
		{ "succeeded", no_argument, NULL, OPT_SUCCEEDED },
		{ "blocking", no_argument, NULL, OPT_BLOCKING },
		{ "after-start", no_argument, NULL, OPT_AFTER_START },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
		{ "exclude-waits", no_argument, NULL, OPT_EXCLUDE_WAITS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const formats[] = { "table", "json", "csv", "markdown" };
	static const char *const bys[] = { "syscall", "process", "thread", "errno",
					   "kind" };
	static const char *const sorts[] = { "time", "count", "avg", "retries",
					     "errors", "name" };
	int c, v;
	uint64_t u;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:b:s:n:e:EpchV", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((v = pick(optarg, formats, 4)) < 0) {
				usage_error("unknown format '%s' (table, json, csv, markdown)", optarg);
				return EXIT_USAGE;
			}
			cli->opts.format = (enum ka_format)v;
			break;
		case 'b':
			if ((v = pick(optarg, bys, 5)) < 0) {
				usage_error("unknown --by '%s' (syscall, process, thread, errno, kind)", optarg);
				return EXIT_USAGE;
			}
			cli->by_errno = v == 3;
			if (v < 3)
				cli->opts.by = (enum ka_by)v;
			if (v == 4)
				cli->opts.by = KA_BY_KIND;
			break;
		case 's':
			if ((v = pick(optarg, sorts, 6)) < 0) {
				usage_error("unknown sort key '%s' (time, count, avg, retries, errors, name)", optarg);
				return EXIT_USAGE;
			}
			cli->opts.sort = (enum ka_sort)v;
			break;
		case 'n':
			if (parse_u64("--top", optarg, &u))
				return EXIT_USAGE;
			cli->opts.top = u > SIZE_MAX ? SIZE_MAX : (size_t)u;
			cli->opts.top_given = true;
			break;
		case 'E':
			cli->opts.errors = true;
			break;
		case 'e':
			if (ka_filter_parse_names(&cli->filter, optarg))
				return EXIT_USAGE;
			break;
		case 'p':
			cli->opts.percentiles = true;
			break;
		case 'c':
			cli->coverage = true;
			break;
		case OPT_AFTER_START:
			cli->after_start = true;
			break;
		case OPT_LISTEN: cli->listen = optarg; break;
		case OPT_SAVE: cli->save = optarg; break;
		case OPT_REFRESH:
			if (parse_u64("--refresh", optarg, &cli->refresh_ms))
				return EXIT_USAGE;
			break;
		case OPT_METRICS: cli->metrics = optarg; break;
		case OPT_LINGER:
			if (parse_u64("--linger", optarg, &cli->linger_ms))
				return EXIT_USAGE;
			break;
		case OPT_DIFF: cli->diff = true; break;
		case OPT_TIMELINE: cli->timeline = optarg; break;
		case OPT_TIMELINE_MAX:
			if (parse_u64("--timeline-max", optarg, &cli->timeline_max_mb))
				return EXIT_USAGE;
			break;
		case OPT_SITES: cli->sites = true; break;
		case OPT_FOLDED: cli->folded = true; break;
		case OPT_INTERVAL:
			if (parse_u64("--interval", optarg, &cli->interval_ms))
				return EXIT_USAGE;
			if (!cli->interval_ms) {
				usage_error("%s", "--interval must be at least 1 ms");
				return EXIT_USAGE;
			}
			break;
		case OPT_HTML: cli->html = optarg; break;
		case OPT_PPROF: cli->pprof = optarg; break;
		case OPT_FLAME: cli->flame = optarg; break;
		case OPT_FLAME_WEIGHT:
			if (strcmp(optarg, "time") && strcmp(optarg, "calls")) {
				usage_error("--flame-weight is time or calls, not '%s'", optarg);
				return EXIT_USAGE;
			}
			cli->opts.flame_by_calls = !strcmp(optarg, "calls");
			break;
		case OPT_STRICT: cli->strict = true; break;
		case OPT_BLOCKING: cli->blocking = true; break;
		case OPT_ASSERT:
			if (cli->n_asserts == MAX_ASSERTS) {
				usage_error("at most %s --assert options", "32");
				return EXIT_USAGE;
			}
			cli->asserts[cli->n_asserts++] = optarg;
			break;
		case OPT_EXCLUDE_WAITS: cli->exclude_waits = true; break;
		case OPT_PERF_MAP_DIR:
			ka_perf_map_dir(optarg);
			break;
		case OPT_DEBUG_DIR:
			if (cli->n_debug_dirs == KA_DEBUG_DIRS_MAX) {
				usage_error("at most %s --debug-dir options", "8");
				return EXIT_USAGE;
			}
			cli->debug_dirs[cli->n_debug_dirs++] = optarg;
			ka_symbolize_debug_dirs(cli->debug_dirs, cli->n_debug_dirs);
			break;
		case OPT_PID:
			if (ka_filter_parse_pids(&cli->filter, optarg))
				return EXIT_USAGE;
			break;
		case OPT_MIN_DURATION:
			if (parse_duration(optarg, &cli->filter.min_duration_ns))
				return EXIT_USAGE;
			break;
		case OPT_FAILED: cli->filter.failed = true; break;
		case OPT_SUCCEEDED: cli->filter.succeeded = true; break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) ? EXIT_USAGE : -1;
		case 'V':
			printf("kanalyze (kprof) %s\n", KPROF_VERSION);
			return fflush(stdout) ? EXIT_USAGE : -1;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (cli->filter.failed && cli->filter.succeeded) {
		usage_error("%s", "--failed and --succeeded exclude each other");
		return EXIT_USAGE;
	}
	if (cli->metrics && !cli->listen) {
		usage_error("%s", "--metrics serves what --listen merges: give --listen too");
		return EXIT_USAGE;
	}
	/* after every -e: the waits go whatever they named */
	if (cli->exclude_waits && ka_filter_set_aside_waits(&cli->filter))
		return EXIT_USAGE;
	return 0;
}

static int check_asserts(const struct cli *cli, const struct ka_model *m)
{
	for (size_t i = 0; i < cli->n_asserts; i++) {
		char why[256];
		int r = ka_assert_check(m, cli->asserts[i], why, sizeof(why));
		if (r < 0) {
			fprintf(stderr, "kanalyze: --assert '%s': %s\n", cli->asserts[i], why);
			return EXIT_USAGE;
		}
		if (r > 0) {
			fprintf(stderr, "kanalyze: assertion failed: %s (%s)\n",
				cli->asserts[i], why);
			return EXIT_ASSERT;
		}
	}
	return 0;
}

/* The views written to a file of their own, and what each counts. */
enum file_view { FILE_TIMELINE, FILE_HTML, FILE_FLAME, FILE_PPROF };
static const struct {
	const char *option, *unit; /* unit: what the done message counts, or NULL */
	bool binary;
	bool empty_refused; /* none drawn: no file (it would look like a run without calls) */
} file_views[] = {
	[FILE_TIMELINE] = { "timeline", "slices", false, false }, /* checked before */
	[FILE_HTML] = { "html", NULL, false, false },
	[FILE_FLAME] = { "flame", "frames", false, true },
	[FILE_PPROF] = { "pprof", "samples", true, true },
};

static int write_to_file(const char *path, enum file_view view, const struct ka_model *m,
			 const struct cli *cli)
{
	FILE *f = fopen(path, file_views[view].binary ? "wb" : "w");
	if (!f) {
		fprintf(stderr, "kanalyze: cannot create %s: %s\n", path, strerror(errno));
		return -errno;
	}
	int err = 0;
	uint64_t items = 0;
	struct stat st;
	/* a regular file is removed when writing fails (/dev/stdout is not) */
	bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
	switch (view) {
	case FILE_TIMELINE:
		err = ka_write_timeline(f, m, cli->timeline_max_mb << 20, &items);
		break;
	case FILE_HTML: err = ka_write_html(f, m, &cli->opts, cli->interval_ms); break;
	case FILE_FLAME: err = ka_write_flame(f, m, !cli->opts.flame_by_calls, true, &items); break;
	case FILE_PPROF: err = ka_write_pprof(f, m, &items); break;
	}
	if (fclose(f) && !err)
		err = -errno;
	if (!err && file_views[view].empty_refused && !items) {
		fprintf(stderr, "kanalyze: --%s: no call passes the filters; %s not written\n",
			file_views[view].option, path);
		if (regular)
			unlink(path);
		return -ENODATA;
	}
	if (err) {
		fprintf(stderr, "kanalyze: cannot write %s: %s\n", path, strerror(-err));
		if (regular)
			unlink(path); /* not half a file */
	} else if (file_views[view].unit) {
		fprintf(stderr, "kanalyze: %s: %" PRIu64 " %s\n", path, items,
			file_views[view].unit);
	}
	return err;
}

/* Calls in event records: those read (recorded) and those kept by the filters. */
static void count_events(const struct ka_model *m, uint64_t *recorded, uint64_t *kept)
{
	*recorded = *kept = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		*recorded += m->streams[i].events;
		*kept += m->streams[i].n_event_list;
	}
}

/* Everything printed from one model; the exit status. */
static int print_views(struct cli *cli, struct ka_model *m, bool damaged)
{
	int err = 0;
	bool printed = false;

	ka_model_sort_streams(m);
	if (cli->timeline) {
		uint64_t recorded, kept;
		count_events(m, &recorded, &kept);
		/* no file: an empty timeline would look like a run without calls
		 * (main said it when the trace has no events at all) */
		if (!kept) {
			fprintf(stderr, "kanalyze: --timeline: no event of the trace passes "
				"the filters; %s not written\n", cli->timeline);
			return EXIT_USAGE;
		}
		if ((err = write_to_file(cli->timeline, FILE_TIMELINE, m, cli)))
			return EXIT_USAGE;
		printed = true;
	}
	const struct {
		const char *path;
		enum file_view view;
	} files[] = { { cli->html, FILE_HTML }, { cli->flame, FILE_FLAME },
		      { cli->pprof, FILE_PPROF } };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i].path)
			continue;
		if ((err = write_to_file(files[i].path, files[i].view, m, cli)))
			return EXIT_USAGE;
		printed = true;
	}
	if (cli->sites) {
		err = ka_report_sites(stdout, m, &cli->opts);
		printed = true;
	}
	if (!err && cli->folded) {
		err = ka_write_folded(stdout, m);
		printed = true;
	}
	if (!err && cli->interval_ms && !cli->html) {
		err = ka_report_series(stdout, m, cli->interval_ms, &cli->opts);
		printed = true;
	}
	if (!err && cli->blocking) {
		err = ka_report_blocking(stdout, m, &cli->opts);
		printed = true;
	}
	if (!err && cli->by_errno) {
		err = ka_report_errno_table(stdout, m, &cli->opts);
		printed = true;
	}
	if (!err && !printed && cli->opts.by == KA_BY_KIND && !ka_model_has_kinds(m)) {
		fprintf(stderr, "kanalyze: --by=kind: these traces do not record the kind of "
			"descriptor each call used (no `kinds` counters: an older "
			"libkprof.so or kbpf-trace wrote them); the descriptors open at "
			"exit are in the footer\n");
		return EXIT_USAGE;
	}
	if (!err && !printed) {
		switch (cli->opts.format) {
		case KA_FORMAT_TABLE:
			err = ka_report_table(stdout, m, &cli->opts);
			break;
		case KA_FORMAT_JSON:
			err = ka_report_json(stdout, m, &cli->opts);
			break;
		case KA_FORMAT_CSV:
			err = ka_report_csv(stdout, m, &cli->opts);
			break;
		case KA_FORMAT_MARKDOWN:
			err = ka_report_markdown(stdout, m, &cli->opts);
			break;
		}
	}
	if (!err && fflush(stdout))
		err = -errno;
	if (!err && ferror(stdout))
		err = -EIO;
	if (err) {
		fprintf(stderr, "kanalyze: cannot write the profile: %s\n", strerror(-err));
		return EXIT_USAGE;
	}
	int status = check_asserts(cli, m);
	bool lost = report_losses(m, NULL, cli->strict && !status);
	if (status)
		return status;
	if (cli->strict && lost)
		return EXIT_STRICT;
	return damaged ? EXIT_DAMAGED : 0;
}

/*
 * A two-trace command (--coverage, --diff): reads A and B, hands them to
 * report (0 or -errno; -ENODATA when it said why itself) and gives the
 * exit status.
 */
typedef int pair_report(struct ka_inputs *a, struct ka_inputs *b, const char *path_a,
			const char *path_b, const struct cli *cli);

static int pair_main(const char *name, pair_report *report, bool b_after_start,
		     const struct cli *cli, const char *path_a, const char *path_b)
{
	struct ka_inputs a = { 0 }, b = { 0 };
	int status = EXIT_USAGE, err;

	/* the event filters rebuild the counts from the events */
	bool events = ka_filter_needs_events(&cli->filter);
	if ((err = read_one(&a, path_a, events)))
		goto out_a;
	if ((err = read_one(&b, path_b, b_after_start || events)))
		goto out_b;
	err = report(&a, &b, path_a, path_b, cli);
	if (!err && fflush(stdout))
		err = -errno;
	if (err >= 0)
		status = pair_status(&a, &b, path_a, path_b, cli->strict);
out_b:
	ka_model_free(&b.model);
out_a:
	ka_model_free(&a.model);
	if (err < 0 && err != -ENODATA)
		fprintf(stderr, "kanalyze: %s: %s\n", name, strerror(-err));
	return status;
}

/*
 * The filters on both traces of a pair. With need_both (--coverage: two
 * traces of one run, the shim under kbpf-trace) --pid must leave processes
 * in both, else that is said. 0, -ENODATA (said) or -errno.
 */
static int pair_filter(struct ka_inputs *a, struct ka_inputs *b, const char *path_a,
		       const char *path_b, const struct ka_filter *filter, bool need_both)
{
	int err;
	if ((err = ka_filter_apply(&a->model, filter)) ||
	    (err = ka_filter_apply(&b->model, filter)))
		return err == -EINVAL ? -ENODATA : err;
	if (!need_both || !filter->n_pids || (a->model.n_streams && b->model.n_streams))
		return 0;
	const char *which = a->model.n_streams ? "B" : b->model.n_streams ? "A" : "A and B";
	const char *path = a->model.n_streams ? path_b : b->model.n_streams ? path_a : NULL;
	fprintf(stderr, "kanalyze: --pid: no process of these pids in %s%s%s%s: give "
		"pids that both traces hold (two traces of one run: the shim under "
		"kbpf-trace)\n", which, path ? " (" : "", path ? path : "", path ? ")" : "");
	return -ENODATA;
}

static int coverage_report(struct ka_inputs *a, struct ka_inputs *b, const char *path_a,
			   const char *path_b, const struct cli *cli)
{
	int err = pair_filter(a, b, path_a, path_b, &cli->filter, true);
	if (err)
		return err;
	return ka_report_coverage(stdout, &a->model, &b->model, path_a, path_b,
				  cli->opts.format == KA_FORMAT_JSON,
				  cli->opts.format == KA_FORMAT_MARKDOWN, cli->after_start);
}

static int diff_report(struct ka_inputs *a, struct ka_inputs *b, const char *path_a,
		       const char *path_b, const struct cli *cli)
{
	size_t regressions = 0;
	int err = pair_filter(a, b, path_a, path_b, &cli->filter, false);
	if (err)
		return err;
	return ka_report_diff(stdout, &a->model, &b->model, path_a, path_b, &cli->opts,
			      &regressions);
}

int main(int argc, char **argv)
{
	struct cli cli = { .opts = { .format = KA_FORMAT_TABLE, .by = KA_BY_SYSCALL,
				     .sort = KA_SORT_TIME },
			   .refresh_ms = 1000, .linger_ms = 500,
			   .timeline_max_mb = KA_TIMELINE_MAX_MB };
	struct ka_inputs run = { 0 };
	int err = 0, status = EXIT_USAGE;

	status = parse_cli(argc, argv, &cli);
	if (status) {
		ka_filter_free(&cli.filter);
		return status < 0 ? 0 : status;
	}
	status = EXIT_USAGE;
	if (cli.listen) {
		if (optind < argc) {
			usage_error("%s", "--listen reads from the socket only: no PATH");
			goto out_cli;
		}
	} else if (optind >= argc) {
		usage_error("%s", "no trace given: kanalyze [OPTIONS] PATH...");
		goto out_cli;
	} else if (cli.save) {
		usage_error("%s", "--save goes with --listen");
		goto out_cli;
	}

	if (cli.after_start && !cli.coverage) {
		usage_error("%s", "--after-start goes with --coverage");
		goto out_cli;
	}
	if (cli.coverage || cli.diff) {
		const char *what = cli.coverage ? "--coverage" : "--diff";
		if (argc - optind != 2) {
			fprintf(stderr, "kanalyze: %s compares exactly two traces: kanalyze %s A B"
				" (see kanalyze --help)\n", what, what);
			goto out_cli;
		}
		if (cli.opts.format == KA_FORMAT_CSV) {
			fprintf(stderr, "kanalyze: %s prints table, json or markdown\n", what);
			goto out_cli;
		}
		status = cli.coverage ? pair_main("--coverage", coverage_report, cli.after_start,
						  &cli, argv[optind], argv[optind + 1]) :
					pair_main("--diff", diff_report, false, &cli,
						  argv[optind], argv[optind + 1]);
		goto out_cli;
	}

	ka_model_init(&run.model);
	if (cli.exclude_waits) /* --listen's snapshots leave them out too */
		run.model.set_aside = cli.filter.aside;
	run.model.keep_events = cli.timeline || cli.blocking ||
				ka_filter_needs_events(&cli.filter);
	/* the HTML timeline: per thread, its longest calls */
	run.model.keep_lanes = cli.html;
	run.model.lane_nr = cli.filter.nr_set ? cli.filter.nr : NULL;
	run.model.lanes_let_go = !cli.filter.n_pids;
	run.model.keep_history = cli.interval_ms || cli.html;
	if (cli.listen) {
		struct ka_listen_opts lo = { .address = cli.listen, .save_dir = cli.save,
					     .refresh_ms = cli.refresh_ms,
					     .linger_ms = cli.linger_ms,
					     .metrics = cli.metrics,
					     .report = &cli.opts };
		uint64_t connections = 0;
		if (ka_listen(&run.model, &lo, &connections))
			goto out_model;
		if (!connections) {
			fprintf(stderr, "kanalyze: no producer connected\n");
			goto out_model;
		}
		run.inputs_read = 1;
		/* every producer of the tree connects */
		run.model.whole_tree = true;
	} else {
		for (int i = optind; i < argc && !err; i++)
			err = read_path(&run, argv[i]);
		ka_input_progress_done();
	}
	if (err) {
		fprintf(stderr, "kanalyze: %s\n", strerror(-err));
		goto out_model;
	}
	if (run.inputs_read == 0) {
		fprintf(stderr, "kanalyze: no trace could be read\n");
		goto out_model;
	}
	if (!cli.listen)
		run.model.whole_tree = run.dirs_read || run.model.files > 1;
	if ((err = ka_model_check_forks(&run.model))) {
		fprintf(stderr, "kanalyze: %s\n", strerror(-err));
		goto out_model;
	}
	uint64_t recorded, kept;
	count_events(&run.model, &recorded, &kept);
	if (cli.timeline && !recorded) {
		fprintf(stderr, "kanalyze: --timeline: the trace has no events: record them "
			"with KPROF_EVENTS=1 or kbpf-trace --events; %s not written\n",
			cli.timeline);
		goto out_model;
	}
	if ((err = ka_filter_apply(&run.model, &cli.filter))) {
		if (err != -EINVAL)
			fprintf(stderr, "kanalyze: %s\n", strerror(-err));
		goto out_model;
	}
	status = print_views(&cli, &run.model, run.model.n_damaged || run.inputs_failed);
out_model:
	ka_model_free(&run.model);
out_cli:
	ka_filter_free(&cli.filter);
	return status;
}
