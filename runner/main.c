/*
 * krunner: drives kprof's benchmark suites and compares their results.
 * This file is the top level: parse, dispatch, exit status.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "artifacts.h"
#include "compare.h"
#include "options.h"
#include "result.h"
#include "run.h"
#include "stats.h"
#include "suite.h"

#define EXIT_USAGE 1
#define EXIT_WORKLOAD_FAILED 2
#define EXIT_REGRESSION 3
#define EXIT_INTERRUPTED 130

static void list_suites(void)
{
	for (size_t i = 0; i < suite_count(); i++) {
		const struct suite *s = suite_at(i);
		printf("%s — %s\n", s->name, s->description);
		for (size_t m = 0; m < s->n_metrics; m++)
			printf("  %-36s %-8s %s is better\n", s->metrics[m].name, s->metrics[m].unit,
			       s->metrics[m].direction == HIGHER_IS_BETTER ? "higher" : "lower");
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
			if (stats_summarize(l->v, l->n, &sum))
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
				char text[64];
				double plain = stats_median(ctx->plain[m].v, ctx->plain[m].n);
				stats_effect_text(plain, sum.median,
						  s->metrics[m].direction == HIGHER_IS_BETTER,
						  s->metrics[m].unit, "unprofiled", "profiled",
						  text, sizeof(text));
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

static int ensure_dir(const char *dir)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* krunner --suite=... and krunner calibrate. */
static int run_command(const struct options *opts, const struct locations *loc, int *exit_code)
{
	struct run run;
	json_t *result = NULL;
	char path[PATH_MAX];
	int err;

	err = run_prepare(&run, opts, loc);
	if (err)
		goto out;
	err = ensure_dir(loc->out_dir);
	if (err) {
		fprintf(stderr, "krunner: cannot create %s: %s\n", loc->out_dir, strerror(-err));
		goto out;
	}
	err = exec_catch_interrupts();
	if (err)
		goto out;
	err = run_execute(&run);
	if (err) {
		fprintf(stderr, "krunner: run aborted: %s\n", strerror(-err));
		goto out;
	}
	if (exec_interrupted()) {
		/* Teardown ran; a partial run is not a result. */
		fprintf(stderr, "krunner: interrupted; no result written\n");
		*exit_code = EXIT_INTERRUPTED;
		goto out;
	}
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
	}
	if (run.failed_suites) {
		fprintf(stderr, "krunner: %d suite%s failed\n", run.failed_suites,
			run.failed_suites == 1 ? "" : "s");
		*exit_code = EXIT_WORKLOAD_FAILED;
	}
out:
	json_decref(result);
	run_free(&run);
	return err;
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
		exit_code = EXIT_USAGE;
		goto out;
	}
	switch (opts.command) {
	case COMMAND_LIST:
		list_suites();
		break;
	case COMMAND_COMPARE: {
		int regressions = 0, too_noisy = 0;
		err = compare_results(&opts, &loc, &regressions, &too_noisy);
		if (!err && opts.fail_on_regression && too_noisy)
			fprintf(stderr, "krunner: --fail-on-regression: %d metric%s too noisy to "
					"gate (threshold above %.0f%%): no verdict\n",
				too_noisy, too_noisy == 1 ? "" : "s", opts.max_threshold * 100);
		if (!err && opts.fail_on_regression && (regressions || too_noisy))
			exit_code = EXIT_REGRESSION;
		break;
	}
	case COMMAND_RUN:
	case COMMAND_CALIBRATE:
		err = run_command(&opts, &loc, &exit_code);
		break;
	}
	if (err && !exit_code)
		exit_code = EXIT_USAGE;
	if (fflush(stdout) != 0 && !exit_code) {
		fprintf(stderr, "krunner: cannot write the output: %s\n", strerror(errno));
		exit_code = EXIT_USAGE;
	}
out:
	options_free(&opts);
	return exit_code;
}
