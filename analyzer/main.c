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

#include "coverage.h"
#include "model.h"
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
"                        table per process image), thread (one per thread)\n"
"  -s, --sort=KEY        time (default), count, avg, retries, errors, name\n"
"  -n, --top=N           only the first N syscalls of each table (0 = all)\n"
"  -e, --errors          add errors and the errno breakdown per syscall\n"
"  -p, --percentiles     add p50/p90/p99/max latency columns (microseconds)\n"
"  -c, --coverage        exactly two PATHs, A and B, traces of the same\n"
"                        workload: per syscall, the calls A saw next to those\n"
"                        B saw and the share (shim vs kbpf-trace: what the\n"
"                        shim cannot see). --format=table, json or markdown\n"
"  -h, --help            this help\n"
"  -V, --version         version\n"
"\n"
"Output: the table's footer gives pipe readers/writers still blocked at\n"
"exit, descriptors open at exit by kind, dropped records and what was\n"
"merged. JSON always has every column (times in ns, stream ids as hex\n"
"strings), per-process profiles, drops and the list of damaged inputs.\n"
"\n"
"Exit status:\n"
"  0  profile printed, every input read completely\n"
"  1  usage error, no input could be read, or the output failed\n"
"  2  profile printed, but an input was truncated or corrupt (the records\n"
"     before the damage are used; a warning gives file and byte offset,\n"
"     counted in the decompressed stream for gzip) or a PATH could not be\n"
"     read while others could\n"
"\n"
"Examples:\n"
"  LD_PRELOAD=build/libkprof.so KPROF_OUT=/tmp/t node app.js\n"
"  kanalyze /tmp/t                          # classic profile, all processes\n"
"  kanalyze --by=process --top=5 /tmp/t     # top 5 syscalls per process\n"
"  kanalyze --sort=retries --errors /tmp/t  # who gets EAGAIN, and which errno\n"
"  kanalyze --percentiles trace.msgpack.gz\n"
"  kanalyze --format=json /tmp/t | jq '.syscalls[] | {name, count}'\n"
"  kanalyze --format=csv --by=thread /tmp/t > threads.csv\n"
"  kanalyze --coverage shim-trace/ bpf-trace/  # what the shim saw of all calls\n";

