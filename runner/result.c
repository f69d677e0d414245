/* SPDX-License-Identifier: MIT */
/*
 * result: the JSON result file (jansson). One file per invocation, every
 * sample kept, written atomically; and the reader with the checks compare
 * relies on, so a corrupt or foreign file is refused with a reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "result.h"
#include "stats.h"

static json_t *artifact_json(const struct artifact *a)
{
	json_t *j = json_object();
	json_object_set_new(j, "kind", json_string(artifact_kind_name(a->kind)));
	json_object_set_new(j, "name", json_string(a->name));
	json_object_set_new(j, "path", json_string(a->path));
	json_object_set_new(j, "size", json_integer(a->size));
	json_object_set_new(j, "sha256", json_string(a->sha256));
	return j;
}

static json_t *samples_json(const double *values, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_real(values[i]));
	return a;
}

/* The figures of a list of values, under the keys prefix + name. */
static int put_summary(json_t *metric, const char *prefix, const struct value_list *l,
		       struct stats_summary *sum)
{
	if (stats_summarize(l->v, l->n, sum))
		return -ENOMEM;
	char key[64];
#define PUT(name, value)                                                       \
	(snprintf(key, sizeof(key), "%s%s", prefix, name),                     \
	 json_object_set_new(metric, key, value))
	PUT("samples", samples_json(l->v, l->n));
	PUT("n", json_integer((json_int_t)sum->n));
	PUT("median", json_real(sum->median));
	PUT("mad", json_real(sum->mad));
	PUT("ci", json_pack("[f, f]", sum->ci_lo, sum->ci_hi));
	PUT("noise", json_real(sum->noise));
	PUT("dispersion", json_real(sum->dispersion));
	PUT("outliers", json_integer((json_int_t)sum->outliers));
	PUT("min", json_real(sum->min));
	PUT("max", json_real(sum->max));
	PUT("mean", json_real(sum->mean));
	PUT("sd", isfinite(sum->sd) ? json_real(sum->sd) : json_null());
#undef PUT
	return 0;
}

size_t result_round_medians(json_t *rounds, const char *metric, bool profiled, double **out)
{
	size_t n = 0, i;
	json_t *r;
	*out = calloc(json_array_size(rounds) + 1, sizeof(double));
	if (!*out)
		return 0;
	json_array_foreach(rounds, i, r) {
		if (!json_is_true(json_object_get(r, "ok")) ||
		    json_is_true(json_object_get(r, "warmup")) ||
		    json_is_true(json_object_get(r, "profiled")) != profiled)
			continue;
		json_t *v = json_object_get(json_object_get(r, "values"), metric);
		if (json_is_number(v)) {
			(*out)[n++] = json_number_value(v);
		} else if (json_array_size(v)) {
			size_t k, m = json_array_size(v);
			double *values = calloc(m, sizeof(double));
			if (!values)
				continue;
			json_t *x;
			json_array_foreach(v, k, x)
				values[k] = json_number_value(x);
			(*out)[n++] = stats_median(values, m);
			free(values);
		}
	}
	return n;
}

/*
 * The probe effect of def: each profiled round against its unprofiled twin
 * run right after it, round medians as the unit and no between-run term
 * (the twins interleave). Its significance is said in the same words as
 * the factor, so that a factor that is not significant is never told as
 * a finding. *slowdown is NAN when it cannot be computed.
 */
void result_probe_effect(json_t *rounds, const struct metric_def *def, char *text, size_t len,
			 double *slowdown, bool *significant)
{
	bool higher = def->direction == HIGHER_IS_BETTER;
	double *profiled = NULL, *plain = NULL;
	size_t n_profiled = result_round_medians(rounds, def->name, true, &profiled);
	size_t n_plain = result_round_medians(rounds, def->name, false, &plain);
	struct stats_change c;
	*significant = false;
	*slowdown = NAN;
	if (stats_round_change(plain, n_plain, profiled, n_profiled, 0, 0.05, &c) == 0) {
		*slowdown = higher ? 1 / c.ratio : c.ratio;
		*significant = c.lo > 1 || c.hi < 1;
		char factor[32], lo[32], hi[32];
		stats_slowdown_text(*slowdown, factor, sizeof(factor));
		stats_slowdown_text(higher ? 1 / c.hi : c.lo, lo, sizeof(lo));
		stats_slowdown_text(higher ? 1 / c.lo : c.hi, hi, sizeof(hi));
		snprintf(text, len, "%s%s (95%% interval %s to %s, %zu rounds)",
			 *significant ? "" : "not significant: measured ", factor, lo, hi,
			 n_profiled);
	} else {
		/* a 0 on a side, or under 2 rounds: the medians, said as such */
		char effect[64];
		stats_effect_text(stats_median(plain, n_plain), stats_median(profiled, n_profiled),
				  higher, def->unit, "unprofiled", "profiled", effect, sizeof(effect));
		snprintf(text, len, "significance unknown: measured %s", effect);
	}
	free(profiled);
	free(plain);
}

