/* SPDX-License-Identifier: MIT */
/*
 * run: resolving what the chosen suites need, then running their rounds:
 * profiled or plain, metrics collected from the programs' key=value lines
 * and checked, each profiled round summarised by kanalyze. Shared by
 * `krunner --suite` and `krunner calibrate`.
 */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "host.h"
#include "run.h"
#include "stats.h"

#define VERSION_TIMEOUT_MS 5000
#define KANALYZE_TIMEOUT_MS 120000
#define PROFILE_TOP 5

void time_iso8601(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void time_stamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void progress_clear(const struct run *run)
{
	if (run->progress)
		fputs("\r\033[K", stderr);
}

static void progress_show(const struct suite_ctx *ctx, const char *metric, double value)
{
	const struct run *run = ctx->run;
	if (!run->progress)
		return;
	char round[48];
	if (ctx->round_number == 0)
		snprintf(round, sizeof(round), "warm-up round");
	else
	snprintf(round, sizeof(round), "round %d/%d%s", ctx->round_number, ctx->n_rounds,
		 ctx->round_profiled ? " (profiled)"
		 : run->opts->profile != PROFILE_NONE ? " (unprofiled)" : "");
	if (metric)
		fprintf(stderr, "\r\033[K%s %s: %s=%.4g", ctx->suite->name, round, metric, value);
	else
		fprintf(stderr, "\r\033[K%s %s", ctx->suite->name, round);
	fflush(stderr);
}

void suite_fail(struct suite_ctx *ctx, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	progress_clear(ctx->run);
	fprintf(stderr, "krunner: %s: %s\n", ctx->suite->name, msg);
	if (!ctx->error)
		ctx->error = strdup(msg);
}

int run_mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* --- the suite API (suite.h) --- */

const char *suite_artifact_path(struct suite_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->n_artifacts; i++)
		if (strcmp(ctx->artifacts[i].name, name) == 0)
			return ctx->artifacts[i].path;
	return NULL;
}

const char *suite_option(struct suite_ctx *ctx, const char *name)
{
	return suite_option_value(ctx->suite, name);
}

const char *suite_scratch_dir(struct suite_ctx *ctx)
{
	return ctx->scratch_dir;
}

int suite_round_number(struct suite_ctx *ctx)
{
	return ctx->round_number;
}

bool suite_round_unprofiled(struct suite_ctx *ctx)
{
	return ctx->run->opts->profile != PROFILE_NONE && !ctx->round_profiled;
}

struct profiler suite_profiler_of(struct suite_ctx *ctx, enum profile_mode mode,
				  const char *trace_dir)
{
	return (struct profiler){
		.mode = mode,
		.shim = ctx->run->loc->shim,
		.kbpf_trace = ctx->run->loc->kbpf_trace,
		.trace_dir = trace_dir,
		.events = -1,
		.gzip = -1,
	};
}

struct profiler suite_profiler(struct suite_ctx *ctx, const char *interval_ms)
{
	struct profiler p = suite_profiler_of(
		ctx, ctx->round_profiled ? ctx->run->opts->profile : PROFILE_NONE,
		ctx->round_trace_dir);
	p.interval_ms = interval_ms;
	return p;
}

bool suite_interrupted(void)
{
	return exec_interrupted();
}

int suite_result_dir(struct suite_ctx *ctx, const char *name, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s-%s", ctx->run->loc->out_dir, ctx->run->stamp, name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return run_mkdir_p(path);
}

int suite_add_input(struct suite_ctx *ctx, const char *name, const char *path)
{
	struct artifact *grown = realloc(ctx->artifacts, (ctx->n_artifacts + 1) * sizeof(*grown));
	char why[PATH_MAX + 128];
	if (!grown)
		return -ENOMEM;
	ctx->artifacts = grown;
	int err = artifact_from_path(ARTIFACT_INPUT, name, path, &ctx->artifacts[ctx->n_artifacts],
				     why, sizeof(why));
	if (err) {
		fprintf(stderr, "krunner: %s: %s\n", ctx->suite->name, why);
		return err;
	}
	ctx->n_artifacts++;
	return 0;
}

