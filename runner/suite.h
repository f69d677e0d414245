/* SPDX-License-Identifier: MIT */
/*
 * The suite interface. A suite is one file in runner/ that fills a struct
 * suite and registers it with SUITE_REGISTER(); nothing else in the runner
 * names it. It declares what it measures (metrics with unit and direction),
 * what it needs (artifacts: programs built from programs/, input files,
 * tools from PATH with the package that provides them) and any options of
 * its own (they become krunner --NAME=VALUE flags). krunner resolves and
 * fingerprints every artifact before any workload runs; a missing one stops
 * the run with its install command.
 *
 * One round = one call of suite->round(ctx). The round runs its workload
 * through suite_run() (which applies --launcher and --profile and collects
 * the key=value lines the program prints) or records a value it measured
 * itself with suite_metric(). krunner rejects the round unless every
 * declared metric was produced exactly once, finite and not negative, and
 * every program exited with status 0.
 */
#ifndef KRUNNER_SUITE_H
#define KRUNNER_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include "profiler.h"

enum metric_direction {
	HIGHER_IS_BETTER,
	LOWER_IS_BETTER,
	/* A metric a command printed whose name says neither (krunner run
	 * --parse-metrics): kept in the result apart, never gated. */
	DIRECTION_UNKNOWN,
};

struct metric_def {
	const char *name;		/* key printed by the program: pipe_mbps */
	const char *unit;		/* MB/s, us, ms, bytes */
	enum metric_direction direction;
	const char *description;
};

enum artifact_kind {
	ARTIFACT_PROGRAM,	/* programs/NAME.c built to <programs dir>/NAME */
	ARTIFACT_INPUT,		/* a file: absolute, or relative to the source tree */
	ARTIFACT_TOOL,		/* an executable looked up in PATH (erl, mariadbd) */
};

struct artifact_def {
	enum artifact_kind kind;
	const char *name;	/* program or tool name, or the input's path */
	/* How to get it when missing, shown to the user. NULL for a program
	 * means "make build/programs/NAME". For a tool, name the Debian
	 * package: "apt-get install erlang-base". */
	const char *install;
	/* A tool whose `--version` must not be asked (it would run something:
	 * erl starts a shell, a user's command is the benchmark itself). */
	bool no_version;
};

struct suite_option {
	const char *name;		/* --NAME=VALUE on krunner's command line */
	const char *default_value;
	const char *help;
};
/* An option whose default is "0" or "1" is a switch: --NAME alone means
 * --NAME=1 (and a value needs the = form: --NAME=0). */

struct suite_ctx;

