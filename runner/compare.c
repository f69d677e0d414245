/* SPDX-License-Identifier: MIT */
/*
 * compare: two result files side by side as a markdown table. A change is
 * judged in the metric's direction against a threshold: the larger of
 * --threshold, the noise of either side (half its median's 95% interval)
 * and the noise calibrated for that host and those settings. It is a
 * regression only when it is worse, beyond the threshold and significant:
 * a Mann–Whitney U test over every value of both sides. A metric whose
 * threshold is above --max-threshold is too noisy to gate: marked, and
 * --fail-on-regression fails on it instead of passing silently.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "host.h"
#include "result.h"
#include "stats.h"

#define SIGNIFICANT_MARK "†"

int noise_path(const struct options *opts, const struct locations *loc, char *out,
	       size_t len, bool *explicit_path)
{
	int n;
	*explicit_path = opts->noise_path != NULL;
	if (opts->noise_path) {
		n = snprintf(out, len, "%s", opts->noise_path);
	} else if (!opts->out_dir && opts->after && strrchr(opts->after, '/')) {
		/* compare without --out: the noise beside the results compared
		 * (krunner ab --out=DIR wrote both there), else the default */
		int dir = (int)(strrchr(opts->after, '/') - opts->after);
		n = snprintf(out, len, "%.*s/noise.json", dir, opts->after);
		if (n >= 0 && (size_t)n < len && access(out, F_OK) == 0)
			return 0;
		n = snprintf(out, len, "%s/noise.json", loc->out_dir);
	} else {
		n = snprintf(out, len, "%s/noise.json", loc->out_dir);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int load_noise(const char *path, bool must_exist, json_t **out)
{
	*out = NULL;
	if (!must_exist && access(path, F_OK) != 0)
		return 0;
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root) {
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "krunner: cannot read %s: %s\n", path, strerror(errno));
			return -errno;
		}
		fprintf(stderr, "krunner: %s: broken JSON at line %d: %s\n", path, jerr.line,
			jerr.text);
		return -EINVAL;
	}
	const char *format = json_string_value(json_object_get(root, "format"));
	if (!format || strcmp(format, NOISE_FORMAT) != 0 ||
	    !json_is_object(json_object_get(root, "metrics"))) {
		fprintf(stderr, "krunner: %s: not a krunner noise file (format \"%s\")\n", path,
			NOISE_FORMAT);
		json_decref(root);
		return -EINVAL;
	}
	*out = root;
	return 0;
}

static json_t *find_suite(json_t *result, const char *name)
{
	size_t i;
	json_t *suite;
	json_array_foreach(json_object_get(result, "suites"), i, suite) {
		const char *n = json_string_value(json_object_get(suite, "name"));
		if (n && strcmp(n, name) == 0)
			return suite;
	}
	return NULL;
}

static size_t samples_of(json_t *metric, double **out)
{
	json_t *samples = json_object_get(metric, "samples");
	size_t n = json_array_size(samples);
	*out = calloc(n + 1, sizeof(double));
	if (!*out)
		return 0;
	for (size_t i = 0; i < n; i++)
		(*out)[i] = json_number_value(json_array_get(samples, i));
	return n;
}

static void format_value(double v, const char *unit, char *buf, size_t len)
{
	if (fabs(v) >= 1000)
		snprintf(buf, len, "%.0f %s", v, unit);
	else
		snprintf(buf, len, "%.4g %s", v, unit);
}

/* Prints why two suites are not comparable; returns true when they are. */
static bool artifacts_match(const char *suite_name, json_t *before, json_t *after)
{
	bool comparable = true;
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(before, "artifacts"), i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		const char *sha_a = json_string_value(json_object_get(a, "sha256"));
		const char *sha_b = NULL;
		size_t k;
		json_t *b;
		json_array_foreach(json_object_get(after, "artifacts"), k, b) {
			const char *nb = json_string_value(json_object_get(b, "name"));
			if (name && nb && strcmp(name, nb) == 0)
				sha_b = json_string_value(json_object_get(b, "sha256"));
		}
		if (!name || !sha_a || !sha_b || strcmp(sha_a, sha_b) != 0) {
			printf("> **Not comparable:** %s: %s %s %s (sha256 %.12s… vs %.12s…)\n",
			       suite_name, json_string_value(json_object_get(a, "kind")),
			       name ? name : "?", sha_b ? "differs" : "is missing after",
			       sha_a ? sha_a : "-", sha_b ? sha_b : "-");
			comparable = false;
		}
	}
	if (json_array_size(json_object_get(before, "artifacts")) !=
	    json_array_size(json_object_get(after, "artifacts"))) {
		printf("> **Not comparable:** %s: the suites use different artifacts\n", suite_name);
		comparable = false;
	}
	return comparable;
}