int suite_note(struct suite_ctx *ctx, const char *key, const char *value)
{
	return json_object_set_new(ctx->notes, key, value ? json_string(value) : json_null())
		       ? -ENOMEM : 0;
}

int value_list_push(struct value_list *l, double value)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		double *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = value;
	return 0;
}

static int value_list_append(struct value_list *to, const struct value_list *from)
{
	for (size_t i = 0; i < from->n; i++)
		if (value_list_push(to, from->v[i]))
			return -ENOMEM;
	return 0;
}

static int record_metric(struct suite_ctx *ctx, const char *name, double value,
			 bool from_program)
{
	const struct suite *s = ctx->suite;
	for (size_t m = 0; m < s->n_metrics; m++) {
		if (strcmp(s->metrics[m].name, name) != 0)
			continue;
		if (!isfinite(value) || value < 0) {
			suite_fail(ctx, "round %d: metric %s = %g is not a finite, non-negative number",
				   ctx->round_number, name, value);
			return -ERANGE;
		}
		if (value_list_push(&ctx->current[m], value))
			return -ENOMEM;
		progress_show(ctx, name, value);
		return 0;
	}
	if (from_program) {
		progress_clear(ctx->run);
		fprintf(stderr, "krunner: %s: ignoring undeclared metric %s\n", s->name, name);
		return 0;
	}
	suite_fail(ctx, "suite records undeclared metric %s", name);
	return -EINVAL;
}

int suite_metric(struct suite_ctx *ctx, const char *name, double value)
{
	return record_metric(ctx, name, value, false);
}

struct line_reader {
	struct suite_ctx *ctx;
	const char *program;
	int err;
};

