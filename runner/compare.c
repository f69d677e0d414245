/* SPDX-License-Identifier: MIT */
/*
 * compare: two result files side by side as a markdown table, with one of
 * three verdicts per metric. The unit is the round (a fresh process): the
 * change is the ratio of the sides' geometric means of round medians, its
 * interval Welch's t on their logs widened by the between-run noise of two
 * separate runs (stats_round_change); the verdict weighs that interval
 * against --threshold in the metric's direction (stats_judge). And
 * calibrate, which measures that between-run noise.
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

static void format_value(double v, const char *unit, char *buf, size_t len)
{
	if (fabs(v) >= 1000)
		snprintf(buf, len, "%.0f %s", v, unit);
	else
		snprintf(buf, len, "%.4g %s", v, unit);
}

/* Says which programs and inputs changed: the point of a before/after run
 * of a rebuilt binary, so a note, never a reason to drop the verdict. */
static void artifacts_changed(const char *suite_name, json_t *before, json_t *after)
{
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
		if (!name || !sha_a || !sha_b || strcmp(sha_a, sha_b) != 0)
			printf("> Changed: %s: %s %s %s (sha256 %.12s… vs %.12s…); compared all "
			       "the same\n",
			       suite_name, json_string_value(json_object_get(a, "kind")),
			       name ? name : "?", sha_b ? "differs" : "is missing after",
			       sha_a ? sha_a : "-", sha_b ? sha_b : "-");
	}
}

/* Warns when two JSON values that should match do not: "what" differs
 * (or differ, for plural names). */
