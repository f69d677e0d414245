/* SPDX-License-Identifier: MIT */
/*
 * kanalyze's options as one table: each row is the option's names, its
 * argument, what it sets (a field of struct cli, or a function for what
 * needs checking) and its help, from which getopt's tables and --help
 * are made. A new option is one row (and its field, or its function).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perf_map.h"

#include "version.h"

static const char usage_intro[] =
"Usage: kanalyze [OPTIONS] PATH...\n"
"Print the syscall profile of kprof traces (libkprof.so, kbpf-trace).\n"
"PATH is a trace file (msgpack, plain or gzip) or a directory: every\n"
"*.msgpack and *.msgpack.gz file under it is read. All processes are merged\n"
"into one profile unless --by says otherwise. For each process stream and\n"
"thread the last aggregate record counts (they are cumulative).\n"
"\n";

static const char usage_outro[] =
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
"  1  no input could be read, or the output failed\n"
"  2  usage error (as every kprof tool)\n"
"  5  profile printed, but an input was truncated or corrupt (the records\n"
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

void ka_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kanalyze: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'kanalyze --help' for more information.\n");
}

static int pick(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

static int parse_u64(const char *opt, const char *arg, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-') {
		fprintf(stderr, "kanalyze: %s needs a number, not '%s'\n"
			"Try 'kanalyze --help' for more information.\n", opt, arg);
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
		ka_usage_error("--min-duration needs a duration such as 10us, not '%s'", arg);
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
		ka_usage_error("--min-duration: unknown unit in '%s' (ns, us, ms, s)", arg);
		return -EINVAL;
	}
	*ns = (uint64_t)(v * unit);
	return 0;
}

/* ---- options that need more than setting a field: 0, or the exit status */

static int opt_summary(struct cli *cli, const char *arg)
{
	(void)arg;
	cli->opts.format = KA_FORMAT_SUMMARY;
	return 0;
}

static int opt_format(struct cli *cli, const char *arg)
{
	static const char *const formats[] = { "table", "json", "csv", "markdown", "summary" };
	int v = pick(arg, formats, 5);
	if (v < 0) {
		ka_usage_error("unknown format '%s' (table, json, csv, markdown, summary)", arg);
		return EXIT_USAGE;
	}
	cli->opts.format = (enum ka_format)v;
	return 0;
}

static int opt_by(struct cli *cli, const char *arg)
{
	static const char *const bys[] = { "syscall", "process", "thread", "errno", "kind" };
	int v = pick(arg, bys, 5);
	if (v < 0) {
		ka_usage_error("unknown --by '%s' (syscall, process, thread, errno, kind)", arg);
		return EXIT_USAGE;
	}
	cli->by_errno = v == 3;
	if (v < 3)
		cli->opts.by = (enum ka_by)v;
	if (v == 4)
		cli->opts.by = KA_BY_KIND;
	return 0;
}

static int opt_sort(struct cli *cli, const char *arg)
{
	static const char *const sorts[] = { "time", "count", "avg", "retries", "errors", "name" };
	int v = pick(arg, sorts, 6);
	if (v < 0) {
		ka_usage_error("unknown sort key '%s' (time, count, avg, retries, errors, name)", arg);
		return EXIT_USAGE;
	}
	cli->opts.sort = (enum ka_sort)v;
	return 0;
}

static int opt_top(struct cli *cli, const char *arg)
{
	uint64_t u;
	if (parse_u64("--top", arg, &u))
		return EXIT_USAGE;
	cli->opts.top = u > SIZE_MAX ? SIZE_MAX : (size_t)u;
	cli->opts.top_given = true;
	return 0;
}

static int opt_trace(struct cli *cli, const char *arg)
{
	return ka_filter_parse_names(&cli->filter, arg) ? EXIT_USAGE : 0;
}

static int opt_pid(struct cli *cli, const char *arg)
{
	return ka_filter_parse_pids(&cli->filter, arg) ? EXIT_USAGE : 0;
}

static int opt_min_duration(struct cli *cli, const char *arg)
{
	return parse_duration(arg, &cli->filter.min_duration_ns) ? EXIT_USAGE : 0;
}

static int opt_interval(struct cli *cli, const char *arg)
{
	if (parse_u64("--interval", arg, &cli->interval_ms))
		return EXIT_USAGE;
	if (!cli->interval_ms) {
		ka_usage_error("%s", "--interval must be at least 1 ms");
		return EXIT_USAGE;
	}
	return 0;
}