bool suite_metric_key(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (i > 0 && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

int suite_metric_line(const char *line, size_t *key_len, double *value)
{
	const char *eq = strchr(line, '=');
	if (!eq || !suite_metric_key(line, (size_t)(eq - line)))
		return 0;
	char *end;
	errno = 0;
	*value = strtod(eq + 1, &end);
	end += strspn(end, " \t\r");
	if (end == eq + 1 || *end || errno == ERANGE)
		return -1;
	*key_len = (size_t)(eq - line);
	return 1;
}

/* A metric line is KEY=NUMBER; anything else is the program talking and
 * goes to stderr, never into a metric. */
static int on_program_line(void *arg, const char *line)
{
	struct line_reader *reader = arg;
	size_t key_len;
	double value;
	if (suite_metric_line(line, &key_len, &value) == 1) {
		char key[256];
		snprintf(key, sizeof(key), "%.*s", (int)key_len, line);
		int err = record_metric(reader->ctx, key, value, true);
		if (err && !reader->err)
			reader->err = err;
		return 0;
	}
	progress_clear(reader->ctx->run);
	fprintf(stderr, "%s: %s\n", reader->program, line);
	return 0;
}

int suite_run(struct suite_ctx *ctx, const char *const argv[])
{
	struct run *run = ctx->run;
	const char *slash = strrchr(argv[0], '/');
	struct line_reader reader = { ctx, slash ? slash + 1 : argv[0], 0 };
	struct exec_spec spec = {
		.argv = argv,
		.launcher_argv = run->have_launcher ? run->launcher_words.we_wordv : NULL,
		.profiler = suite_profiler(ctx, NULL),
		.on_line = on_program_line,
		.arg = &reader,
	};
	int status;
	char text[96];
	int err = exec_run(&spec, &status, NULL);
	if (err) {
		suite_fail(ctx, "round %d: cannot run %s: %s", ctx->round_number, argv[0],
			   strerror(-err));
		return err;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		suite_fail(ctx, "round %d: %s failed (%s); the round is rejected",
			   ctx->round_number, reader.program,
			   exec_status_text(status, text, sizeof(text)));
		return -ECHILD;
	}
	return reader.err;
}

void suite_sampler_args(struct suite_ctx *ctx, char args[SUITE_SAMPLER_ARGS][48])
{
	static const char *const names[SUITE_SAMPLER_ARGS] = { "samples", "warmups", "min-time-ms" };
	for (int i = 0; i < SUITE_SAMPLER_ARGS; i++)
		snprintf(args[i], sizeof(args[i]), "--%s=%s", names[i], suite_option(ctx, names[i]));
}

int suite_run_hello(struct suite_ctx *ctx, const char *program)
{
	char hello[4200], sampler[SUITE_SAMPLER_ARGS][48];
	snprintf(hello, sizeof(hello), "--hello=%s", suite_artifact_path(ctx, "hello"));
	suite_sampler_args(ctx, sampler);
	const char *argv[] = { suite_artifact_path(ctx, program), hello, sampler[0], sampler[1],
			       sampler[2], NULL };
	return suite_run(ctx, argv);
}

/* --- preparing --- */

int suite_text_line(void *text, const char *line)
{
	struct suite_text *buf = text;
	size_t n = strlen(line);
	if (buf->len + n + 2 > buf->cap) {
		size_t cap = (buf->cap ? buf->cap * 2 : 4096) + n;
		char *grown = realloc(buf->data, cap);
		if (!grown)
			return 1;
		buf->data = grown;
		buf->cap = cap;
	}
	memcpy(buf->data + buf->len, line, n);
	buf->len += n;
	buf->data[buf->len++] = '\n';
	buf->data[buf->len] = '\0';
	return 0;
}

/* First line of `path --version`, or NULL. */
static char *tool_version(const char *path)
{
	const char *argv[] = { path, "--version", NULL };
	struct suite_text out = { 0 };
	struct exec_spec spec = { .argv = argv, .timeout_ms = VERSION_TIMEOUT_MS,
				  .quiet_stderr = true, .on_line = suite_text_line, .arg = &out };
	int status;
	bool timed_out;
	char *version = NULL;
	if (exec_run(&spec, &status, &timed_out) == 0 && !timed_out && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0 && out.data) {
		char *nl = strchr(out.data, '\n');
		if (nl)
			*nl = '\0';
		version = strdup(out.data);
	}
	free(out.data);
	return version;
}

static int add_tool(struct run *run, const char *name, const char *path, char *why, size_t len)
{
	struct artifact *grown = realloc(run->tools, (run->n_tools + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	run->tools = grown;
	int err = artifact_from_path(ARTIFACT_TOOL, name, path, &run->tools[run->n_tools], why, len);
	if (!err)
		run->n_tools++;
	return err;
}

static void note_version(struct run *run, const char *name, const char *path)
{
	char *version = tool_version(path);
	json_object_set_new(run->tool_versions, name, version ? json_string(version) : json_null());
	free(version);
}

static int prepare_tools(struct run *run, int *problems)
{
	const struct options *opts = run->opts;
	const struct locations *loc = run->loc;
	char why[PATH_MAX + 128];
	int err;

	if (opts->launcher) {
		int rc = wordexp(opts->launcher, &run->launcher_words, WRDE_NOCMD | WRDE_UNDEF);
		if (rc != 0 || run->launcher_words.we_wordc == 0) {
			fprintf(stderr, "krunner: --launcher='%s': cannot split it into words%s\n",
				opts->launcher,
				rc == WRDE_CMDSUB ? " (no command substitution allowed)" : "");
			if (rc == 0)
				wordfree(&run->launcher_words);
			return -EINVAL;
		}
		run->have_launcher = true;
		char path[PATH_MAX];
		const char *cmd = run->launcher_words.we_wordv[0];
		if (find_executable(cmd, path, sizeof(path))) {
			fprintf(stderr, "krunner: missing: launcher %s (not found in PATH); "
				"install it or fix --launcher\n", cmd);
			(*problems)++;
		} else {
			err = add_tool(run, "launcher", path, why, sizeof(why));
			if (err == -ENOMEM)
				return err;
			if (err) {
				fprintf(stderr, "krunner: missing: launcher %s\n", why);
				(*problems)++;
			}
			note_version(run, "launcher", path);
		}
	}
	if (opts->profile == PROFILE_NONE)
		return 0;
	struct {
		const char *name;
		const char *path;
		const char *make;
	} needed[] = {
		{ "kanalyze", loc->kanalyze, "make build/kanalyze" },
		{ opts->profile == PROFILE_PRELOAD ? "libkprof.so" : "kbpf-trace",
		  opts->profile == PROFILE_PRELOAD ? loc->shim : loc->kbpf_trace,
		  opts->profile == PROFILE_PRELOAD ? "make build/libkprof.so"
						   : "make build/kbpf-trace" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
		err = add_tool(run, needed[i].name, needed[i].path, why, sizeof(why));
		if (err == -ENOMEM)
			return err;
		if (err) {
			fprintf(stderr, "krunner: missing: %s (%s)\n    install: %s\n", needed[i].name,
				why, needed[i].make);
			(*problems)++;
		}
	}
	if (opts->profile == PROFILE_BPF && geteuid() != 0) {
		fprintf(stderr, "krunner: --profile=bpf needs root (kbpf-trace loads BPF "
			"programs); run as root or use --profile=preload\n");
		(*problems)++;
	}
	if (!*problems) {
		note_version(run, "kanalyze", loc->kanalyze);
		if (opts->profile == PROFILE_BPF)
			note_version(run, "kbpf-trace", loc->kbpf_trace);
	}
	return 0;
}

static int prepare_suite(struct run *run, struct suite_ctx *ctx, int *problems)
{
	const struct suite *s = ctx->suite;
	ctx->run = run;
	ctx->n_rounds = run->opts->rounds ? run->opts->rounds
			: s->default_rounds ? s->default_rounds : DEFAULT_ROUNDS;
	ctx->warmup_rounds = run->opts->warmup_rounds >= 0 ? run->opts->warmup_rounds
							    : s->warmup_rounds;
	ctx->notes = json_object();
	ctx->tool_versions = json_object();
	ctx->rounds = json_array();
	size_t n_metrics = s->metrics_capacity > s->n_metrics ? s->metrics_capacity : s->n_metrics;
	ctx->values = calloc(n_metrics + 1, sizeof(*ctx->values));
	ctx->plain = calloc(n_metrics + 1, sizeof(*ctx->plain));
	ctx->current = calloc(n_metrics + 1, sizeof(*ctx->current));
	ctx->round_medians = calloc(n_metrics + 1, sizeof(*ctx->round_medians));
	ctx->artifacts = calloc(s->n_artifacts + 1, sizeof(*ctx->artifacts));
	if (!ctx->notes || !ctx->tool_versions || !ctx->rounds || !ctx->values || !ctx->plain || !ctx->current ||
	    !ctx->round_medians || !ctx->artifacts)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_artifacts; i++) {
		char why[PATH_MAX + 128], hint[PATH_MAX];
		int err = artifact_resolve(run->loc, &s->artifacts[i], &ctx->artifacts[ctx->n_artifacts],
					   why, sizeof(why));
		if (err == -ENOMEM)
			return err;
		if (err) {
			fprintf(stderr, "krunner: missing: %s: %s\n    install: %s\n", s->name, why,
				artifact_install_hint(&s->artifacts[i], hint, sizeof(hint)));
			(*problems)++;
			continue;
		}
		if (s->artifacts[i].kind == ARTIFACT_TOOL && !s->artifacts[i].no_version) {
			char *version = tool_version(ctx->artifacts[ctx->n_artifacts].path);
			json_object_set_new(ctx->tool_versions, s->artifacts[i].name,
					    version ? json_string(version) : json_null());
			free(version);
		}
		ctx->n_artifacts++;
	}
	return 0;
}

int run_prepare(struct run *run, const struct options *opts, const struct locations *loc)
{
	int problems = 0, err;
	memset(run, 0, sizeof(*run));
	run->opts = opts;
	run->loc = loc;
	run->progress = isatty(STDERR_FILENO);
	run->tool_versions = json_object();
	run->suites = calloc(opts->n_suites, sizeof(*run->suites));
	if (!run->tool_versions || !run->suites)
		return -ENOMEM;
	json_object_set_new(run->tool_versions, "krunner", json_string(KRUNNER_VERSION));

	for (size_t i = 0; i < opts->n_suites; i++) {
		const struct suite *s = suite_find(opts->suite_names[i]);
		if (!s) {
			fprintf(stderr, "krunner: unknown suite '%s'; known suites:",
				opts->suite_names[i]);
			for (size_t k = 0; k < suite_count(); k++)
				fprintf(stderr, "%s %s", k ? "," : "", suite_at(k)->name);
			fprintf(stderr, " (krunner --list)\n");
			return -EINVAL;
		}
		if (opts->launcher && s->no_launcher) {
			fprintf(stderr, "krunner: --launcher%s cannot apply to the %s suite: %s\n",
				opts->command == COMMAND_AB && opts->b_launcher == opts->launcher
				? " (B's --b-launcher)" : "", s->name, s->no_launcher);
			return -EINVAL;
		}
		run->suites[run->n_suites++].suite = s;
	}
	err = prepare_tools(run, &problems);
	if (err)
		return err;
	for (size_t i = 0; i < run->n_suites; i++) {
		err = prepare_suite(run, &run->suites[i], &problems);
		if (err)
			return err;
	}
	if (problems) {
		fprintf(stderr, "krunner: %d prerequisite%s missing; nothing was run\n", problems,
			problems == 1 ? "" : "s");
		return -ENOENT;
	}

	time_stamp(run->stamp, sizeof(run->stamp));
	time_iso8601(run->start_time, sizeof(run->start_time));
	size_t off = (size_t)snprintf(run->base_name, sizeof(run->base_name), "%s-", run->stamp);
	/* a parameter scan's benchmarks, command[N=1]..., name the file once */
	for (size_t i = 0, shown = 0; i < run->n_suites && off < sizeof(run->base_name); i++) {
		const char *name = run->suites[i].suite->name;
		int len = (int)strcspn(name, "[");
		const char *prev = i ? run->suites[i - 1].suite->name : "";
		if (i && (int)strcspn(prev, "[") == len && strncmp(prev, name, (size_t)len) == 0)
			continue;
		off += (size_t)snprintf(run->base_name + off, sizeof(run->base_name) - off, "%s%.*s",
					shown++ ? "+" : "", len, name);
	}
	if (off >= sizeof(run->base_name) - 16) {
		fprintf(stderr, "krunner: too many suites for one result file name\n");
		return -ENAMETOOLONG;
	}
	if (opts->profile != PROFILE_NONE &&
	    snprintf(run->trace_root, sizeof(run->trace_root), "%s/%s.traces", loc->out_dir,
		     run->base_name) >= (int)sizeof(run->trace_root))
		return -ENAMETOOLONG;
	return 0;
}

/* --- running --- */

/* kanalyze's top syscalls of one round's trace directory. */
static json_t *profile_summary(struct suite_ctx *ctx)
{
	const struct run *run = ctx->run;
	char top[32];
	snprintf(top, sizeof(top), "--top=%d", PROFILE_TOP);
	const char *argv[] = { run->loc->kanalyze, "--format=json", top, ctx->round_trace_dir,
			       NULL };
	struct suite_text out = { 0 };
	struct exec_spec spec = { .argv = argv, .timeout_ms = KANALYZE_TIMEOUT_MS,
				  .quiet_stderr = true, .on_line = suite_text_line, .arg = &out };
	int status;
	bool timed_out;
	json_t *summary = json_object();
	json_t *profile = NULL;
	char text[160], status_text[96];
	int err = exec_run(&spec, &status, &timed_out);
	if (err || timed_out || !WIFEXITED(status) ||
	    (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 2)) {
		snprintf(text, sizeof(text), "kanalyze failed (%s)",
			 err ? strerror(-err) : timed_out ? "timed out" :
			 exec_status_text(status, status_text, sizeof(status_text)));
		goto error;
	}
	json_error_t jerr;
	profile = out.data ? json_loads(out.data, 0, &jerr) : NULL;
	json_t *syscalls = json_object_get(profile, "syscalls");
	if (!json_is_array(syscalls)) {
		snprintf(text, sizeof(text), "kanalyze printed no profile");
		goto error;
	}
	json_t *top_syscalls = json_array();
	size_t i;
	json_t *row;
	json_array_foreach(syscalls, i, row) {
		json_t *entry = json_object();
		static const char *const keys[] = { "name", "nr", "count", "time_ns", "avg_ns",
						    "p50_ns", "retries", "errors" };
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			json_t *v = json_object_get(row, keys[k]);
			if (v)
				json_object_set(entry, keys[k], v);
		}
		json_array_append_new(top_syscalls, entry);
	}
	json_object_set_new(summary, "top_syscalls_by_time", top_syscalls);
	json_t *total = json_object_get(profile, "total");
	if (total)
		json_object_set(summary, "total", total);
	json_t *processes = json_object_get(profile, "processes");
	json_object_set_new(summary, "processes", json_integer((json_int_t)json_array_size(processes)));
	json_object_set_new(summary, "damaged", json_boolean(WEXITSTATUS(status) == 2));
	json_decref(profile);
	free(out.data);
	return summary;
error:
	progress_clear(ctx->run);
	fprintf(stderr, "krunner: %s: round %d: no profile of %s: %s\n", ctx->suite->name,
		ctx->round_number, ctx->round_trace_dir, text);
	json_object_set_new(summary, "error", json_string(text));
	json_decref(profile);
	free(out.data);
	return summary;
}

static int run_round(struct suite_ctx *ctx, int number, bool profiled)
{
	struct run *run = ctx->run;
	const struct suite *s = ctx->suite;
	char start[32];
	int err;

	for (size_t m = 0; m < s->n_metrics; m++)
		ctx->current[m].n = 0;
	ctx->round_number = number;
	ctx->round_profiled = profiled;
	ctx->round_trace_dir[0] = '\0';
	if (profiled) {
		char name[32];
		snprintf(name, sizeof(name), "round-%d", number);
		if (snprintf(ctx->round_trace_dir, sizeof(ctx->round_trace_dir), "%s/%s/%s",
			     run->trace_root, s->name, name) >= (int)sizeof(ctx->round_trace_dir))
			return -ENAMETOOLONG;
		err = run_mkdir_p(ctx->round_trace_dir);
		if (err) {
			suite_fail(ctx, "cannot create %s: %s", ctx->round_trace_dir, strerror(-err));
			return err;
		}
	}
	progress_show(ctx, NULL, 0);
	time_iso8601(start, sizeof(start));
	/* the load around each round, so that compare can say which rounds
	 * ran on a busy machine */
	json_t *state_start = machine_load_json();
	double t0 = now_ms();
	err = s->round(ctx);
	double wall_ms = now_ms() - t0;
	json_t *state_end = machine_load_json();
	if (!err && ctx->error)
		err = -ECHILD;
	for (size_t m = 0; !err && m < s->n_metrics; m++) {
		if (!ctx->current[m].n && !suite_metric_optional(s, m)) {
			suite_fail(ctx, "round %d: no value for metric %s; the round is rejected",
				   number, s->metrics[m].name);
			err = -ENODATA;
		}
	}
	if (err && !ctx->error)
		suite_fail(ctx, "round %d failed: %s", number, strerror(-err));

	json_t *record = json_object();
	json_object_set_new(record, "round", json_integer(number));
	json_object_set_new(record, "profiled", json_boolean(profiled));
	json_object_set_new(record, "start_time", json_string(start));
	json_object_set_new(record, "wall_ms", json_real(wall_ms));
	json_object_set_new(record, "state_start", state_start);
	json_object_set_new(record, "state_end", state_end);
	json_object_set_new(record, "ok", json_boolean(!err));
	if (!err) {
		json_t *values = json_object();
		bool plain = !profiled && run->opts->profile;
		for (size_t m = 0; m < s->n_metrics && !err; m++) {
			const struct value_list *cur = &ctx->current[m];
			if (!cur->n) /* an optional metric these options do not give */
				continue;
			json_t *v = cur->n == 1 ? json_real(cur->v[0]) : json_array();
			for (size_t i = 0; cur->n > 1 && i < cur->n; i++)
				json_array_append_new(v, json_real(cur->v[i]));
			json_object_set_new(values, s->metrics[m].name, v);
			if (number == 0) /* a warm-up round: seen, not kept */
				continue;
			err = value_list_append(plain ? &ctx->plain[m] : &ctx->values[m], cur);
			if (!err && !plain)
				err = value_list_push(&ctx->round_medians[m],
						      stats_median(cur->v, cur->n));
		}
		json_object_set_new(record, "values", values);
		if (number == 0)
			json_object_set_new(record, "warmup", json_true());
		else if (plain)
			ctx->plain_rounds_done = number;
		else
			ctx->rounds_done = number;
	}
	if (profiled) {
		json_object_set_new(record, "trace", json_string(ctx->round_trace_dir));
		json_object_set_new(record, "profile", profile_summary(ctx));
	}
	json_array_append_new(ctx->rounds, record);
	return err;
}

/* A suite's scratch directory and setup; a failure is the suite's. */
static void suite_begin(struct suite_ctx *ctx)
{
	const struct suite *s = ctx->suite;
	const char *tmp = getenv("TMPDIR");
	char scratch[PATH_MAX];

	snprintf(scratch, sizeof(scratch), "%s/krunner-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp",
		 s->name);
	if (!mkdtemp(scratch)) {
		suite_fail(ctx, "cannot create a scratch directory %s: %s", scratch, strerror(errno));
		return;
	}
	ctx->scratch_dir = strdup(scratch);
	if (!ctx->scratch_dir) {
		nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		suite_fail(ctx, "out of memory");
		return;
	}
	if (s->setup) {
		int rc = s->setup(ctx);
		if (rc) {
			if (!ctx->error)
				suite_fail(ctx, "setup failed: %s", strerror(-rc));
			return;
		}
	}
	ctx->setup_done = true;
}

static bool suite_going(const struct suite_ctx *ctx)
{
	return !ctx->error && !exec_interrupted();
}

/* Teardown (when setup ran) and the scratch directory's removal. */
static void suite_finish(struct suite_ctx *ctx)
{
	if (exec_interrupted())
		suite_fail(ctx, "interrupted");
	if (ctx->setup_done && ctx->suite->teardown)
		ctx->suite->teardown(ctx);
	progress_clear(ctx->run);
	if (ctx->scratch_dir)
		nftw(ctx->scratch_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (ctx->error)
		ctx->run->failed_suites++;
}

static int run_suite(struct suite_ctx *ctx)
{
	int err = 0;
	suite_begin(ctx);
	/* with --profile, each profiled round has an unprofiled twin right
	 * after it: the probe effect rests on as many plain values */
	bool profile = ctx->run->opts->profile != PROFILE_NONE;
	for (int w = 0; w < ctx->warmup_rounds && suite_going(ctx); w++)
		if (run_round(ctx, 0, false) == -ENOMEM)
			err = -ENOMEM;
	for (int r = 1; r <= ctx->n_rounds && suite_going(ctx); r++) {
		if (run_round(ctx, r, profile) == -ENOMEM)
			err = -ENOMEM;
		if (profile && suite_going(ctx) && run_round(ctx, r, false) == -ENOMEM)
			err = -ENOMEM;
	}
	suite_finish(ctx);
	return err;
}

/*
 * B's context borrows A's setup (one server, one compiled program, the
 * suite's static state): its scratch directory, notes and the inputs
 * setup fingerprinted, so that compare sees the same fingerprints.
 */
static int share_setup(struct suite_ctx *a, struct suite_ctx *b, size_t declared)
{
	if (a->error) {
		suite_fail(b, "%s", a->error);
		return 0;
	}
	b->scratch_dir = strdup(a->scratch_dir);
	if (!b->scratch_dir || json_object_update(b->notes, a->notes))
		return -ENOMEM;
	for (size_t k = declared; k < a->n_artifacts; k++) {
		int err = suite_add_input(b, a->artifacts[k].name, a->artifacts[k].path);
		if (err)
			return err;
	}
	b->setup_done = true;
	return 0;
}

/* One round of A and one of B, in the order given. */
static int round_pair(struct suite_ctx *first, struct suite_ctx *second, int number)
{
	int err = 0;
	if (run_round(first, number, false) == -ENOMEM)
		err = -ENOMEM;
	if (suite_going(first) && suite_going(second) &&
	    run_round(second, number, false) == -ENOMEM)
		err = -ENOMEM;
	if (second->error && !first->error)
		suite_fail(first, "the other side failed: %s", second->error);
	if (first->error && !second->error)
		suite_fail(second, "the other side failed: %s", first->error);
	return err;
}

static int run_suite_ab(struct suite_ctx *a, struct suite_ctx *b)
{
	int err = 0;
	size_t declared = a->n_artifacts;
	suite_begin(a);
	err = share_setup(a, b, declared);
	for (int w = 0; w < a->warmup_rounds && !err && suite_going(a); w++)
		err = round_pair(a, b, 0);
	/* ABBA: A first in odd rounds, B first in even ones, so that a drift
	 * of the machine or a round's place after the other side's falls on
	 * both alike */
	for (int r = 1; r <= a->n_rounds && !err && suite_going(a); r++)
		err = r % 2 ? round_pair(a, b, r) : round_pair(b, a, r);
	suite_finish(a);
	/* A's teardown was the one, and its scratch directory is gone */
	b->setup_done = false;
	free(b->scratch_dir);
	b->scratch_dir = NULL;
	suite_finish(b);
	return err;
}

static int trace_root_ready(struct run *run)
{
	if (!run->trace_root[0])
		return 0;
	int err = run_mkdir_p(run->trace_root);
	if (err)
		fprintf(stderr, "krunner: cannot create %s: %s\n", run->trace_root, strerror(-err));
	return err;
}

/* The machine's state at the end, and a warning if it was busy. */
static void machine_state_end(struct run *run)
{
	time_iso8601(run->end_time, sizeof(run->end_time));
	run->state_end = machine_state_json();
	int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	run->busy = machine_busy(run->state_start, cores);
	if (run->busy) {
		progress_clear(run);
		fprintf(stderr, "krunner: warning: %s at the start: the values may be noisy\n",
			run->busy);
	}
}

int run_execute_ab(struct run *a, struct run *b)
{
	int err = 0;
	a->state_start = machine_state_json();
	b->state_start = json_deep_copy(a->state_start);
	for (size_t i = 0; i < a->n_suites && !err && !exec_interrupted(); i++)
		err = run_suite_ab(&a->suites[i], &b->suites[i]);
	machine_state_end(a);
	b->state_end = json_deep_copy(a->state_end);
	memcpy(b->end_time, a->end_time, sizeof(b->end_time));
	b->busy = a->busy;
	return err;
}

int run_execute(struct run *run)
{
	int err = trace_root_ready(run);
	if (err)
		return err;
	run->state_start = machine_state_json();
	for (size_t i = 0; i < run->n_suites && !err && !exec_interrupted(); i++)
		err = run_suite(&run->suites[i]);
	machine_state_end(run);
	return err;
}

void run_free(struct run *run)
{
	json_decref(run->state_start);
	json_decref(run->state_end);
	for (size_t i = 0; i < run->n_suites; i++) {
		struct suite_ctx *ctx = &run->suites[i];
		for (size_t k = 0; k < ctx->n_artifacts; k++)
			artifact_free(&ctx->artifacts[k]);
		free(ctx->artifacts);
		free(ctx->scratch_dir);
		for (size_t m = 0; ctx->values && m < ctx->suite->n_metrics; m++) {
			free(ctx->values[m].v);
			free(ctx->plain[m].v);
			free(ctx->current[m].v);
			free(ctx->round_medians[m].v);
		}
		free(ctx->round_medians);
		free(ctx->values);
		free(ctx->plain);
		free(ctx->current);
		free(ctx->error);
		json_decref(ctx->notes);
		json_decref(ctx->tool_versions);
		json_decref(ctx->rounds);
	}
	free(run->suites);
	for (size_t k = 0; k < run->n_tools; k++)
		artifact_free(&run->tools[k]);
	free(run->tools);
	json_decref(run->tool_versions);
	if (run->have_launcher)
		wordfree(&run->launcher_words);
	memset(run, 0, sizeof(*run));
}