struct suite {
	const char *name;		/* lower-case, dashes: syscall-io */
	const char *description;	/* one line for --list */
	const struct metric_def *metrics;
	size_t n_metrics;
	/* Metrics from this index on are given only with some suite options
	 * (their descriptions say which): a round without a value for one is
	 * not rejected, and a result without values leaves it out. 0: none. */
	size_t first_optional_metric;
	/* A suite that declares metrics while it runs (the command suite's
	 * --parse-metrics) grows n_metrics up to this; 0: n_metrics. */
	size_t metrics_capacity;
	const struct artifact_def *artifacts;
	size_t n_artifacts;
	const struct suite_option *options;
	size_t n_options;
	/* Rounds (fresh processes) without --rounds; 0: krunner's 3. */
	int default_rounds;
	/* Rounds run and discarded before the first, without --warmup-rounds
	 * (an application's caches, a server's first requests). */
	int warmup_rounds;
	/* Why --launcher cannot apply to this suite (said, and the run
	 * refused before anything runs); NULL: it wraps the programs whose
	 * time is a metric. */
	const char *no_launcher;
	/* Optional: once before the first round (scratch directories, servers,
	 * tool versions via suite_note()). 0 or -errno. */
	int (*setup)(struct suite_ctx *ctx);
	/* One round. 0 or -errno; a failed round fails the suite. */
	int (*round)(struct suite_ctx *ctx);
	/* Optional: always called after setup succeeded, also after a failure. */
	void (*teardown)(struct suite_ctx *ctx);
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline bool suite_metric_optional(const struct suite *s, size_t m)
{
	return s->first_optional_metric && m >= s->first_optional_metric;
}

/* A suite's three tables with their lengths, in a struct suite initializer. */
#define SUITE_TABLES(metrics_, artifacts_, options_)                           \
	.metrics = (metrics_), .n_metrics = ARRAY_SIZE(metrics_),             \
	.artifacts = (artifacts_), .n_artifacts = ARRAY_SIZE(artifacts_),     \
	.options = (options_), .n_options = ARRAY_SIZE(options_)

/*
 * The options of a suite whose program takes its values with
 * programs/sampler.h: values per metric and round, warm-up batches, and
 * the least time of a batch, whose size the program calibrates first.
 */
#define SUITE_SAMPLER_OPTIONS                                                  \
	{ "samples", "9", "values per metric and round, each a batch of operations; the batches of a program's metrics taken in turn" }, \
	{ "warmups", "1", "batches discarded per metric and round, after calibrating" }, \
	{ "min-time-ms", "20", "least duration of a batch: its size is calibrated in a first, discarded pass" }
/* Their rounds: values from many fresh processes weigh more than many
 * from one (a process's luck is shared by its values). */
#define SUITE_SAMPLER_ROUNDS 10
/* Rounds of an application suite (one value per metric per round, a
 * fresh server or VM each): with 5 against 5 values the rank test's
 * smallest two-sided p is 0.008 (4 against 4: 0.029, 3 against 3: 0.1),
 * so compare can gate them with the defaults. */
#define SUITE_APP_ROUNDS 5

/* Registers a suite at program start (before main). */
#define SUITE_REGISTER(s)						\
	__attribute__((constructor)) static void register_##s(void)	\
	{								\
		suite_register(&(s));					\
	}

void suite_register(const struct suite *suite);

/* `krunner run -- CMD ARGS` (suite_command.c): the hooks and scan. */
struct command_options {
	const char *prepare;		/* shell command before every run */
	const char *setup;		/* once before the first */
	const char *cleanup;		/* once after the last, also after a failure */
	const char *param;		/* -P/-L: {param} in the command and hooks */
	char **values;			/* its values, one benchmark each */
	size_t n_values;		/* 0: no scan, one benchmark "command" */
	bool parse_metrics;		/* KEY=VALUE lines of the output are metrics */
};
/* Registers the benchmarks (one per value: "command[VAR=value]"). 0 or -errno. */
int suite_command_set(const char *const *argv, const struct command_options *options);
size_t suite_command_count(void);
const char *suite_command_name(size_t i);
/* The i-th benchmark's command line ({VAR} replaced) and parameter value. */
const char *const *suite_command_argv(size_t i);
const char *suite_command_value(size_t i);
/* Whether s[0..len) is a metric name: [A-Za-z_][A-Za-z0-9_]*. */
bool suite_metric_key(const char *s, size_t len);
/* A program's output line as a metric: 0 when it is no KEY=... line (the
 * program talking); 1 with *key_len and *value for KEY=NUMBER (blanks after
 * the number allowed); -1 for a KEY= line whose value is no number. */
int suite_metric_line(const char *line, size_t *key_len, double *value);

/* Registered suites, sorted by name. */
size_t suite_count(void);
const struct suite *suite_at(size_t i);
const struct suite *suite_find(const char *name);

/* --- for use inside setup/round/teardown --- */

/* The resolved absolute path of an artifact declared by the suite. */
const char *suite_artifact_path(struct suite_ctx *ctx, const char *name);
/* The value of one of the suite's options (its default if not given). */
const char *suite_option(struct suite_ctx *ctx, const char *name);
/* A scratch directory for this suite, removed after teardown. */
const char *suite_scratch_dir(struct suite_ctx *ctx);
/* Runs argv (argv[0] a path) under the launcher and the profiler; the
 * key=value lines it prints become this round's metrics. 0, or -errno
 * (-ECHILD: the program failed or printed a metric twice). */
int suite_run(struct suite_ctx *ctx, const char *const argv[]);
/* The sampler options as arguments: --samples=, --warmups=, --min-time-ms=. */
#define SUITE_SAMPLER_ARGS 3
void suite_sampler_args(struct suite_ctx *ctx, char args[SUITE_SAMPLER_ARGS][48]);
/* suite_run of the artifact PROGRAM with --hello=<the hello artifact> and
 * the sampler options (programs/hello_args.h). */
int suite_run_hello(struct suite_ctx *ctx, const char *program);
/* A command's output collected line by line: pass suite_text_line as
 * the line callback and a zeroed struct suite_text; free(data) after. */
struct suite_text {
	char *data;
	size_t len, cap;
};
int suite_text_line(void *text, const char *line);
/* Records a metric measured by the suite itself. 0 or -errno. */
int suite_metric(struct suite_ctx *ctx, const char *name, double value);
/* An input found only at setup (a file matched by a pattern), fingerprinted
 * like a declared artifact so that compare knows when it differs. 0 or
 * -errno (message printed). */
int suite_add_input(struct suite_ctx *ctx, const char *name, const char *path);
/* Adds "key": "value" to the suite's notes in the result (a tool version,
 * a configuration detail). 0 or -errno. */
int suite_note(struct suite_ctx *ctx, const char *key, const char *value);
/* Records the suite's first failure (it goes into the result and fails
 * the run) and says it on stderr. */
__attribute__((format(printf, 2, 3)))
void suite_fail(struct suite_ctx *ctx, const char *fmt, ...);
/* The current round, 1-based (with --profile, a profiled round and its
 * unprofiled twin have the same number). */
int suite_round_number(struct suite_ctx *ctx);
/* With --profile: whether this is the unprofiled twin of a round. */
bool suite_round_unprofiled(struct suite_ctx *ctx);
/*
 * The round's profiler (--profile; mode PROFILE_NONE in an unprofiled
 * round), writing into the round's trace directory; interval_ms: the
 * shim's flush interval unless the environment sets one (NULL: its
 * default). Also the profilers a suite applies itself start from it.
 */
struct profiler suite_profiler(struct suite_ctx *ctx, const char *interval_ms);
/* Any of kprof's profilers, writing into trace_dir (events and gzip: the
 * default): the overhead suite's rows. */
struct profiler suite_profiler_of(struct suite_ctx *ctx, enum profile_mode mode,
				  const char *trace_dir);
/* True once krunner got SIGINT or SIGTERM: a suite waiting on something
 * of its own (a server, a build) stops it and returns -EINTR; teardown
 * follows. */
bool suite_interrupted(void);
/* A directory of the run's own next to its result file, for reports and
 * logs a suite writes: <out>/<run stamp>-<name>, created. 0 or -errno. */
int suite_result_dir(struct suite_ctx *ctx, const char *name, char *path, size_t len);

#endif