static void describe(const char *label, const char *path, json_t *result)
{
	json_t *git = json_object_get(result, "git");
	const char *head = json_string_value(json_object_get(git, "head"));
	json_t *options = json_object_get(result, "options");
	const char *launcher = json_string_value(json_object_get(options, "launcher"));
	const char *profile = json_string_value(json_object_get(options, "profile"));
	printf("- %s: `%s` (%s, git %.10s%s, %lld rounds%s%s%s%s%s)\n", label, path,
	       json_string_value(json_object_get(result, "start_time")) ?: "?",
	       head ? head : "unknown",
	       json_is_true(json_object_get(git, "dirty")) ? " dirty" : "",
	       (long long)json_integer_value(json_object_get(options, "rounds")),
	       profile ? ", profiled with " : "", profile ? profile : "",
	       launcher ? ", launcher `" : "", launcher ? launcher : "", launcher ? "`" : "");
}

struct compare_state {
	const struct options *opts;
	json_t *noise;		/* the noise file, when its host matches */
	const char *noise_host;
	int regressions;	/* worse, beyond the threshold, significant */
	int too_noisy;		/* thresholds above --max-threshold, or too few
				 * values for the test to reach --alpha */
	int noise_ignored;	/* noise entries for other settings */
	int noise_used;		/* metrics that had a calibrated noise */
};

/* The calibrated noise of key, when the entry was measured with settings. */
static double calibrated_noise(struct compare_state *st, const char *key, json_t *settings)
{
	json_t *entry = json_object_get(json_object_get(st->noise, "metrics"), key);
	if (!entry)
		return 0;
	json_t *measured_with = json_object_get(entry, "settings");
	if (!measured_with || !settings || !json_equal(measured_with, settings)) {
		st->noise_ignored++;
		return 0;
	}
	st->noise_used++;
	return json_number_value(json_object_get(entry, "noise"));
}

static void format_interval(const struct stats_summary *s, const char *unit, char *buf,
			    size_t len)
{
	char m[40], lo[40], hi[40];
	format_value(s->median, unit, m, sizeof(m));
	format_value(s->ci_lo, "", lo, sizeof(lo));
	format_value(s->ci_hi, "", hi, sizeof(hi));
	lo[strcspn(lo, " ")] = hi[strcspn(hi, " ")] = '\0'; /* the unit is the median's */
	snprintf(buf, len, "%s [%s–%s] n=%zu%s", m, lo, hi, s->n, s->outliers ? " ⚠" : "");
}