/*
 * A metric in the result: every value, its median with a bootstrap 95%
 * interval, MAD, relative noise (the interval's half-width over the
 * median) and outliers; with --profile the same of the unprofiled twins'
 * values and the probe effect, as a slowdown (above 1: the profiler made
 * the metric worse, whichever way is better for it).
 */
static json_t *metric_json(const struct metric_def *def, const struct value_list *values,
			   const struct value_list *round_medians, const struct value_list *plain,
			   json_t *rounds)
{
	json_t *metric = json_object();
	struct stats_summary sum, plain_sum;
	bool higher = def->direction == HIGHER_IS_BETTER;
	json_object_set_new(metric, "unit", json_string(def->unit));
	json_object_set_new(metric, "direction",
			    json_string(def->direction == DIRECTION_UNKNOWN ? "unknown"
					: higher ? "higher" : "lower"));
	json_object_set_new(metric, "description", json_string(def->description));
	if (put_summary(metric, "", values, &sum))
		goto nomem;
	/* the same figure over the rounds' medians: one per process */
	json_object_set_new(metric, "round_noise",
			    json_real(stats_noise(round_medians->v, round_medians->n)));
	if (plain) {
		if (put_summary(metric, "plain_", plain, &plain_sum))
			goto nomem;
		double slowdown;
		bool significant;
		char text[160];
		result_probe_effect(rounds, def, text, sizeof(text), &slowdown, &significant);
		json_object_set_new(metric, "probe_effect",
				    isfinite(slowdown) ? json_real(slowdown) : json_null());
		json_object_set_new(metric, "probe_effect_text", json_string(text));
		json_object_set_new(metric, "probe_effect_significant", json_boolean(significant));
	}
	return metric;
nomem:
	json_decref(metric);
	return NULL;
}

static json_t *options_json(const struct suite *s)
{
	json_t *options = json_object();
	for (size_t i = 0; i < s->n_options; i++)
		json_object_set_new(options, s->options[i].name,
				    json_string(suite_option_value(s, s->options[i].name)));
	return options;
}

json_t *suite_settings_json(const struct run *run, const struct suite_ctx *ctx)
{
	const struct options *opts = run->opts;
	json_t *j = json_object();
	json_object_set_new(j, "rounds", json_integer(ctx->n_rounds));
	json_object_set_new(j, "options", options_json(ctx->suite));
	json_object_set_new(j, "profile",
			    opts->profile == PROFILE_PRELOAD ? json_string("preload") :
			    opts->profile == PROFILE_BPF ? json_string("bpf") : json_null());
	json_object_set_new(j, "launcher", opts->launcher ? json_string(opts->launcher) : json_null());
	return j;
}