static int opt_flame_weight(struct cli *cli, const char *arg)
{
	if (strcmp(arg, "time") && strcmp(arg, "calls")) {
		ka_usage_error("--flame-weight is time or calls, not '%s'", arg);
		return EXIT_USAGE;
	}
	cli->opts.flame_by_calls = !strcmp(arg, "calls");
	return 0;
}

static int opt_assert(struct cli *cli, const char *arg)
{
	if (cli->n_asserts == MAX_ASSERTS) {
		ka_usage_error("at most %s --assert options", "32");
		return EXIT_USAGE;
	}
	cli->asserts[cli->n_asserts++] = arg;
	return 0;
}

static int opt_perf_map_dir(struct cli *cli, const char *arg)
{
	(void)cli;
	ka_perf_map_dir(arg);
	return 0;
}

static int opt_debug_dir(struct cli *cli, const char *arg)
{
	if (cli->n_debug_dirs == KA_DEBUG_DIRS_MAX) {
		ka_usage_error("at most %s --debug-dir options", "8");
		return EXIT_USAGE;
	}
	cli->debug_dirs[cli->n_debug_dirs++] = arg;
	ka_symbolize_debug_dirs(cli->debug_dirs, cli->n_debug_dirs);
	return 0;
}

static int opt_help(struct cli *cli, const char *arg);

static int opt_version(struct cli *cli, const char *arg)
{
	(void)cli;
	(void)arg;
	printf("kanalyze (kprof) %s\n", KPROF_VERSION);
	return fflush(stdout) ? EXIT_FAIL : -1;
}

/* ---- the table ---- */

enum set { SET_NONE, SET_TRUE, SET_STR, SET_U64 };

struct opt {
	const char *heading;	/* a line of --help instead of an option */
	const char *name;
	char short_opt;
	const char *arg;	/* its argument's name; NULL: none */
	enum set set;		/* what it does to the field at offset field */
	size_t field;
	int (*parse)(struct cli *cli, const char *arg); /* or this */
	const char *help;	/* lines after the first indented to column 24 */
};