static void compare_metric(struct compare_state *st, const char *suite_name, bool comparable,
			   json_t *settings, const char *name, json_t *mb, json_t *ma)
{
	const char *unit = json_string_value(json_object_get(mb, "unit")) ?: "";
	const char *direction = json_string_value(json_object_get(mb, "direction"));
	bool higher_better = direction && strcmp(direction, "higher") == 0;
	double *va = NULL, *vb = NULL;
	size_t na = samples_of(mb, &va);
	struct stats_summary before, after;
	char before_text[192], after_text[192], change[200], threshold_text[48];
	if (stats_summarize(va, na, &before)) {
		free(va);
		return;
	}
	format_interval(&before, unit, before_text, sizeof(before_text));
	if (!ma) {
		printf("| %s / %s | %s | — | not in after | | |\n", suite_name, name, before_text);
		free(va);
		return;
	}
	size_t nb = samples_of(ma, &vb);
	if (stats_summarize(vb, nb, &after)) {
		free(va);
		free(vb);
		return;
	}
	format_interval(&after, unit, after_text, sizeof(after_text));

	char key[512];
	snprintf(key, sizeof(key), "%s/%s", suite_name, name);
	double threshold = st->opts->threshold;
	const char *why = "";
	double values_noise = fmax(before.noise, after.noise);
	double rounds_noise = fmax(json_number_value(json_object_get(mb, "round_noise")),
				   json_number_value(json_object_get(ma, "round_noise")));
	if (values_noise > threshold) {
		threshold = values_noise;
		why = " (values)";
	}
	if (rounds_noise > threshold) {
		threshold = rounds_noise;
		why = " (rounds)";
	}
	double calibrated = calibrated_noise(st, key, settings);
	if (calibrated > threshold) {
		threshold = calibrated;
		why = " (calibrated)";
	}
	/* 3 values against 3 can never give p <= 0.05: such a metric cannot
	 * be gated however large its change, and is marked like a noisy one */
	bool too_few = stats_mann_whitney_min_p(na, nb) > st->opts->alpha;
	bool too_noisy = threshold > st->opts->max_threshold || too_few;
	snprintf(threshold_text, sizeof(threshold_text), "%.1f%%%s%s", threshold * 100, why,
		 too_few ? " too few values" : too_noisy ? " too noisy" : "");

	double p = stats_mann_whitney_p(va, na, vb, nb);
	free(va);
	free(vb);
	bool significant = p <= st->opts->alpha;
	bool regression = false;
	if (before.median == 0) {
		snprintf(change, sizeof(change), "n/a (before is 0)");
	} else {
		double rel = (after.median - before.median) / before.median;
		bool worse = higher_better ? rel < 0 : rel > 0;
		bool beyond = fabs(rel) > threshold;
		/* a change beyond even a noisy metric's threshold is still told */
		regression = worse && beyond && significant && comparable;
		char pct[32];
		snprintf(pct, sizeof(pct), "%+.1f%%", rel * 100);
		if (regression)
			snprintf(change, sizeof(change), "**%s worse**", pct);
		else if (beyond && worse && significant)
			snprintf(change, sizeof(change), "%s worse", pct);
		else if (beyond && significant)
			snprintf(change, sizeof(change), "%s better", pct);
		else
			snprintf(change, sizeof(change), "%s", pct);
		if (significant)
			snprintf(change + strlen(change), sizeof(change) - strlen(change),
				 " " SIGNIFICANT_MARK);
		if (!comparable)
			snprintf(change + strlen(change), sizeof(change) - strlen(change),
				 " (not comparable)");
		if (regression)
			st->regressions++;
	}
	if (too_noisy && comparable && !regression) /* no verdict */
		st->too_noisy++;
	printf("| %s / %s (%s, %s is better) | %s | %s | %s | %s | %.2g |\n", suite_name, name,
	       unit, higher_better ? "higher" : "lower", before_text, after_text, change,
	       threshold_text, p);
}