static json_t *suite_json(const struct run *run, const struct suite_ctx *ctx)
{
	const struct suite *s = ctx->suite;
	int rounds = ctx->n_rounds;
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(s->name));
	json_object_set_new(j, "description", json_string(s->description));
	json_object_set_new(j, "status", json_string(ctx->error ? "failed" : "ok"));
	if (ctx->error)
		json_object_set_new(j, "error", json_string(ctx->error));
	json_object_set_new(j, "rounds", json_integer(rounds));

	json_t *artifacts = json_array();
	for (size_t i = 0; i < ctx->n_artifacts; i++)
		json_array_append_new(artifacts, artifact_json(&ctx->artifacts[i]));
	json_object_set_new(j, "artifacts", artifacts);

	json_object_set_new(j, "options", options_json(s));
	json_object_set_new(j, "settings", suite_settings_json(run, ctx));
	json_object_set(j, "notes", ctx->notes);
	json_object_set(j, "tool_versions", ctx->tool_versions);

	/* No metric from a suite that did not complete every round. Those
	 * whose direction is unknown are kept apart: compare never gates them. */
	json_t *metrics = json_object(), *ungated = json_object();
	if (!ctx->error && ctx->rounds_done == rounds) {
		for (size_t m = 0; m < s->n_metrics; m++) {
			if (!ctx->values[m].n) /* optional, not given with these options */
				continue;
			json_t *metric = metric_json(&s->metrics[m], &ctx->values[m],
						     &ctx->round_medians[m],
						     ctx->plain_rounds_done == rounds ? &ctx->plain[m]
										      : NULL,
						     ctx->rounds);
			if (!metric) {
				json_decref(metrics);
				json_decref(ungated);
				json_decref(j);
				return NULL;
			}
			json_object_set_new(s->metrics[m].direction == DIRECTION_UNKNOWN ? ungated
					    : metrics, s->metrics[m].name, metric);
		}
	}
	json_object_set_new(j, "metrics", metrics);
	if (json_object_size(ungated))
		json_object_set(j, "ungated_metrics", ungated);
	json_decref(ungated);
	json_object_set(j, "round_details", ctx->rounds);
	return j;
}

json_t *result_build(const struct run *run)
{
	const struct options *opts = run->opts;
	json_t *root = json_object();
	json_object_set_new(root, "format", json_string(RESULT_FORMAT));
	json_object_set_new(root, "format_version", json_integer(RESULT_FORMAT_VERSION));
	json_object_set_new(root, "start_time", json_string(run->start_time));
	json_object_set_new(root, "end_time", json_string(run->end_time));

	json_t *command = json_array();
	for (int i = 0; i < opts->argc; i++)
		json_array_append_new(command, json_string(opts->argv[i]));
	json_object_set_new(root, "command", command);

	json_t *o = json_object();
	json_object_set_new(o, "rounds", opts->rounds ? json_integer(opts->rounds) : json_null());
	json_object_set_new(o, "profile",
			    opts->profile == PROFILE_PRELOAD ? json_string("preload") :
			    opts->profile == PROFILE_BPF ? json_string("bpf") : json_null());
	json_object_set_new(o, "launcher", opts->launcher ? json_string(opts->launcher) : json_null());
	json_object_set_new(o, "programs_dir", json_string(run->loc->programs_dir));
	json_object_set_new(root, "options", o);

	json_object_set_new(root, "host", host_json());
	json_object_set_new(root, "machine_state",
			    json_pack("{s:O?, s:O?, s:s?}", "start", run->state_start, "end",
				      run->state_end, "busy", run->busy));
	/* git: the project benchmarked — the directory a command ran in, or
	 * kprof's tree for its suites; kprof: krunner's own version and tree */
	char cwd[PATH_MAX];
	const char *dir = opts->command_argv && getcwd(cwd, sizeof(cwd)) ? cwd : run->loc->root;
	json_object_set_new(root, "git", git_json(dir));
	json_object_set_new(root, "git_dir", dir ? json_string(dir) : json_null());
	json_object_set_new(root, "kprof", json_pack("{s:s, s:o}", "version", KRUNNER_VERSION,
						      "git", git_json(run->loc->root)));
	json_object_set(root, "tool_versions", run->tool_versions);
	json_t *tools = json_array();
	for (size_t i = 0; i < run->n_tools; i++)
		json_array_append_new(tools, artifact_json(&run->tools[i]));
	json_object_set_new(root, "tools", tools);
	if (run->trace_root[0])
		json_object_set_new(root, "traces", json_string(run->trace_root));

	json_t *suites = json_array();
	for (size_t i = 0; i < run->n_suites; i++)
		json_array_append_new(suites, suite_json(run, &run->suites[i]));
	json_object_set_new(root, "suites", suites);
	return root;
}

