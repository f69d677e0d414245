/* SPDX-License-Identifier: MIT */
/*
 * krunner: drives kprof's benchmark suites and compares their results.
 * This file is the top level: parse, dispatch, exit status.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifacts.h"
#include "compare.h"
#include "export.h"
#include "options.h"
#include "result.h"
#include "run.h"
#include "stats.h"
#include "suite.h"

/* as every kprof tool: 1 a failure, 2 a usage error (--help) */
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_WORKLOAD_FAILED 5
#define EXIT_REGRESSION 3
#define EXIT_NO_VERDICT 4
#define EXIT_INTERRUPTED 130

static void list_suites(void)
{
	for (size_t i = 0; i < suite_count(); i++) {
		const struct suite *s = suite_at(i);
		printf("%s — %s\n", s->name, s->description);
		for (size_t m = 0; m < s->n_metrics; m++)
			printf("  %-36s %-8s %-17s %s\n", s->metrics[m].name, s->metrics[m].unit,
			       s->metrics[m].direction == HIGHER_IS_BETTER ? "higher is better"
			       : s->metrics[m].direction == LOWER_IS_BETTER ? "lower is better"
									    : "direction unknown",
			       s->metrics[m].description);
	}
}

static const char *number(double v, char *buf, size_t len)
{
	snprintf(buf, len, fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
	return buf;
}

static void print_summary(const struct run *run)
{
	char a[32], b[32], c[32], d[32];
	size_t outliers = 0;
	for (size_t i = 0; i < run->n_suites; i++) {
		const struct suite_ctx *ctx = &run->suites[i];
		const struct suite *s = ctx->suite;
		if (ctx->error) {
			printf("%s: FAILED: %s\n", s->name, ctx->error);
			continue;
		}
		int rounds = ctx->n_rounds;
		printf("%s (%d round%s): median [95%% interval], values; mean ± σ; min … max\n",
		       s->name, rounds, rounds == 1 ? "" : "s");
		for (size_t m = 0; m < s->n_metrics; m++) {
			const struct value_list *l = &ctx->values[m];
			struct stats_summary sum;
			if (!l->n || stats_summarize(l->v, l->n, &sum))
				continue;
			printf("  %-36s %12s %-7s [%s .. %s] %4zu values", s->metrics[m].name,
			       number(sum.median, a, sizeof(a)), s->metrics[m].unit,
			       number(sum.ci_lo, b, sizeof(b)), number(sum.ci_hi, c, sizeof(c)),
			       sum.n);
			if (sum.n > 1)
				printf("; %s ± %s; %s … %s", number(sum.mean, a, sizeof(a)),
				       number(sum.sd, b, sizeof(b)), number(sum.min, c, sizeof(c)),
				       number(sum.max, d, sizeof(d)));
			if (sum.outliers)
				printf(", %zu outlier%s", sum.outliers, sum.outliers == 1 ? "" : "s");
			outliers += sum.outliers;
			if (ctx->plain_rounds_done == rounds && ctx->plain[m].n) {
				char text[160];
				double slowdown;
				bool significant;
				result_probe_effect(ctx->rounds, &s->metrics[m], text, sizeof(text),
						    &slowdown, &significant);
				printf("  probe effect: %s", text);
			}
			printf("\n");
		}
	}
	if (outliers)
		fprintf(stderr, "krunner: warning: statistical outliers among the values (modified "
				"z-score above 3.5): consider a quieter machine, more rounds, or "
				"another warm-up\n");
}

/*
 * Runs what run_prepare() made of the command line; b (krunner ab) is run
 * interleaved with a. 0 when there are results to write, 1 when the run
 * was interrupted (said, the exit code set), or -errno (said).
 */
static int execute(const struct locations *loc, struct run *a, struct run *b, int *exit_code)
{
	int err = run_mkdir_p(loc->out_dir);
	if (err) {
		fprintf(stderr, "krunner: cannot create %s: %s\n", loc->out_dir, strerror(-err));
		return err;
	}
	err = exec_catch_interrupts();
	if (err)
		return err;
	err = b ? run_execute_ab(a, b) : run_execute(a);
	if (err) {
		fprintf(stderr, "krunner: run aborted: %s\n", strerror(-err));
		return err;
	}
	if (exec_interrupted()) {
		/* Teardown ran; a partial run is not a result. */
		fprintf(stderr, "krunner: interrupted; no result written\n");
		*exit_code = EXIT_INTERRUPTED;
		return 1;
	}
	return 0;
}

/* Says how many suites failed; true if any did (exit code set). */
static bool say_failed(const struct run *run, int *exit_code)
{
	if (!run->failed_suites)
		return false;
	fprintf(stderr, "krunner: %d suite%s failed\n", run->failed_suites,
		run->failed_suites == 1 ? "" : "s");
	*exit_code = EXIT_WORKLOAD_FAILED;
	return true;
}

/* krunner --suite=... and krunner calibrate. */
static int run_command(const struct options *opts, const struct locations *loc, int *exit_code)
{
	struct run run;
	json_t *result = NULL;
	char path[PATH_MAX];
	int err;

	err = run_prepare(&run, opts, loc);
	if (err == -EINVAL) /* the command line's: an unknown suite, a --launcher */
		*exit_code = EXIT_USAGE;
	if (!err)
		err = execute(loc, &run, NULL, exit_code);
	if (err)
		goto out;
	if (opts->command == COMMAND_CALIBRATE) {
		char noise[PATH_MAX];
		bool explicit_path;
		err = noise_path(opts, loc, noise, sizeof(noise), &explicit_path);
		if (err)
			goto out;
		err = calibrate_store(&run, noise);
		if (err)
			goto out;
	} else {
		result = result_build(&run);
		if (!result) {
			err = -ENOMEM;
			goto out;
		}
		err = result_write(loc->out_dir, run.base_name, result, path, sizeof(path));
		if (err)
			goto out;
		if (opts->json) {
			if (json_dumpf(result, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) < 0) {
				err = -EIO;
				goto out;
			}
			printf("\n");
		} else {
			print_summary(&run);
		}
		fprintf(stderr, "krunner: result written to %s\n", path);
		err = export_write(&run);
		if (err)
			goto out;
	}
	say_failed(&run, exit_code);
out:
	json_decref(result);
	run_free(&run);
	return err < 0 ? err : 0;
}

/* krunner compare, and the comparison that ends krunner ab. */
static int compare_and_gate(const struct options *opts, const struct locations *loc,
			    int *exit_code)
{
	int regressions = 0, no_verdicts = 0;
	int err = compare_results(opts, loc, &regressions, &no_verdicts);
	if (err || !opts->fail_on_regression)
		return err;
	/* a regression is the stronger finding: it wins over no verdict */
	if (regressions) {
		*exit_code = EXIT_REGRESSION;
	} else if (no_verdicts) {
		fprintf(stderr, "krunner: --fail-on-regression: %d metric%s without a verdict: "
				"the data cannot tell a %g%% regression from none\n",
			no_verdicts, no_verdicts == 1 ? "" : "s", opts->threshold * 100);
		*exit_code = EXIT_NO_VERDICT;
	}
	return 0;
}

/* One side's result file, <stamp>-<suites>-<side>.json. */
static int write_side(struct run *run, const char *side, char *path, size_t len)
{
	strncat(run->base_name, side, sizeof(run->base_name) - strlen(run->base_name) - 1);
	json_t *result = result_build(run);
	if (!result)
		return -ENOMEM;
	int err = result_write(run->loc->out_dir, run->base_name, result, path, len);
	json_decref(result);
	if (!err)
		fprintf(stderr, "krunner: result written to %s\n", path);
	return err;
}

/*
 * One stamp for both sides, <stamp>-<suites>-A.json and -B.json, whatever
 * second each was prepared in; with --profile, a trace directory each.
 */
static int share_stamp(struct run *a, struct run *b)
{
	memcpy(b->stamp, a->stamp, sizeof(b->stamp));
	memcpy(b->base_name, a->base_name, sizeof(b->base_name));
	struct run *side[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		if (!side[i]->trace_root[0])
			continue;
		if (snprintf(side[i]->trace_root, sizeof(side[i]->trace_root), "%s/%s-%c.traces",
			     side[i]->loc->out_dir, side[i]->base_name,
			     "AB"[i]) >= (int)sizeof(side[i]->trace_root))
			return -ENAMETOOLONG;
	}
	return 0;
}

/* krunner ab: A and B interleaved in one run, both results, compared. */
static int ab_command(const struct options *opts, const struct locations *loc, int *exit_code)
{
	struct options b_opts = *opts;
	struct run a, b;
	char path_a[PATH_MAX], path_b[PATH_MAX];
	b_opts.launcher = opts->b_launcher ? opts->b_launcher : opts->launcher;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	int err = run_prepare(&a, opts, loc);
	if (!err)
		err = run_prepare(&b, &b_opts, loc);
	if (err == -EINVAL) /* the command line's: an unknown suite, a --launcher */
		*exit_code = EXIT_USAGE;
	if (!err)
		err = share_stamp(&a, &b);
	if (!err)
		err = execute(loc, &a, &b, exit_code);
	if (err)
		goto out;
	err = write_side(&a, "-A", path_a, sizeof(path_a));
	if (!err)
		err = write_side(&b, "-B", path_b, sizeof(path_b));
	if (err)
		goto out;
	if (say_failed(&a, exit_code))
		goto out;
	struct options c = *opts;
	c.before = path_a;
	c.after = path_b;
	err = compare_and_gate(&c, loc, exit_code);
out:
	run_free(&a);
	run_free(&b);
	return err < 0 ? err : 0;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct locations loc;
	int exit_code = 0;
	int err = options_parse(argc, argv, &opts);
	if (err > 0) {
		err = 0;
		goto out;
	}
	if (err) {
		exit_code = EXIT_USAGE;
		goto out;
	}
	err = locations_init(&loc, opts.programs_dir, opts.out_dir);
	if (err) {
		fprintf(stderr, "krunner: cannot locate the tree: %s\n", strerror(-err));
		exit_code = EXIT_FAIL;
		goto out;
	}
	switch (opts.command) {
	case COMMAND_LIST:
		list_suites();
		break;
	case COMMAND_COMPARE:
		err = compare_and_gate(&opts, &loc, &exit_code);
		break;
	case COMMAND_AB:
		err = ab_command(&opts, &loc, &exit_code);
		break;
	case COMMAND_RUN:
	case COMMAND_CALIBRATE:
		err = run_command(&opts, &loc, &exit_code);
		break;
	}
	if (err && !exit_code)
		exit_code = EXIT_FAIL;
	if (fflush(stdout) != 0 && !exit_code) {
		fprintf(stderr, "krunner: cannot write the output: %s\n", strerror(errno));
		exit_code = EXIT_FAIL;
	}
out:
	options_free(&opts);
	return exit_code;
}
