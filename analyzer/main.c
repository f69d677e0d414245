/* SPDX-License-Identifier: MIT */
/*
 * kanalyze: reads kprof record streams and prints profiles. This file
 * walks the paths, runs the views the options chose (cli.c) and gives
 * the exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "coverage.h"
#include "input.h"
#include "listen.h"
#include "profile.h"
#include "perf_map.h"
#include "symbolize.h"
#include "views.h"
#include "record_reader.h"
#include "report.h"

#define EXIT_DAMAGED 5
#define MAX_DIR_DEPTH 16


struct ka_inputs {
	struct ka_model model;
	size_t printed_damage;
	size_t inputs_read;
	size_t inputs_failed;
	size_t dirs_read; /* PATHs that were directories */
};

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

/* Reads one PATH into run; 0, EXIT_FAIL (nothing read) or -errno. */
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
		return EXIT_FAIL;
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

/*
 * The views printed on stdout, in this order, each when its option asks
 * (a new view: its option in cli.c, a row here); with none of them, the
 * profile in the format of --format.
 */
static bool want_sites(const struct cli *c) { return c->sites; }
static bool want_folded(const struct cli *c) { return c->folded; }
/* with --html, the series is drawn in the report instead */
static bool want_series(const struct cli *c) { return c->interval_ms && !c->html; }
static bool want_blocking(const struct cli *c) { return c->blocking; }
static bool want_errno(const struct cli *c) { return c->by_errno; }

static int print_sites(FILE *out, const struct ka_model *m, const struct cli *c)
{
	return ka_report_sites(out, m, &c->opts);
}

static int print_folded(FILE *out, const struct ka_model *m, const struct cli *c)
{
	(void)c;
	return ka_write_folded(out, m);
}

static int print_series(FILE *out, const struct ka_model *m, const struct cli *c)
{
	return ka_report_series(out, m, c->interval_ms, &c->opts);
}

static int print_blocking(FILE *out, const struct ka_model *m, const struct cli *c)
{
	return ka_report_blocking(out, m, &c->opts);
}

static int print_errno(FILE *out, const struct ka_model *m, const struct cli *c)
{
	return ka_report_errno_table(out, m, &c->opts);
}

static const struct {
	bool (*wanted)(const struct cli *cli);
	int (*print)(FILE *out, const struct ka_model *m, const struct cli *cli);
} views[] = {
	{ want_sites, print_sites },	   { want_folded, print_folded },
	{ want_series, print_series },	   { want_blocking, print_blocking },
	{ want_errno, print_errno },
};

static int (*const formats[])(FILE *out, const struct ka_model *m,
			      const struct ka_report_opts *o) = {
	[KA_FORMAT_TABLE] = ka_report_table,
	[KA_FORMAT_JSON] = ka_report_json,
	[KA_FORMAT_CSV] = ka_report_csv,
	[KA_FORMAT_MARKDOWN] = ka_report_markdown,
	[KA_FORMAT_SUMMARY] = ka_report_summary,
};

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
			return EXIT_FAIL;
		}
		if ((err = write_to_file(cli->timeline, FILE_TIMELINE, m, cli)))
			return EXIT_FAIL;
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
			return EXIT_FAIL;
		printed = true;
	}
	for (size_t i = 0; !err && i < sizeof(views) / sizeof(views[0]); i++) {
		if (!views[i].wanted(cli))
			continue;
		err = views[i].print(stdout, m, cli);
		printed = true;
	}
	if (!err && !printed && cli->opts.by == KA_BY_KIND && !ka_model_has_kinds(m)) {
		fprintf(stderr, "kanalyze: --by=kind: these traces do not record the kind of "
			"descriptor each call used (no `kinds` counters: an older "
			"libkprof.so or kbpf-trace wrote them); the descriptors open at "
			"exit are in the footer\n");
		return EXIT_FAIL;
	}
	if (!err && !printed)
		err = formats[cli->opts.format](stdout, m, &cli->opts);
	if (!err && fflush(stdout))
		err = -errno;
	if (!err && ferror(stdout))
		err = -EIO;
	if (err) {
		fprintf(stderr, "kanalyze: cannot write the profile: %s\n", strerror(-err));
		return EXIT_FAIL;
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
	int status = EXIT_FAIL, err;

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
	int err = 0, status = EXIT_FAIL;

	status = ka_parse_cli(argc, argv, &cli);
	if (status) {
		ka_filter_free(&cli.filter);
		return status < 0 ? 0 : status;
	}
	status = EXIT_USAGE; /* until the command line is known good */
	if (cli.listen) {
		if (optind < argc) {
			ka_usage_error("%s", "--listen reads from the socket only: no PATH");
			goto out_cli;
		}
	} else if (optind >= argc) {
		ka_usage_error("%s", "no trace given: kanalyze [OPTIONS] PATH...");
		goto out_cli;
	} else if (cli.save) {
		ka_usage_error("%s", "--save goes with --listen");
		goto out_cli;
	}

	if (cli.after_start && !cli.coverage) {
		ka_usage_error("%s", "--after-start goes with --coverage");
		goto out_cli;
	}
	if (cli.coverage || cli.diff) {
		const char *what = cli.coverage ? "--coverage" : "--diff";
		if (argc - optind != 2) {
			fprintf(stderr, "kanalyze: %s compares exactly two traces: kanalyze %s A B\n"
				"Try 'kanalyze --help' for more information.\n", what, what);
			goto out_cli;
		}
		if (cli.opts.format == KA_FORMAT_CSV) {
			fprintf(stderr, "kanalyze: %s prints table, json or markdown\n", what);
			goto out_cli;
		}
		if (cli.opts.format == KA_FORMAT_SUMMARY) {
			fprintf(stderr, "kanalyze: %s prints table, json or markdown\n", what);
			goto out_cli;
		}
		status = cli.coverage ? pair_main("--coverage", coverage_report, cli.after_start,
						  &cli, argv[optind], argv[optind + 1]) :
					pair_main("--diff", diff_report, false, &cli,
						  argv[optind], argv[optind + 1]);
		goto out_cli;
	}

	status = EXIT_FAIL;
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