struct run {
	struct kp_model model;
	struct kp_reader_ops ops;
	size_t printed_damage;
	size_t inputs_read;
	size_t inputs_failed;
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

static void print_new_damage(struct run *run)
{
	struct kp_model *m = &run->model;
	for (; run->printed_damage < m->n_damaged; run->printed_damage++) {
		const struct kp_damage_entry *d = &m->damaged[run->printed_damage];
		fprintf(stderr, "kanalyze: %s: %s at byte %" PRIu64 "%s\n",
			d->file, d->reason, d->offset,
			d->decompressed ? " of the decompressed stream" : "");
	}
}

/* 0, or -ENOMEM (fatal); unreadable files are counted, not returned. */
static int read_file(struct run *run, const char *path)
{
	int err = kp_read_file(path, &run->ops);
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
static int read_dir(struct run *run, const char *dir, int depth, size_t *found)
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

static int read_path(struct run *run, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "kanalyze: cannot read %s: %s\n", path, strerror(errno));
		run->inputs_failed++;
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return read_file(run, path);
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
static int read_one(struct run *run, const char *path)
{
	kp_model_init(&run->model);
	run->ops.on_record = kp_model_on_record;
	run->ops.on_damage = kp_model_on_damage;
	run->ops.ctx = &run->model;
	int err = read_path(run, path);
	if (err)
		return err;
	if (run->inputs_read == 0) {
		fprintf(stderr, "kanalyze: no trace could be read from %s\n", path);
		return EXIT_USAGE;
	}
	return 0;
}

static int coverage_main(const char *path_a, const char *path_b,
			 const struct kp_report_opts *opts)
{
	struct run a = { 0 }, b = { 0 };
	int status = EXIT_USAGE, err;

	if ((err = read_one(&a, path_a)))
		goto out_a;
	if ((err = read_one(&b, path_b)))
		goto out_b;
	err = kp_report_coverage(stdout, &a.model, &b.model, path_a, path_b,
				 opts->format == KP_FORMAT_JSON,
				 opts->format == KP_FORMAT_MARKDOWN);
	if (!err && fflush(stdout))
		err = -errno;
	if (err < 0)
		goto out_b;
	status = a.model.n_damaged || a.inputs_failed || b.model.n_damaged ||
			 b.inputs_failed ? EXIT_DAMAGED : 0;
out_b:
	kp_model_free(&b.model);
out_a:
	kp_model_free(&a.model);
	if (err < 0)
		fprintf(stderr, "kanalyze: --coverage: %s\n", strerror(-err));
	return status;
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "by", required_argument, NULL, 'b' },
		{ "sort", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'n' },
		{ "errors", no_argument, NULL, 'e' },
		{ "percentiles", no_argument, NULL, 'p' },
		{ "coverage", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const formats[] = { "table", "json", "csv", "markdown" };
	static const char *const bys[] = { "syscall", "process", "thread" };
	static const char *const sorts[] = { "time", "count", "avg", "retries",
					     "errors", "name" };
	struct kp_report_opts opts = { .format = KP_FORMAT_TABLE,
				       .by = KP_BY_SYSCALL,
				       .sort = KP_SORT_TIME };
	struct run run = { 0 };
	bool coverage = false;
	int c, v, err = 0, status = EXIT_USAGE;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:b:s:n:epchV", long_options,
				NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((v = pick(optarg, formats, 4)) < 0) {
				usage_error("unknown format '%s' (table, json, csv, markdown)", optarg);
				return EXIT_USAGE;
			}
			opts.format = (enum kp_format)v;
			break;
		case 'b':
			if ((v = pick(optarg, bys, 3)) < 0) {
				usage_error("unknown --by '%s' (syscall, process, thread)", optarg);
				return EXIT_USAGE;
			}
			opts.by = (enum kp_by)v;
			break;
		case 's':
			if ((v = pick(optarg, sorts, 6)) < 0) {
				usage_error("unknown sort key '%s' (time, count, avg, retries, errors, name)", optarg);
				return EXIT_USAGE;
			}
			opts.sort = (enum kp_sort)v;
			break;
		case 'n':
			errno = 0;
			unsigned long long top = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				usage_error("--top needs a number of rows, not '%s'", optarg);
				return EXIT_USAGE;
			}
			opts.top = top > SIZE_MAX ? SIZE_MAX : (size_t)top;
			break;
		case 'e':
			opts.errors = true;
			break;
		case 'p':
			opts.percentiles = true;
			break;
		case 'c':
			coverage = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) ? EXIT_USAGE : 0;
		case 'V':
			printf("kanalyze (kprof) %s\n", KPROF_VERSION);
			return fflush(stdout) ? EXIT_USAGE : 0;
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error("%s", "no trace given: kanalyze [OPTIONS] PATH...");
		return EXIT_USAGE;
	}

	if (coverage) {
		if (argc - optind != 2) {
			usage_error("%s", "--coverage compares exactly two traces: kanalyze --coverage A B");
			return EXIT_USAGE;
		}
		if (opts.format == KP_FORMAT_CSV) {
			usage_error("%s", "--coverage prints table, json or markdown");
			return EXIT_USAGE;
		}
		return coverage_main(argv[optind], argv[optind + 1], &opts);
	}

	kp_model_init(&run.model);
	run.ops.on_record = kp_model_on_record;
	run.ops.on_damage = kp_model_on_damage;
	run.ops.ctx = &run.model;
	for (int i = optind; i < argc && !err; i++)
		err = read_path(&run, argv[i]);
	if (err) {
		fprintf(stderr, "kanalyze: %s\n", strerror(-err));
		goto out_model;
	}
	if (run.inputs_read == 0) {
		fprintf(stderr, "kanalyze: no trace could be read\n");
		goto out_model;
	}

	kp_model_sort_streams(&run.model);
	switch (opts.format) {
	case KP_FORMAT_TABLE:
		err = kp_report_table(stdout, &run.model, &opts);
		break;
	case KP_FORMAT_JSON:
		err = kp_report_json(stdout, &run.model, &opts);
		break;
	case KP_FORMAT_CSV:
		err = kp_report_csv(stdout, &run.model, &opts);
		break;
	case KP_FORMAT_MARKDOWN:
		err = kp_report_markdown(stdout, &run.model, &opts);
		break;
	}
	if (!err && fflush(stdout))
		err = -errno;
	if (!err && ferror(stdout))
		err = -EIO;
	if (err) {
		fprintf(stderr, "kanalyze: cannot write the profile: %s\n", strerror(-err));
		goto out_model;
	}
	status = run.model.n_damaged || run.inputs_failed ? EXIT_DAMAGED : 0;
out_model:
	kp_model_free(&run.model);
	return status;
}