static int warn_differs(const char *what, bool plural, json_t *before, json_t *after)
{
	if ((!before && !after) || (before && after && json_equal(before, after)))
		return 0;
	char *b = before ? json_dumps(before, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	char *a = after ? json_dumps(after, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	printf("> **Warning:** %s differ%s: before %.200s, after %.200s\n", what,
	       plural ? "" : "s", b ? b : "none", a ? a : "none");
	free(b);
	free(a);
	return 1;
}

/* "10 rounds", or "3-10 rounds" when the suites ran different numbers
 * (--rounds not given: each suite's default). */
static void rounds_text(json_t *result, char *buf, size_t len)
{
	json_int_t lo = 0, hi = 0;
	size_t i;
	json_t *suite;
	json_array_foreach(json_object_get(result, "suites"), i, suite) {
		json_int_t r = json_integer_value(json_object_get(suite, "rounds"));
		if (i == 0 || r < lo)
			lo = r;
		if (i == 0 || r > hi)
			hi = r;
	}
	if (lo == hi)
		snprintf(buf, len, "%lld round%s", (long long)lo, lo == 1 ? "" : "s");
	else
		snprintf(buf, len, "%lld-%lld rounds", (long long)lo, (long long)hi);
}

static void describe(const char *label, const char *path, json_t *result)
{
	char rounds[48];
	rounds_text(result, rounds, sizeof(rounds));
	json_t *git = json_object_get(result, "git");
	const char *head = json_string_value(json_object_get(git, "head"));
	json_t *options = json_object_get(result, "options");
	const char *launcher = json_string_value(json_object_get(options, "launcher"));
	const char *profile = json_string_value(json_object_get(options, "profile"));
	printf("- %s: `%s` (%s, git %.10s%s, %s%s%s%s%s%s)\n", label, path,
	       json_string_value(json_object_get(result, "start_time")) ?: "?",
	       head ? head : "unknown",
	       json_is_true(json_object_get(git, "dirty")) ? " dirty" : "", rounds,
	       profile ? ", profiled with " : "", profile ? profile : "",
	       launcher ? ", launcher `" : "", launcher ? launcher : "", launcher ? "`" : "");
}

/*
 * Which rounds of a side ran on a busy machine: their load at the start or
 * the end (round_details[].state_start/state_end) above what
 * machine_busy() allows. Printed as a note naming the side and rounds.
 */
static void busy_rounds(const char *side, const char *suite_name, json_t *suite, int cores)
{
	char list[512] = "", why[256] = "";
	size_t i, len = 0, count = 0, total = 0;
	json_t *r;
	json_array_foreach(json_object_get(suite, "round_details"), i, r) {
		if (json_is_true(json_object_get(r, "warmup")))
			continue;
		total++;
		const char *busy = machine_busy(json_object_get(r, "state_start"), cores);
		if (!busy)
			busy = machine_busy(json_object_get(r, "state_end"), cores);
		if (!busy)
			continue;
		if (!count)
			snprintf(why, sizeof(why), "%s", busy);
		count++;
		if (len < sizeof(list) - 16)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%lld",
						len ? ", " : "",
						(long long)json_integer_value(json_object_get(r, "round")));
	}
	if (count)
		printf("> %s ran busy: %s: %zu of %zu rounds (round %s; first: %s)\n", side,
		       suite_name, count, total, list, why);
}

struct compare_state {
	const struct options *opts;
	json_t *noise;		/* the noise file, when its host matches */
	bool interleaved;	/* both sides from one krunner ab */
	int family;		/* metrics compared: a regression needs alpha / family */
	int regressions;
	int no_verdicts;
	int noise_ignored;	/* noise entries for other settings */
	int noise_used;		/* metrics that had a calibrated between-run figure */
};

/*
 * The between-run standard deviation (of the log) of key: 0 for an
 * interleaved A/B; else the one krunner calibrate measured with these
 * settings; else --run-noise (or the default) times the rounds' own
 * spread (round_sd: the pooled standard deviation of the log round
 * medians), so that a metric whose rounds agree exactly (a byte count)
 * gets none and a metric whose rounds scatter gets a between-run term in
 * proportion. *source says which.
 */
static double run_sd_of(struct compare_state *st, const char *key, json_t *settings,
			double round_sd, const char **source)
{
	if (st->interleaved) {
		*source = "interleaved";
		return 0;
	}
	json_t *entry = json_object_get(json_object_get(st->noise, "metrics"), key);
	json_t *between = json_object_get(entry, "between_run_sd");
	if (st->opts->run_noise < 0 && entry && json_is_number(between)) {
		json_t *measured_with = json_object_get(entry, "settings");
		if (measured_with && settings && json_equal(measured_with, settings)) {
			st->noise_used++;
			*source = "calibrated";
			return json_number_value(between);
		}
		st->noise_ignored++;
	}
	*source = st->opts->run_noise >= 0 ? "--run-noise" : "default";
	double ratio = st->opts->run_noise >= 0 ? st->opts->run_noise : COMPARE_RUN_NOISE_DEFAULT;
	return isfinite(round_sd) ? ratio * round_sd : 0;
}

/* "12.3 us [11.9–13.0] 10 rounds": the median of the rounds' medians and
 * their range */
static void format_side(const double *rounds, size_t n, size_t values, const char *unit,
			char *buf, size_t len)
{
	char m[40], lo[40], hi[40];
	format_value(stats_median(rounds, n), unit, m, sizeof(m));
	format_value(stats_min(rounds, n), "", lo, sizeof(lo));
	format_value(stats_max(rounds, n), "", hi, sizeof(hi));
	lo[strcspn(lo, " ")] = hi[strcspn(hi, " ")] = '\0'; /* the unit is the median's */
	snprintf(buf, len, "%s [%s–%s] %zu rounds, %zu values", m, lo, hi, n, values);
}

static void compare_metric(struct compare_state *st, const char *suite_name, json_t *sb,
			   json_t *sa, json_t *settings, const char *name, json_t *mb, json_t *ma)
{
	const char *unit = json_string_value(json_object_get(mb, "unit")) ?: "";
	const char *direction = json_string_value(json_object_get(mb, "direction"));
	bool higher_better = direction && strcmp(direction, "higher") == 0;
	bool profiled_b = json_is_string(json_object_get(settings, "profile"));
	double *rb = NULL, *ra = NULL;
	char before_text[192], after_text[192], change[160], detectable[48], verdict[96];
	size_t nb = result_round_medians(json_object_get(sb, "round_details"), name, profiled_b, &rb);
	format_side(rb, nb, json_array_size(json_object_get(mb, "samples")), unit, before_text,
		    sizeof(before_text));
	if (!ma) {
		printf("| %s / %s | %s | — | not in after | | | |\n", suite_name, name,
		       before_text);
		free(rb);
		return;
	}
	size_t na = result_round_medians(json_object_get(sa, "round_details"), name, profiled_b, &ra);
	format_side(ra, na, json_array_size(json_object_get(ma, "samples")), unit, after_text,
		    sizeof(after_text));

	char key[512];
	const char *source;
	snprintf(key, sizeof(key), "%s/%s", suite_name, name);
	double sd_b = stats_log_sd(rb, nb), sd_a = stats_log_sd(ra, na);
	double run_sd = run_sd_of(st, key, settings, sqrt((sd_b * sd_b + sd_a * sd_a) / 2), &source);
	struct stats_change c, family;
	int err = stats_round_change(rb, nb, ra, na, run_sd, st->opts->alpha, &c);
	stats_round_change(rb, nb, ra, na, run_sd, st->opts->alpha / st->family, &family);
	free(rb);
	free(ra);
	enum stats_verdict v = stats_judge(&c, &family, st->opts->threshold, higher_better);
	if (err) {
		snprintf(change, sizeof(change), "n/a");
		snprintf(detectable, sizeof(detectable), "—");
		snprintf(verdict, sizeof(verdict), "no verdict (%s)",
			 nb < 2 || na < 2 ? "fewer than 2 rounds a side" : "a round median of 0");
	} else {
		double lo = (c.lo - 1) * 100, hi = (c.hi - 1) * 100;
		snprintf(change, sizeof(change), "%s%+.1f%% [%+.1f%%, %+.1f%%]%s",
			 v == STATS_REGRESSION ? "**" : "", (c.ratio - 1) * 100, lo, hi,
			 v == STATS_REGRESSION ? "**" : "");
		snprintf(detectable, sizeof(detectable), "%.1f%% (%s)", c.detectable * 100, source);
		snprintf(verdict, sizeof(verdict), "%s%s%s", v == STATS_REGRESSION ? "**" : "",
			 stats_verdict_name(v), v == STATS_REGRESSION ? "**" : "");
	}
	if (v == STATS_REGRESSION)
		st->regressions++;
	else if (v == STATS_NO_VERDICT)
		st->no_verdicts++;
	printf("| %s / %s (%s, %s is better) | %s | %s | %s | %.2g | %s | %s |\n", suite_name,
	       name, unit, higher_better ? "higher" : "lower", before_text, after_text, change,
	       c.p, detectable, verdict);
}

/* Both results written by one krunner ab (their rounds interleaved): the
 * same command and the same end time. */
static bool same_ab_run(json_t *before, json_t *after)
{
	json_t *command = json_object_get(before, "command");
	const char *verb = json_string_value(json_array_get(command, 1));
	const char *end_b = json_string_value(json_object_get(before, "end_time"));
	const char *end_a = json_string_value(json_object_get(after, "end_time"));
	return verb && strcmp(verb, "ab") == 0 && end_b && end_a && strcmp(end_b, end_a) == 0 &&
	       json_equal(command, json_object_get(after, "command"));
}

/* Host, settings and tool versions: a difference is warned of, the
 * comparison still made. */
static void warn_context(json_t *before, json_t *after)
{
	json_t *hb = json_object_get(before, "host"), *ha = json_object_get(after, "host");
	static const char *const host_keys[] = { "hostname", "kernel", "cpu", "cores" };
	for (size_t k = 0; k < sizeof(host_keys) / sizeof(host_keys[0]); k++) {
		char what[64];
		snprintf(what, sizeof(what), "host %s", host_keys[k]);
		warn_differs(what, false, json_object_get(hb, host_keys[k]),
			     json_object_get(ha, host_keys[k]));
	}
	warn_differs("tool versions", true, json_object_get(before, "tool_versions"),
		     json_object_get(after, "tool_versions"));
}

int compare_results(const struct options *opts, const struct locations *loc,
		    int *regressions, int *no_verdicts)
{
	json_t *before = NULL, *after = NULL, *noise = NULL;
	char noise_file[PATH_MAX];
	bool noise_explicit;
	int err;

	*regressions = 0;
	*no_verdicts = 0;
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

	struct compare_state st = { .opts = opts, .interleaved = same_ab_run(before, after) };
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
	warn_context(before, after);
	int cores_b = (int)json_integer_value(json_object_get(json_object_get(before, "host"), "cores"));
	int cores_a = (int)json_integer_value(json_object_get(json_object_get(after, "host"), "cores"));

	/* The notes first, so that they precede the table. */
	size_t i;
	json_t *sb;
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
		char what[300];
		snprintf(what, sizeof(what), "%s: suite settings", name);
		warn_differs(what, true, json_object_get(sb, "settings"), json_object_get(sa, "settings"));
		artifacts_changed(name, sb, sa);
		busy_rounds("Before", name, sb, cores_b);
		busy_rounds("After", name, sa, cores_a);
	}
	json_array_foreach(json_object_get(before, "suites"), i, sb) {
		json_t *sa = find_suite(after, json_string_value(json_object_get(sb, "name")));
		const char *metric_name;
		json_t *mb;
		json_object_foreach(json_object_get(sb, "metrics"), metric_name, mb)
			st.family += json_object_get(json_object_get(sa, "metrics"), metric_name) != NULL;
	}
	if (st.family < 1)
		st.family = 1;
	printf("\n| Benchmark | Before | After | Change [%g%% interval] | p | Detectable | "
	       "Verdict |\n|:--|--:|--:|--:|--:|--:|:--|\n",
	       (1 - opts->alpha) * 100);
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
			compare_metric(&st, name, sb, sa, json_object_get(sb, "settings"),
				       metric_name, mb, json_object_get(metrics_after, metric_name));
		json_t *ma;
		json_object_foreach(metrics_after, metric_name, ma)
			if (!json_object_get(json_object_get(sb, "metrics"), metric_name))
				printf("| %s / %s | — | %.4g | new | | | |\n", name, metric_name,
				       json_number_value(json_object_get(ma, "median")));
	}

	printf("\nBefore and After: the median of the rounds' medians (a round is a fresh\n"
	       "process: the unit), their range, the rounds and values. Change: After over\n"
	       "Before, the ratio of the geometric means of the round medians, with its\n"
	       "%g%% interval: Welch's t on the logs of the round medians, its variance\n"
	       "widened by the between-run noise of two separate runs (%s). p: of no change.\n"
	       "Detectable: the smallest change either way these rounds find with %.0f%%\n"
	       "power at alpha %g. Verdict, with a threshold of %g%%: regression when the\n"
	       "change is worse beyond the threshold and its interval at alpha %g / %d\n"
	       "(the metrics compared) lies on the worse side; no regression when the\n"
	       "%g%% interval's worse end is within the threshold;\n"
	       "else no verdict (more rounds, a quieter machine, krunner ab or krunner\n"
	       "calibrate narrow it).\n",
	       (1 - opts->alpha) * 100,
	       st.interleaved ? "none here: A and B ran interleaved in one krunner ab"
			      : "Detectable names its source",
	       STATS_POWER * 100, opts->alpha, opts->threshold * 100, opts->alpha, st.family,
	       (1 - opts->alpha) * 100);
	if (st.noise_used)
		printf("Between-run noise calibrated in %s for %d metric%s%s.\n", noise_file,
		       st.noise_used, st.noise_used == 1 ? "" : "s",
		       st.noise_ignored ? " (entries for other suite settings ignored)" : "");
	else if (!st.interleaved && opts->run_noise < 0)
		printf("No calibrated between-run noise applies (krunner calibrate, 3 times):\n"
		       "a run's level is taken to vary by %g times its rounds' spread.\n",
		       COMPARE_RUN_NOISE_DEFAULT);
	printf("\n%d regression%s, %d without a verdict.\n", st.regressions,
	       st.regressions == 1 ? "" : "s", st.no_verdicts);
	*regressions = st.regressions;
	*no_verdicts = st.no_verdicts;