static const struct opt options[] = {
	{ .heading = "Options:" },
	{ .name = "format", .arg = "FORMAT", .parse = opt_format,
	  .help =
		  "table (default), json, csv, markdown or summary\n"
		  "(strace -c's table: % time, seconds, usecs/call,\n"
		  "calls, errors, retries; the %wait calls in a block\n"
		  "of their own; kprof's default)" },
	{ .name = "summary", .short_opt = 'c', .parse = opt_summary,
	  .help = "--format=summary (strace -c's table)" },
	{ .name = "verbose", .short_opt = 'v', .set = SET_TRUE,
	  .field = offsetof(struct cli, opts.verbose),
	  .help = "with --format=summary: the full footer" },
	{ .name = "by", .short_opt = 'b', .arg = "WHAT", .parse = opt_by,
	  .help =
		  "syscall (default: one merged table), process (one\n"
		  "table per process image), thread (one per thread),\n"
		  "errno (failed calls by errno and syscall; JSON:\n"
		  "{failed_calls, errnos: [{errno, number, calls,\n"
		  "syscalls: [{name, nr, calls}]}]}), kind (one\n"
		  "table per kind of descriptor the calls used: file\n"
		  "(also directories and devices), pipe (and FIFOs),\n"
		  "socket, other (eventfd, epoll, timerfd, ... and\n"
		  "descriptors that were not open); then 'none', the\n"
		  "syscalls without a descriptor argument, so that the\n"
		  "tables add up to the whole profile (narrow it with\n"
		  "-e); 'unknown' for descriptor calls whose kind the\n"
		  "trace does not say. Kind rows have count, time,\n"
		  "retries and errors, no latency distribution" },
	{ .name = "sort", .short_opt = 's', .arg = "KEY", .parse = opt_sort,
	  .help =
		  "time (default), count, avg, retries, errors, name" },
	{ .name = "top", .short_opt = 'n', .arg = "N", .parse = opt_top,
	  .help =
		  "only the first N syscalls of each table (0 = all)" },
	{ .name = "errors", .short_opt = 'E', .set = SET_TRUE, .field = offsetof(struct cli, opts.errors),
	  .help =
		  "add errors and the errno breakdown per syscall" },
	{ .name = "percentiles", .short_opt = 'P', .set = SET_TRUE, .field = offsetof(struct cli, opts.percentiles),
	  .help =
		  "add p50/p90/p99/max latency columns (microseconds;\n"
		  "a percentile as the range of the histogram bucket it\n"
		  "falls in, 0.96-1.02)" },
	{ .name = "coverage", .set = SET_TRUE, .field = offsetof(struct cli, coverage),
	  .help =
		  "exactly two PATHs, A and B, traces of the same\n"
		  "workload: per syscall, the calls A saw next to those\n"
		  "B saw and the share (shim vs kbpf-trace: what the\n"
		  "shim cannot see). --format=table, json or markdown.\n"
		  "The filters apply to both; --pid needs processes\n"
		  "in both, so two traces of one run (the shim under\n"
		  "kbpf-trace)" },
	{ .name = "after-start", .set = SET_TRUE, .field = offsetof(struct cli, after_start),
	  .help =
		  "with --coverage: count only B's calls made while A's\n"
		  "shim was running in the process (after its start-up,\n"
		  "before the exec that replaced the image), and set\n"
		  "aside the calls A's shim made itself (its `own`\n"
		  "records); then account for every call of B in the\n"
		  "images A traced: before A's start-up, in it, A's\n"
		  "own, counted, in progress at an exit, not seen.\n"
		  "B needs events (kbpf-trace --events)" },
	{ .heading = "" },
	{ .heading = "Filters (before any view):" },
	{ .name = "trace", .short_opt = 'e', .arg = "LIST", .parse = opt_trace,
	  .help =
		  "only these syscalls: names and classes, comma\n"
		  "separated (-e read,write,%net); a leading ! excludes.\n"
		  "Classes: %file %desc %net %process %memory %ipc\n"
		  "%sync %time %signal %wait" },
	{ .name = "pid", .short_opt = 'p', .arg = "LIST", .parse = opt_pid,
	  .help =
		  "only these processes (pids, comma separated)" },
	{ .name = "exclude-waits", .set = SET_TRUE, .field = offsetof(struct cli, exclude_waits),
	  .help =
		  "set aside the calls that wait by nature (class %wait:\n"
		  "futex, poll, select, epoll_wait, nanosleep, wait4,\n"
		  "sigsuspend, ...): idle threads waiting fill a\n"
		  "profile's time; every view shows the rest, and the\n"
		  "table says what was set aside (also --listen's)" },
	{ .name = "min-duration", .arg = "T", .parse = opt_min_duration,
	  .help =
		  "only calls that took T or longer (event records;\n"
		  "T in ns, us, ms or s, default unit us)" },
	{ .name = "failed", .set = SET_TRUE, .field = offsetof(struct cli, filter.failed),
	  .help =
		  "only calls that failed (event records)" },
	{ .name = "succeeded", .set = SET_TRUE, .field = offsetof(struct cli, filter.succeeded),
	  .help =
		  "only calls that succeeded (event records)" },
	{ .heading = "" },
	{ .heading = "Views:" },
	{ .name = "listen", .arg = "unix:PATH", .set = SET_STR, .field = offsetof(struct cli, listen),
	  .help =
		  "accept producers on a unix socket (the shim with\n"
		  "KPROF_OUT=unix:PATH; any producer of the record\n"
		  "stream), merge them live,\n"
		  "print a snapshot every --refresh (top-like on a\n"
		  "terminal, fitted to it: calls/s and ms/s since the\n"
		  "last snapshot, the busiest processes; keys t c a r\n"
		  "e n sort; or plain on a pipe), and the final\n"
		  "profile when every producer\n"
		  "closed (and none came for --linger) or on Ctrl-C" },
	{ .name = "metrics", .arg = "HOST:PORT", .set = SET_STR, .field = offsetof(struct cli, metrics),
	  .help =
		  "with --listen: serve the merged profile to\n"
		  "Prometheus at http://HOST:PORT/metrics (per process\n"
		  "name and syscall: calls, errors, retries, a latency\n"
		  "histogram), and run until Ctrl-C or SIGTERM" },
	{ .name = "save", .arg = "DIR", .set = SET_STR, .field = offsetof(struct cli, save),
	  .help =
		  "with --listen: also write each connection to DIR as\n"
		  "a trace file" },
	{ .name = "refresh", .arg = "MS", .set = SET_U64, .field = offsetof(struct cli, refresh_ms),
	  .help =
		  "with --listen: snapshot period (default 1000, 0 = none)" },
	{ .name = "linger", .arg = "MS", .set = SET_U64, .field = offsetof(struct cli, linger_ms),
	  .help =
		  "with --listen: wait this long after the last producer\n"
		  "closed for new ones (default 500)" },
	{ .name = "diff", .set = SET_TRUE, .field = offsetof(struct cli, diff),
	  .help =
		  "exactly two PATHs, A and B: per-syscall change of\n"
		  "count, time and average; rows that got worse (time\n"
		  "+5% with count +5% or average +25%) are flagged" },
	{ .name = "timeline", .arg = "FILE", .set = SET_STR, .field = offsetof(struct cli, timeline),
	  .help =
		  "write the event records as Chrome trace JSON\n"
		  "(Perfetto, chrome://tracing); needs KPROF_EVENTS=1\n"
		  "or kbpf-trace --events (without events, or when no\n"
		  "event passes the filters: exit 1, no FILE)" },
	{ .name = "timeline-max", .arg = "MB", .set = SET_U64, .field = offsetof(struct cli, timeline_max_mb),
	  .help =
		  "the largest timeline written (default 256, about\n"
		  "what Perfetto's UI opens; 0: no limit): a longer one\n"
		  "is cut at a time, said on stderr" },
	{ .name = "sites", .set = SET_TRUE, .field = offsetof(struct cli, sites),
	  .help =
		  "top call sites per syscall (--top of them, default 5,\n"
		  "0 = all); with kbpf-trace --stacks, each stack's\n"
		  "innermost frame outside libc and ld.so" },
	{ .name = "folded", .set = SET_TRUE, .field = offsetof(struct cli, folded),
	  .help =
		  "folded stacks for flamegraph.pl (lib`function;...;\n"
		  "syscall count): the shim's site, or kbpf-trace's\n"
		  "whole stacks, root first" },
	{ .name = "debug-dir", .arg = "DIR", .parse = opt_debug_dir,
	  .help =
		  "with --sites, --folded, --html, --pprof: look for separate\n"
		  "debug files under DIR/.build-id/ (repeatable, in\n"
		  "order; default /usr/lib/debug)" },
	{ .name = "perf-map-dir", .arg = "DIR", .parse = opt_perf_map_dir,
	  .help =
		  "where the perf maps of JITs are (perf-PID.map, as\n"
		  "node --perf-basic-prof writes them; default /tmp):\n"
		  "code in no file is named from its process's map" },
	{ .name = "interval", .arg = "MS", .parse = opt_interval,
	  .help =
		  "time series: per-interval deltas of the periodic\n"
		  "aggregates" },
	{ .name = "blocking", .set = SET_TRUE, .field = offsetof(struct cli, blocking),
	  .help =
		  "EAGAIN retries per logical operation (a run of EAGAIN\n"
		  "on one thread, syscall and descriptor), time from the\n"
		  "first EAGAIN to success, per descriptor kind and\n"
		  "syscall (per syscall for events without descriptors);\n"
		  "event records; --format=json for scripts" },
	{ .name = "html", .arg = "FILE", .set = SET_STR, .field = offsetof(struct cli, html),
	  .help =
		  "one self-contained HTML report with SVG charts" },
	{ .name = "flame", .arg = "FILE", .set = SET_STR, .field = offsetof(struct cli, flame),
	  .help =
		  "a flame graph of the stacks (--folded's) as one SVG:\n"
		  "click a frame to zoom, Search for a regular\n"
		  "expression; widths by time in the calls, or by\n"
		  "calls with --flame-weight=calls" },
	{ .name = "flame-weight", .arg = "W", .parse = opt_flame_weight,
	  .help =
		  "time (default) or calls, for --flame and --html" },
	{ .name = "pprof", .arg = "FILE", .set = SET_STR, .field = offsetof(struct cli, pprof),
	  .help =
		  "the profile in pprof's format (profile.proto, gzipped)\n"
		  "for go tool pprof, Pyroscope, Parca, speedscope:\n"
		  "sample types calls and time (ns, the default), each\n"
		  "syscall a leaf `syscall:NAME` under its call site\n"
		  "(the shim) or whole stack (kbpf-trace --stacks);\n"
		  "labels pid, tid, process" },
	{ .name = "strict", .set = SET_TRUE, .field = offsetof(struct cli, strict),
	  .help =
		  "any loss is an error (exit 3): records missing (gaps in\n"
		  "sequence numbers), drop records, streams that ended\n"
		  "without their exit record, empty or headerless\n"
		  "inputs, fork children without a stream (and, for\n"
		  "--diff and --coverage, in either trace)" },
	{ .name = "assert", .arg = "EXPR", .parse = opt_assert,
	  .help =
		  "check the end state, repeatable: exit 4 naming the\n"
		  "first that fails. EXPR: NAME OP NUMBER, OP one of\n"
		  "== != < <= > >=, NAME one of pending_pipe_readers,\n"
		  "pending_pipe_writers, open_fds.KIND (file, pipe,\n"
		  "socket, other, total), count(SYSCALL),\n"
		  "retries(SYSCALL), errors(SYSCALL), time_ms(SYSCALL),\n"
		  "drops, missing_records, processes, exit_status_max" },
	{ .name = "help", .short_opt = 'h', .parse = opt_help,
	  .help =
		  "this help" },
	{ .name = "version", .short_opt = 'V', .parse = opt_version,
	  .help =
		  "version" },
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

/* One option of --help: "  -f, --format=FORMAT" and its help from
 * column 24 (further when the names are longer). */
static void print_option(const struct opt *o)
{
	char left[64], sh[5] = "    ";
	if (o->short_opt)
		snprintf(sh, sizeof(sh), "-%c, ", o->short_opt);
	int n = snprintf(left, sizeof(left), "  %s--%s%s%s", sh, o->name, o->arg ? "=" : "",
			 o->arg ? o->arg : "");
	printf("%s%*s", left, n + 2 > 24 ? 2 : 24 - n, "");
	for (const char *p = o->help; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		printf("%s%.*s\n", p == o->help ? "" : "                        ", (int)len, p);
		p += len + (nl ? 1 : 0);
	}
}

static int opt_help(struct cli *cli, const char *arg)
{
	(void)cli;
	(void)arg;
	fputs(usage_intro, stdout);
	for (size_t i = 0; i < N_OPTIONS; i++) {
		if (options[i].heading)
			printf("%s\n", options[i].heading);
		else
			print_option(&options[i]);
	}
	fputs(usage_outro, stdout);
	return fflush(stdout) ? EXIT_FAIL : -1;
}

#define LONG_ONLY 1000 /* getopt's value of options[i] without a short name */

int ka_parse_cli(int argc, char **argv, struct cli *cli)
{
	static struct option long_options[N_OPTIONS + 1];
	static char short_options[2 * N_OPTIONS + 2] = ":";
	size_t n_long = 0, n_short = 1;
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct opt *o = &options[i];
		if (o->heading)
			continue;
		long_options[n_long++] = (struct option){
			o->name, o->arg ? required_argument : no_argument, NULL,
			o->short_opt ? o->short_opt : LONG_ONLY + (int)i };
		if (o->short_opt) {
			short_options[n_short++] = o->short_opt;
			if (o->arg)
				short_options[n_short++] = ':';
		}
	}
	short_options[n_short] = 0;
	long_options[n_long] = (struct option){ 0 };

	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
		if (c == ':') {
			ka_usage_error("option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		}
		const struct opt *o = NULL;
		if (c >= LONG_ONLY && (size_t)(c - LONG_ONLY) < N_OPTIONS)
			o = &options[c - LONG_ONLY];
		for (size_t i = 0; !o && c != '?' && i < N_OPTIONS; i++)
			if (options[i].short_opt == c && !options[i].heading)
				o = &options[i];
		if (!o) {
			ka_usage_error("unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
		char *field = (char *)cli + o->field;
		int status = 0;
		switch (o->set) {
		case SET_TRUE:
			*(bool *)field = true;
			break;
		case SET_STR:
			*(const char **)field = optarg;
			break;
		case SET_U64: {
			char opt_name[40];
			snprintf(opt_name, sizeof(opt_name), "--%s", o->name);
			if (parse_u64(opt_name, optarg, (uint64_t *)field))
				return EXIT_USAGE;
			break;
		}
		case SET_NONE:
			status = o->parse(cli, optarg);
			break;
		}
		if (status)
			return status;
	}
	if (cli->filter.failed && cli->filter.succeeded) {
		ka_usage_error("%s", "--failed and --succeeded exclude each other");
		return EXIT_USAGE;
	}
	if (cli->opts.format == KA_FORMAT_SUMMARY && cli->opts.by != KA_BY_SYSCALL) {
		ka_usage_error("%s", "--format=summary prints one merged profile: --by=process, "
				     "thread or kind go with --format=table, json, csv or markdown");
		return EXIT_USAGE;
	}
	if (cli->metrics && !cli->listen) {
		ka_usage_error("%s", "--metrics serves what --listen merges: give --listen too");
		return EXIT_USAGE;
	}
	/* after every -e: the waits go whatever they named */
	if (cli->exclude_waits && ka_filter_set_aside_waits(&cli->filter))
		return EXIT_USAGE;
	return 0;
}