static int write_tmp(const char *dir, json_t *root, char *tmp, size_t len)
{
	if (snprintf(tmp, len, "%s/.krunner-tmp.XXXXXX", dir) >= (int)len)
		return -ENAMETOOLONG;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	int err = 0;
	if (json_dumpfd(root, fd, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) < 0 ||
	    write(fd, "\n", 1) != 1)
		err = errno ? -errno : -EIO;
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && chmod(tmp, 0644) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int result_write(const char *dir, const char *name, json_t *root, char *path_out,
		 size_t path_len)
{
	char tmp[PATH_MAX];
	int err = write_tmp(dir, root, tmp, sizeof(tmp));
	if (err) {
		fprintf(stderr, "krunner: cannot write a result file in %s: %s\n", dir,
			strerror(-err));
		return err;
	}
	for (int n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(path_out, path_len, "%s/%s.json", dir, name);
		else
			snprintf(path_out, path_len, "%s/%s-%d.json", dir, name, n);
		if (link(tmp, path_out) == 0) {
			unlink(tmp);
			return 0;
		}
		if (errno != EEXIST) {
			err = -errno;
			break;
		}
		err = -EEXIST;
	}
	fprintf(stderr, "krunner: cannot write %s: %s\n", path_out, strerror(-err));
	unlink(tmp);
	return err;
}

int json_write_atomic(const char *path, json_t *root)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	int err = write_tmp(dir, root, tmp, sizeof(tmp));
	if (!err && rename(tmp, path) < 0) {
		err = -errno;
		unlink(tmp);
	}
	if (err)
		fprintf(stderr, "krunner: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

static int invalid(const char *path, const char *what, const char *detail)
{
	fprintf(stderr, "krunner: %s: not a usable krunner result: %s%s%s\n", path, what,
		detail ? ": " : "", detail ? detail : "");
	return -EINVAL;
}

static int check_metric(const char *path, const char *suite, const char *name, json_t *metric)
{
	char where[512];
	snprintf(where, sizeof(where), "suite %s, metric %s", suite, name);
	json_t *samples = json_object_get(metric, "samples");
	json_t *median = json_object_get(metric, "median");
	const char *direction = json_string_value(json_object_get(metric, "direction"));
	if (!json_is_object(metric) || !json_is_array(samples) || json_array_size(samples) == 0)
		return invalid(path, where, "no samples");
	if (!json_is_number(median) || !isfinite(json_number_value(median)))
		return invalid(path, where, "no median");
	if (!direction || (strcmp(direction, "higher") && strcmp(direction, "lower")))
		return invalid(path, where, "direction is not higher or lower");
	size_t i;
	json_t *v;
	json_array_foreach(samples, i, v)
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return invalid(path, where, "a sample is not a number");
	return 0;
}

int result_load(const char *path, json_t **out)
{
	json_error_t jerr;
	char detail[300];
	*out = NULL;
	json_t *root = json_load_file(path, 0, &jerr);
	if (!root) {
		if (access(path, R_OK) != 0) {
			fprintf(stderr, "krunner: cannot read %s: %s\n", path, strerror(errno));
			return -errno;
		}
		snprintf(detail, sizeof(detail), "line %d, column %d: %s", jerr.line, jerr.column,
			 jerr.text);
		return invalid(path, "broken JSON", detail);
	}
	int err = 0;
	const char *format = json_string_value(json_object_get(root, "format"));
	json_t *suites = json_object_get(root, "suites");
	if (!format || strcmp(format, RESULT_FORMAT) != 0) {
		err = invalid(path, "\"format\" is not \"" RESULT_FORMAT "\"", NULL);
		goto out;
	}
	if (json_integer_value(json_object_get(root, "format_version")) != RESULT_FORMAT_VERSION) {
		err = invalid(path, "unsupported format_version", NULL);
		goto out;
	}
	if (!json_is_array(suites)) {
		err = invalid(path, "no \"suites\" array", NULL);
		goto out;
	}
	size_t i;
	json_t *suite;
	json_array_foreach(suites, i, suite) {
		const char *name = json_string_value(json_object_get(suite, "name"));
		json_t *metrics = json_object_get(suite, "metrics");
		if (!name || !json_is_object(metrics)) {
			err = invalid(path, "a suite without name or metrics", NULL);
			goto out;
		}
		const char *metric_name;
		json_t *metric;
		json_object_foreach(metrics, metric_name, metric) {
			err = check_metric(path, name, metric_name, metric);
			if (err)
				goto out;
		}
		json_t *artifacts = json_object_get(suite, "artifacts");
		if (artifacts && !json_is_array(artifacts)) {
			err = invalid(path, "suite artifacts is not an array", name);
			goto out;
		}
	}
	*out = root;
	return 0;
out:
	json_decref(root);
	return err;
}