out:
	json_decref(before);
	json_decref(after);
	json_decref(noise);
	return err;
}

/*
 * Appends this run's level (the mean log of its round medians, and that
 * mean's variance from its rounds) to the ones an earlier entry with the
 * same settings kept, and from 3 runs on sets between_run_sd: the spread
 * of the levels beyond what their rounds explain, sqrt(var(levels) -
 * mean(variances)), at least 0. That is the term compare adds for two
 * separate runs.
 */
static void add_run_level(json_t *entry, json_t *earlier, json_t *settings,
			  const struct value_list *round_medians)
{
	json_t *runs = json_array();
	json_t *old_runs = json_object_get(earlier, "runs");
	if (earlier && json_equal(json_object_get(earlier, "settings"), settings)) {
		size_t n = json_array_size(old_runs);
		size_t first = n >= CALIBRATE_RUNS_KEPT ? n - CALIBRATE_RUNS_KEPT + 1 : 0;
		for (size_t i = first; i < n; i++)
			json_array_append(runs, json_array_get(old_runs, i));
	}
	double level = stats_log_mean(round_medians->v, round_medians->n);
	double sd = stats_log_sd(round_medians->v, round_medians->n);
	if (isfinite(level) && isfinite(sd))
		json_array_append_new(runs, json_pack("{s:f, s:f}", "log_level", level,
						      "variance", sd * sd / (double)round_medians->n));
	size_t n = json_array_size(runs);
	json_object_set_new(entry, "runs", runs);
	if (n < 3)
		return;
	double *levels = calloc(n, sizeof(double));
	if (!levels)
		return;
	double variance_sum = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(runs, i);
		levels[i] = json_number_value(json_object_get(r, "log_level"));
		variance_sum += json_number_value(json_object_get(r, "variance"));
	}
	double spread = stats_sd(levels, n);
	double beyond = spread * spread - variance_sum / (double)n;
	json_object_set_new(entry, "between_run_sd", json_real(beyond > 0 ? sqrt(beyond) : 0));
	free(levels);
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
	/* the runs' levels kept are this host's only */
	const char *old_host = json_string_value(json_object_get(root, "host"));
	bool same_host = old_host && strcmp(old_host, host_name()) == 0;
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
			json_t *before = json_object_get(metrics, key);
			add_run_level(entry, same_host ? before : NULL, settings, rm);
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