int compare_results(const struct options *opts, const struct locations *loc,
		    int *significant_regressions, int *too_noisy)
{
	json_t *before = NULL, *after = NULL, *noise = NULL;
	char noise_file[PATH_MAX];
	bool noise_explicit;
	int err;

	*significant_regressions = 0;
	*too_noisy = 0;
	err = result_load(opts->before, &before);
	if (err)
		goto out;
	err = result_load(opts->after, &after);
	if (err)
		goto out;
	if (!opts->no_noise) {
		err = noise_path(opts, loc, noise_file, sizeof(noise_file), &noise_explicit);
		if (err)
			goto out;
		err = load_noise(noise_file, noise_explicit, &noise);
		if (err)
			goto out;
	}

	struct compare_state st = { .opts = opts };
	/* a noise file measured on another machine says nothing of this one */
	const char *noise_host = json_string_value(json_object_get(noise, "host"));
	const char *after_host = json_string_value(
		json_object_get(json_object_get(after, "host"), "hostname"));
	if (noise && (!noise_host || !after_host || strcmp(noise_host, after_host))) {
		printf("> Noise file %s ignored: measured on %s, the after result on %s.\n",
		       noise_file, noise_host ? noise_host : "an unnamed host",
		       after_host ? after_host : "an unnamed host");
	} else {
		st.noise = noise;
	}
	printf("## krunner compare\n\n");
	describe("Before", opts->before, before);
	describe("After", opts->after, after);
	printf("\n");

	/* Fingerprint checks first, so the warning precedes the table. */
	size_t i;
	json_t *sb;
	size_t n_suites = json_array_size(json_object_get(before, "suites"));
	bool *comparable = calloc(n_suites + 1, sizeof(bool));
	if (!comparable) {
		err = -ENOMEM;
		goto out;
	}
	int shown = 0;
	json_array_foreach(json_object_get(before, "suites"), i, sb) {
		const char *name = json_string_value(json_object_get(sb, "name"));
		json_t *sa = find_suite(after, name);
		if (!sa) {
			printf("> %s: not in the after result\n", name);
			continue;
		}
		const char *status_b = json_string_value(json_object_get(sb, "status"));
		const char *status_a = json_string_value(json_object_get(sa, "status"));
		if ((status_b && strcmp(status_b, "ok")) || (status_a && strcmp(status_a, "ok"))) {
			printf("> %s: failed in the %s result; no numbers to compare\n", name,
			       status_b && strcmp(status_b, "ok") ? "before" : "after");
			continue;
		}
		comparable[i] = artifacts_match(name, sb, sa);
		shown++;
	}
	printf("\n| Benchmark | Before | After | Change | Threshold | p |\n"
	       "|:--|--:|--:|--:|--:|--:|\n");
	json_array_foreach(json_object_get(before, "suites"), i, sb) {
		const char *name = json_string_value(json_object_get(sb, "name"));
		json_t *sa = find_suite(after, name);
		const char *status_b = json_string_value(json_object_get(sb, "status"));
		const char *status_a = json_string_value(json_object_get(sa, "status"));
		if (!sa || (status_b && strcmp(status_b, "ok")) || (status_a && strcmp(status_a, "ok")))
			continue;
		const char *metric_name;
		json_t *mb;
		json_t *metrics_after = json_object_get(sa, "metrics");
		json_object_foreach(json_object_get(sb, "metrics"), metric_name, mb)
			compare_metric(&st, name, comparable[i], json_object_get(sa, "settings"),
				       metric_name, mb, json_object_get(metrics_after, metric_name));
		json_t *ma;
		json_object_foreach(metrics_after, metric_name, ma)
			if (!json_object_get(json_object_get(sb, "metrics"), metric_name))
				printf("| %s / %s | — | %.4g | new | | |\n", name, metric_name,
				       json_number_value(json_object_get(ma, "median")));
	}
	free(comparable);

	printf("\nBefore and After: the median of every value, its 95%% bootstrap interval,\n"
	       "the number of values (⚠: outliers among them). Change is After vs Before;\n"
	       "a change is \"worse\" or \"better\" when it is significant (%s: a two-sided\n"
	       "Mann–Whitney U test over all values gives p <= %g) and beyond the metric's\n"
	       "threshold: the largest of %.0f%%, either side's noise (half its interval,\n"
	       "relative, over all values or over its rounds' medians: one per process)\n"
	       "and the noise calibrated on this host with these settings. A\n"
	       "significant worse change of a comparable metric is a regression, in bold.\n"
	       "A metric whose threshold is above %.0f%% is too noisy to gate (only a\n"
	       "change beyond even that threshold is told); one with too few values\n"
	       "for any p <= alpha (3 against 3, say) cannot be gated.\n",
	       SIGNIFICANT_MARK, opts->alpha, opts->threshold * 100, opts->max_threshold * 100);
	if (st.noise && st.noise_used)
		printf("Calibrated noise from %s for %d metric%s%s.\n", noise_file, st.noise_used,
		       st.noise_used == 1 ? "" : "s",
		       st.noise_ignored ? " (entries for other suite settings ignored)" : "");
	else if (st.noise)
		printf("No calibrated noise applies: %s has no entries for these metrics%s.\n",
		       noise_file, st.noise_ignored ? " with these suite settings" : "");
	else if (!noise)
		printf("No calibrated noise (krunner calibrate).\n");
	printf("\n%d regression%s.\n", st.regressions, st.regressions == 1 ? "" : "s");
	if (st.too_noisy)
		printf("%d metric%s too noisy or with too few values to gate: run more rounds "
		       "or on a quieter machine.\n",
		       st.too_noisy, st.too_noisy == 1 ? "" : "s");
	*significant_regressions = st.regressions;
	*too_noisy = st.too_noisy;
out:
	json_decref(before);
	json_decref(after);
	json_decref(noise);
	return err;
}

