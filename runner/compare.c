/*
 * compare: two result files side by side as a markdown table. A change is
 * judged in the metric's direction, against a threshold of max(5%, the
 * metric's calibrated noise), and marked significant only when a
 * Mann–Whitney U test over the round samples says the two sets of rounds
 * differ, so that noise is not called a regression.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "result.h"
#include "stats.h"

#define SIGNIFICANT_MARK "†"

int noise_path(const struct options *opts, const struct locations *loc, char *out,
	       size_t len, bool *explicit_path)
{
	int n;
	*explicit_path = opts->noise_path != NULL;
	if (opts->noise_path)
		n = snprintf(out, len, "%s", opts->noise_path);
	else
		n = snprintf(out, len, "%s/noise.json", loc->out_dir);
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
	json_t *noise;
	int significant_regressions;
	int regressions;
	size_t min_rounds_before, min_rounds_after;
	char thresholds_note[4096];
	size_t note_len;
};

static void compare_metric(struct compare_state *st, const char *suite_name, bool comparable,
			   const char *name, json_t *mb, json_t *ma)
{
	const char *unit = json_string_value(json_object_get(mb, "unit")) ?: "";
	const char *direction = json_string_value(json_object_get(mb, "direction"));
	bool higher_better = direction && strcmp(direction, "higher") == 0;
	char before_text[64], after_text[64], change[160];
	double before = json_number_value(json_object_get(mb, "median"));
	format_value(before, unit, before_text, sizeof(before_text));
	if (!ma) {
		printf("| %s / %s | %s | — | not in after |\n", suite_name, name, before_text);
		return;
	}
	double after = json_number_value(json_object_get(ma, "median"));
	format_value(after, unit, after_text, sizeof(after_text));

	char key[512];
	snprintf(key, sizeof(key), "%s/%s", suite_name, name);
	double threshold = st->opts->threshold;
	double noise = json_number_value(json_object_get(
		json_object_get(json_object_get(st->noise, "metrics"), key), "noise"));
	if (noise > threshold) {
		threshold = noise;
		st->note_len += (size_t)snprintf(st->thresholds_note + st->note_len,
			st->note_len < sizeof(st->thresholds_note) ? sizeof(st->thresholds_note) - st->note_len : 0,
			"%s%s %.1f%%", st->note_len ? ", " : "", key, noise * 100);
		if (st->note_len >= sizeof(st->thresholds_note))
			st->note_len = sizeof(st->thresholds_note) - 1;
	}

	double *sa = NULL, *sb = NULL;
	size_t na = samples_of(mb, &sa), nb = samples_of(ma, &sb);
	if (na < st->min_rounds_before || !st->min_rounds_before)
		st->min_rounds_before = na;
	if (nb < st->min_rounds_after || !st->min_rounds_after)
		st->min_rounds_after = nb;
	double p = stats_mann_whitney_p(sa, na, sb, nb);
	free(sa);
	free(sb);
	bool significant = p <= st->opts->alpha;

	if (before == 0) {
		snprintf(change, sizeof(change), "n/a (before is 0)");
	} else {
		double rel = (after - before) / before;
		bool worse = higher_better ? rel < 0 : rel > 0;
		bool beyond = fabs(rel) > threshold;
		char pct[32];
		snprintf(pct, sizeof(pct), "%+.1f%%", rel * 100);
		if (beyond && worse)
			snprintf(change, sizeof(change), "**%s worse**", pct);
		else if (beyond)
			snprintf(change, sizeof(change), "%s better", pct);
		else
			snprintf(change, sizeof(change), "%s", pct);
		if (significant)
			snprintf(change + strlen(change), sizeof(change) - strlen(change),
				 " " SIGNIFICANT_MARK);
		if (!comparable)
			snprintf(change + strlen(change), sizeof(change) - strlen(change),
				 " (not comparable)");
		if (beyond && worse && comparable) {
			st->regressions++;
			if (significant)
				st->significant_regressions++;
		}
	}
	printf("| %s / %s (%s, %s is better) | %s | %s | %s |\n", suite_name, name, unit,
	       higher_better ? "higher" : "lower", before_text, after_text, change);
}

int compare_results(const struct options *opts, const struct locations *loc,
		    int *significant_regressions)
{
	json_t *before = NULL, *after = NULL, *noise = NULL;
	char noise_file[PATH_MAX];
	bool noise_explicit;
	int err;

	*significant_regressions = 0;
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

	struct compare_state st = { .opts = opts, .noise = noise };
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
	printf("\n| Benchmark | Before | After | Change |\n|:--|--:|--:|--:|\n");
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
			compare_metric(&st, name, comparable[i], metric_name, mb,
				       json_object_get(metrics_after, metric_name));
		json_t *ma;
		json_object_foreach(metrics_after, metric_name, ma)
			if (!json_object_get(json_object_get(sb, "metrics"), metric_name))
				printf("| %s / %s | — | %.4g | new |\n", name, metric_name,
				       json_number_value(json_object_get(ma, "median")));
	}
	free(comparable);

	printf("\nBefore and After are medians over the rounds. Change is After vs Before;\n"
	       "\"worse\" means it moved the wrong way for the metric (throughput down,\n"
	       "time or size up) by more than the threshold, max(%.0f%%, the metric's\n"
	       "calibrated noise), and is set in bold; \"better\" the opposite.\n",
	       opts->threshold * 100);
	printf("%s significant: a two-sided Mann–Whitney U test over the round samples\n"
	       "(exact distribution, ties given mid-ranks) gives p <= %g.",
	       SIGNIFICANT_MARK, opts->alpha);
	double min_p = stats_mann_whitney_min_p(st.min_rounds_before, st.min_rounds_after);
	if (shown && min_p > opts->alpha)
		printf("\nWith %zu vs %zu rounds the smallest possible p is %.3g, so no change\n"
		       "can be marked significant: run more rounds (4 a side reach p = 0.029).",
		       st.min_rounds_before, st.min_rounds_after, min_p);
	printf("\n");
	if (noise)
		printf("Noise from %s%s%s.\n", noise_file,
		       st.note_len ? "; thresholds above the minimum: " : "",
		       st.thresholds_note);
	else
		printf("No calibrated noise (krunner calibrate); every threshold is %.0f%%.\n",
		       opts->threshold * 100);
	printf("\n%d regression%s beyond the threshold, %d of them significant.\n",
	       st.regressions, st.regressions == 1 ? "" : "s", st.significant_regressions);
	*significant_regressions = st.significant_regressions;
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
	json_t *metrics = json_object_get(root, "metrics");
	int rounds = run->opts->rounds;

	printf("| Metric | Median | Min | Max | Noise |\n|:--|--:|--:|--:|--:|\n");
	for (size_t i = 0; i < run->n_suites; i++) {
		const struct suite_ctx *ctx = &run->suites[i];
		const struct suite *s = ctx->suite;
		if (ctx->error || ctx->rounds_done != rounds)
			continue;
		for (size_t m = 0; m < s->n_metrics; m++) {
			const double *values = &ctx->samples[m * rounds];
			double median = stats_median(values, (size_t)rounds);
			double lo = stats_min(values, (size_t)rounds), hi = stats_max(values, (size_t)rounds);
			double noise = median > 0 ? (hi - lo) / median : 0;
			char key[512];
			snprintf(key, sizeof(key), "%s/%s", s->name, s->metrics[m].name);
			json_t *entry = json_object();
			json_object_set_new(entry, "noise", json_real(noise));
			json_object_set_new(entry, "rounds", json_integer(rounds));
			json_object_set_new(entry, "median", json_real(median));
			json_object_set_new(entry, "min", json_real(lo));
			json_object_set_new(entry, "max", json_real(hi));
			json_object_set_new(entry, "unit", json_string(s->metrics[m].unit));
			json_object_set_new(entry, "calibrated", json_string(run->end_time));
			json_object_set_new(metrics, key, entry);
			char a[48], b[48], c[48];
			format_value(median, s->metrics[m].unit, a, sizeof(a));
			format_value(lo, "", b, sizeof(b));
			format_value(hi, "", c, sizeof(c));
			printf("| %s | %s | %s| %s| %.1f%% |\n", key, a, b, c, noise * 100);
		}
	}
	printf("\nNoise = (max - min) / median over %d A/A rounds; compare uses\n"
	       "max(5%%, noise) as each metric's regression threshold.\n", rounds);
	err = json_write_atomic(path, root);
	if (!err)
		fprintf(stderr, "krunner: noise written to %s\n", path);
	json_decref(root);
	return err;
}