int calibrate_store(const struct run *run, const char *path)
{
	json_t *root = NULL;
	int err = load_noise(path, false, &root);
	if (err)
		return err;
	if (!root) {
		root = json_object();
		json_object_set_new(root, "format", json_string(NOISE_FORMAT));
		json_object_set_new(root, "format_version", json_integer(1));
		json_object_set_new(root, "metrics", json_object());
	}
	json_object_set_new(root, "updated", json_string(run->end_time));
	json_object_set_new(root, "host", json_string(host_name()));
	json_t *metrics = json_object_get(root, "metrics");

	printf("| Metric | Median | 95%% interval | Values | Noise |\n|:--|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < run->n_suites; i++) {
		const struct suite_ctx *ctx = &run->suites[i];
		const struct suite *s = ctx->suite;
		if (ctx->error || ctx->rounds_done != ctx->n_rounds)
			continue;
		json_t *settings = suite_settings_json(run, ctx);
		for (size_t m = 0; m < s->n_metrics; m++) {
			struct stats_summary sum;
			if (!ctx->values[m].n) /* optional, not given with these options */
				continue;
			if (stats_summarize(ctx->values[m].v, ctx->values[m].n, &sum)) {
				json_decref(settings);
				json_decref(root);
				return -ENOMEM;
			}
			char key[512];
			snprintf(key, sizeof(key), "%s/%s", s->name, s->metrics[m].name);
			json_t *entry = json_object();
			/* a second run is another set of processes: how well the
			 * rounds' medians pin the median down counts too */
			const struct value_list *rm = &ctx->round_medians[m];
			double between = stats_noise(rm->v, rm->n);
			double noise = between > sum.noise ? between : sum.noise;
			json_object_set_new(entry, "noise", json_real(noise));
			json_object_set_new(entry, "within_run_noise", json_real(sum.noise));
			json_object_set_new(entry, "round_noise", json_real(between));
			json_object_set_new(entry, "dispersion", json_real(sum.dispersion));
			json_object_set_new(entry, "values", json_integer((json_int_t)sum.n));
			json_object_set_new(entry, "outliers", json_integer((json_int_t)sum.outliers));
			json_object_set_new(entry, "median", json_real(sum.median));
			json_object_set_new(entry, "ci", json_pack("[f, f]", sum.ci_lo, sum.ci_hi));
			json_object_set_new(entry, "unit", json_string(s->metrics[m].unit));
			json_object_set_new(entry, "calibrated", json_string(run->end_time));
			json_object_set(entry, "settings", settings);
			json_object_set_new(metrics, key, entry);
			char a[48], b[48], c[48];
			format_value(sum.median, s->metrics[m].unit, a, sizeof(a));
			format_value(sum.ci_lo, "", b, sizeof(b));
			format_value(sum.ci_hi, "", c, sizeof(c));
			printf("| %s | %s | %s.. %s| %zu | %.1f%% |\n", key, a, b, c, sum.n,
			       noise * 100);
		}
		json_decref(settings);
	}
	printf("\nNoise = half the width of the median's 95%% bootstrap interval, relative\n"
	       "to the median, over every value of the A/A rounds or over the rounds'\n"
	       "medians (one per process), whichever is wider. compare uses a noise file\n"
	       "only for the host and the suite settings it was measured with.\n");
	err = json_write_atomic(path, root);
	if (!err)
		fprintf(stderr, "krunner: noise written to %s\n", path);
	json_decref(root);
	return err;
}
