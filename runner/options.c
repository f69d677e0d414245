/* SPDX-License-Identifier: MIT */
/*
 * options: parsing krunner's command line with getopt_long. The options
 * that suites declare are added to the table at run time, so a new suite's
 * flags need no edit here.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "run.h"
#include "suite.h"

#define SUITE_OPTION_BASE 1000
#define MAX_LONG_OPTIONS 256

enum {
	OPT_SUITE = 's',
	OPT_ROUNDS = 'r',
	OPT_LIST = 'l',
	OPT_HELP = 'h',
	OPT_VERSION = 'V',
	OPT_PROFILE = 256,
	OPT_LAUNCHER,
	OPT_JSON,
	OPT_OUT,
	OPT_PROGRAMS,
	OPT_NOISE,
	OPT_NO_NOISE,
	OPT_FAIL_ON_REGRESSION,
	OPT_ALPHA,
	OPT_THRESHOLD,
	OPT_RUN_NOISE,
	OPT_WARMUP_ROUNDS,
	OPT_B_LAUNCHER,
	OPT_RUNS,
	OPT_WARMUP,
	OPT_PREPARE,
	OPT_SETUP,
	OPT_CLEANUP,
	OPT_EXPORT_JSON,
	OPT_EXPORT_CSV,
	OPT_EXPORT_MARKDOWN,
	OPT_PARSE_METRICS,
	OPT_SCAN = 'P',
	OPT_STEP = 'D',
	OPT_LIST_PARAM = 'L',
};

static const struct option base_options[] = {
	{ "suite", required_argument, NULL, OPT_SUITE },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "launcher", required_argument, NULL, OPT_LAUNCHER },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "programs", required_argument, NULL, OPT_PROGRAMS },
	{ "noise", required_argument, NULL, OPT_NOISE },
	{ "no-noise", no_argument, NULL, OPT_NO_NOISE },
	{ "fail-on-regression", no_argument, NULL, OPT_FAIL_ON_REGRESSION },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "run-noise", required_argument, NULL, OPT_RUN_NOISE },
	{ "warmup-rounds", required_argument, NULL, OPT_WARMUP_ROUNDS },
	{ "b-launcher", required_argument, NULL, OPT_B_LAUNCHER },
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "prepare", required_argument, NULL, OPT_PREPARE },
	{ "setup", required_argument, NULL, OPT_SETUP },
	{ "cleanup", required_argument, NULL, OPT_CLEANUP },
	{ "parameter-scan", required_argument, NULL, OPT_SCAN },
	{ "parameter-step-size", required_argument, NULL, OPT_STEP },
	{ "parameter-list", required_argument, NULL, OPT_LIST_PARAM },
	{ "export-json", required_argument, NULL, OPT_EXPORT_JSON },
	{ "export-csv", required_argument, NULL, OPT_EXPORT_CSV },
	{ "export-markdown", required_argument, NULL, OPT_EXPORT_MARKDOWN },
	{ "parse-metrics", no_argument, NULL, OPT_PARSE_METRICS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
};

static const char usage_head[] =
"Usage: krunner --suite=NAME[,NAME...] [--rounds=N] [OPTIONS]\n"
"       krunner --list\n"
"       krunner compare BEFORE.json AFTER.json [--fail-on-regression] [--noise=FILE]\n"
"       krunner calibrate --suite=NAME[,NAME...] [--rounds=N]\n"
"       krunner run [--runs=N] [--warmup=N] [COMMAND OPTIONS] -- CMD [ARGS...]\n"
"       krunner ab --suite=NAME[,...] [--launcher=A] --b-launcher=B [OPTIONS]\n"
"Run kprof's benchmark suites the same way every time, write a JSON result\n"
"(every value, medians with intervals, host and its load, git head, tool\n"
"versions, SHA-256 of every program and input) and compare two results\n"
"honestly. Suites with sampled metrics take --samples=N (9), --warmups=N (1)\n"
"and --min-time-ms=N (20): values per round, discarded batches, the least\n"
"duration of a batch (its size calibrated first; the metrics' batches are\n"
"taken in turn).\n"
"\n"
"Run options:\n"
"  -s, --suite=LIST        suites to run, comma-separated (see --list)\n"
"  -r, --rounds=N          rounds per suite, each a fresh process (default:\n"
"                          10 for syscall-io, process-lifecycle and\n"
"                          spawn-scratch, 5 for erlang-ring, mariadb-* and\n"
"                          wordpress, 3 for the others; calibrate: 10);\n"
"                          every value of every round is kept, the median\n"
"                          reported with its 95% interval\n"
"      --warmup-rounds=N   rounds run and discarded first (default: 1 for\n"
"                          the application suites, 0 for the others)\n"
"      --profile=MODE      run every round under a profiler: preload\n"
"                          (libkprof.so) or bpf (kbpf-trace, needs root);\n"
"                          records each round's trace and its top syscalls;\n"
"                          each profiled round has an unprofiled twin, for\n"
"                          the probe effect (\"1.3x slower\", either way the\n"
"                          metric is better)\n"
"      --launcher=CMD      run the measured programs as CMD PROGRAM ARGS (a\n"
"                          WebAssembly host, qemu-user, valgrind): the\n"
"                          command, the suites' programs, mariadbd and its\n"
"                          timed clients, php; kernel-build and overhead\n"
"                          refuse it. CMD is split like a shell would,\n"
"                          without expansions\n"
"      --json              print the result JSON on stdout instead of the\n"
"                          summary\n"
"      --out=DIR           where result files go (default: results/ of the\n"
"                          source tree krunner was built in, else ./results)\n"
"      --programs=DIR      where the benchmark programs are (default:\n"
"                          $KRUNNER_PROGRAMS, else build/programs next to\n"
"                          krunner)\n"
"  -l, --list              list the suites with their metrics\n"
"\n"
"Command options (krunner run -- CMD, hyperfine's):\n"
"      --runs=N            timed runs in all, each a fresh process and its\n"
"                          own round (default 10)\n"
"      --warmup=N          runs discarded before them (default 1)\n"
"      --prepare=CMD       shell command before every run, not timed\n"
"      --setup=CMD         shell command once before the first run\n"
"      --cleanup=CMD       shell command once after the last, also after a\n"
"                          failed run or Ctrl-C\n"
"  -P, --parameter-scan VAR MIN MAX   one benchmark per value, {VAR} replaced\n"
"                          in the command and the hooks\n"
"  -D, --parameter-step-size STEP     -P's step (default 1)\n"
"  -L, --parameter-list VAR a,b,c     one benchmark per listed value\n"
"      --export-json=FILE, --export-csv=FILE, --export-markdown=FILE\n"
"                          hyperfine's columns: command, mean, stddev,\n"
"                          median, user, system, min, max, the parameter\n"
"      --parse-metrics     KEY=VALUE lines the command prints are metrics:\n"
"                          _ms _us _ns _s _us_per_op _bytes lower is better,\n"
"                          _mbps _per_sec _ops higher, others kept ungated\n"
"\n"
"Compare options:\n"
"      --fail-on-regression  exit 3 when a metric regressed, else 4 when a\n"
"                          metric has no verdict (the data cannot tell)\n"
"      --noise=FILE        calibrated noise (default: noise.json in the\n"
"                          results directory, if present; compare without\n"
"                          --out first tries the one beside AFTER.json);\n"
"                          calibrate writes it there, and from 3 calibrate\n"
"                          runs on, each metric's between-run noise\n"
"      --no-noise          ignore calibrated noise\n"
"      --threshold=PCT     smallest change called a regression (default 5)\n"
"      --run-noise=X       between-run noise of two separate runs, as X times\n"
"                          the rounds' spread, where none is calibrated\n"
"                          (default 1.0; 0: none)\n"
"      --alpha=P           1 - the intervals' confidence (default 0.05)\n"
"\n"
"A/B options (krunner ab: the run and compare options too):\n"
"      --b-launcher=CMD    B runs the suite programs as CMD PROGRAM ARGS; A\n"
"                          as --launcher says (default: directly). Without\n"
"                          it B is A: an A/A run, the gate's false alarms\n"
"\n"
"  -h, --help              this help\n"
"  -V, --version           version\n";

static const char usage_tail[] =
"\n"
"A result file is results/<UTC time>-<suites>.json, written atomically; with\n"
"--profile the traces go to results/<UTC time>-<suites>.traces/SUITE/round-N.\n"
"compare prints a markdown table with one verdict per metric. A round is a\n"
"fresh process, the unit: the change is After over Before, the ratio of the\n"
"geometric means of the round medians, with a 95% interval (Welch's t on\n"
"their logs, widened by the between-run noise of two separate runs), the\n"
"smallest change the rounds could detect (80% power) and the verdict:\n"
"regression (worse beyond --threshold, the interval on the worse side), no\n"
"regression (the interval's worse end within the threshold) or no verdict.\n"
"Each side's busy rounds (load at a round's start or end) are named.\n"
"Programs or inputs that differ (SHA-256: a rebuilt binary) are named and\n"
"compared; a different host, suite settings or tool versions are warned of.\n"
"ab runs A and B in one run, their rounds interleaved ABBA (A first in odd\n"
"rounds, B in even ones) after one shared setup, writes both results\n"
"(<UTC time>-<suites>-A.json and -B.json) and compares them as compare\n"
"does: the machine's drift between two separate runs, often larger than the\n"
"change sought, falls on both sides alike.\n"
"calibrate runs A/A rounds and stores each metric's noise and the run's level\n"
"(mean log round median), with the host and suite settings, in noise.json;\n"
"from 3 runs on, the levels' spread beyond their rounds' is the metric's\n"
"between-run noise, which compare then uses for separate runs.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  missing program, input or tool (reported before any workload runs,\n"
"     no result file), unreadable or corrupt result file, or the result\n"
"     could not be written\n"
"  2  usage error (an option, an unknown suite), as every kprof tool\n"
"  5  a workload failed: the suite is marked failed in the result file and\n"
"     none of its metrics are reported\n"
"  3  compare or ab with --fail-on-regression: a metric regressed\n"
"  4  compare or ab with --fail-on-regression: no regression, but a metric\n"
"     without a verdict (too few rounds, too noisy)\n"
"  130  interrupted (SIGINT/SIGTERM): the running suite was torn down, no\n"
"     result written\n"
"\n"
"Examples:\n"
"  krunner --list\n"
"  krunner --suite=syscall-io --rounds=5\n"
"  krunner --suite=syscall-io,process-lifecycle,spawn-scratch --profile=preload\n"
"  krunner --suite=process-lifecycle --launcher='valgrind --tool=none -q'\n"
"  krunner calibrate --suite=syscall-io --rounds=10\n"
"  krunner compare results/A.json results/B.json --fail-on-regression\n"
"  krunner run --runs=20 -- node app.js     # any command, hyperfine-style\n"
"  krunner run -P n 1 4 --export-markdown=n.md -- ./app --threads={n}\n"
"  krunner run --setup='srv & echo $! >p' --cleanup='kill $(cat p)' -- client\n"
"  krunner run --profile=preload -- node app.js\n"
"  krunner ab --suite=process-lifecycle --b-launcher='env LD_PRELOAD=build/libkprof.so'\n"
"  krunner ab --launcher='node old/host.js' --b-launcher='node new/host.js' -- prog\n"
"  krunner --suite=spawn-scratch --json | jq '.suites[0].metrics.spawn_ms.median'\n";

static bool suite_option_is_switch(const struct suite_option *o)
{
	return strcmp(o->default_value, "0") == 0 || strcmp(o->default_value, "1") == 0;
}

/* Each suite option once, with the suites that read it. */
static void print_help(void)
{
	fputs(usage_head, stdout);
	bool printed_header = false;
	for (size_t i = 0; i < suite_count(); i++) {
		const struct suite *s = suite_at(i);
		for (size_t j = 0; j < s->n_options; j++) {
			const struct suite_option *o = &s->options[j];
			bool seen = false;
			for (size_t k = 0; k < i && !seen; k++)
				for (size_t l = 0; l < suite_at(k)->n_options; l++)
					seen |= strcmp(suite_at(k)->options[l].name, o->name) == 0;
			if (seen)
				continue;
			if (!printed_header) {
				printf("\nSuite options (any suite's own flags):\n");
				printed_header = true;
			}
			printf("      --%s%s\n                          %s (default %s; ", o->name,
			       suite_option_is_switch(o) ? "[=0|1]" : "=VALUE", o->help, o->default_value);
			const char *sep = "";
			for (size_t k = i; k < suite_count(); k++)
				for (size_t l = 0; l < suite_at(k)->n_options; l++)
					if (strcmp(suite_at(k)->options[l].name, o->name) == 0) {
						printf("%s%s", sep, suite_at(k)->name);
						sep = ", ";
					}
			printf(")\n");
		}
	}
	fputs(usage_tail, stdout);
}

__attribute__((format(printf, 1, 2)))
static void usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "krunner: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'krunner --help' for more information.\n");
	va_end(ap);
}

static int add_suite(struct options *opts, const char *name)
{
	for (size_t i = 0; i < opts->n_suites; i++)
		if (strcmp(opts->suite_names[i], name) == 0)
			return 0;
	char **grown = realloc(opts->suite_names, (opts->n_suites + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	opts->suite_names = grown;
	opts->suite_names[opts->n_suites] = strdup(name);
	if (!opts->suite_names[opts->n_suites])
		return -ENOMEM;
	opts->n_suites++;
	return 0;
}

static int split_suites(const char *list, struct options *opts)
{
	char *copy = strdup(list);
	int err = copy ? 0 : -ENOMEM;
	for (char *save = NULL, *name = copy ? strtok_r(copy, ",", &save) : NULL; name && !err;
	     name = strtok_r(NULL, ",", &save))
		err = add_suite(opts, name);
	free(copy);
	return err;
}

static int parse_double(const char *arg, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* The long option table: krunner's own, then each distinct suite option. */
static int build_table(struct option *table, const char **suite_option_names)
{
	size_t n = 0;
	for (size_t i = 0; i < sizeof(base_options) / sizeof(base_options[0]); i++)
		table[n++] = base_options[i];
	size_t n_suite = 0;
	for (size_t i = 0; i < suite_count(); i++) {
		const struct suite *s = suite_at(i);
		for (size_t j = 0; j < s->n_options; j++) {
			const char *name = s->options[j].name;
			bool seen = false;
			for (size_t k = 0; k < n; k++)
				seen |= strcmp(table[k].name, name) == 0;
			if (seen)
				continue;	/* shared by suites, or shadowed by ours */
			if (n == MAX_LONG_OPTIONS - 1)
				return -E2BIG;
			suite_option_names[n_suite] = name;
			int has_arg = suite_option_is_switch(&s->options[j]) ? optional_argument
									      : required_argument;
			table[n++] = (struct option){ name, has_arg, NULL,
						      SUITE_OPTION_BASE + (int)n_suite };
			n_suite++;
		}
	}
	table[n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

/* A whole number: what an option whose default is one takes. */
static bool is_count(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * Suite options given must belong to a selected suite and, where the
 * default is a whole number, be one: a mistyped value or an option of a
 * suite that does not run is a usage error, before anything runs.
 */
static int check_suite_options(const struct options *opts)
{
	const char *names[MAX_LONG_OPTIONS], *values[MAX_LONG_OPTIONS];
	size_t n = suite_options_given(names, values, MAX_LONG_OPTIONS);
	for (size_t i = 0; i < n; i++) {
		const struct suite_option *decl = NULL;
		const struct suite *owner = NULL;
		for (size_t k = 0; k < opts->n_suites && !decl; k++) {
			const struct suite *s = suite_find(opts->suite_names[k]);
			for (size_t j = 0; s && j < s->n_options && !decl; j++)
				if (strcmp(s->options[j].name, names[i]) == 0)
					decl = &s->options[j];
		}
		if (!decl) {
			for (size_t k = 0; k < suite_count() && !owner; k++)
				for (size_t j = 0; j < suite_at(k)->n_options; j++)
					if (strcmp(suite_at(k)->options[j].name, names[i]) == 0)
						owner = suite_at(k);
			usage_error("--%s is an option of the %s suite, which is not selected",
				    names[i], owner ? owner->name : "?");
			return -EINVAL;
		}
		if (is_count(decl->default_value) && !is_count(values[i])) {
			usage_error("--%s wants a whole number, not '%s'", names[i], values[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* A -P/-L scan as given: the variable and its range or list. */
struct scan {
	const char *var, *min, *max, *step, *list;
};

static int push_value(struct command_options *c, const char *text)
{
	char **grown = realloc(c->values, (c->n_values + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	c->values = grown;
	if (!(c->values[c->n_values] = strdup(text)))
		return -ENOMEM;
	c->n_values++;
	return 0;
}

#define MAX_SCAN_VALUES 1000

/* -P VAR MIN MAX [-D STEP]: whole numbers when all three are; -L VAR a,b,c. */
static int scan_values(const struct scan *sc, struct command_options *c)
{
	char buf[64];
	int err = 0;
	c->param = sc->var;
	if (!*sc->var || !suite_metric_key(sc->var, strlen(sc->var))) {
		usage_error("a parameter's name is letters, digits and _, not '%s'", sc->var);
		return -EINVAL;
	}
	if (sc->list) {
		char *copy = strdup(sc->list);
		for (char *save = NULL, *v = copy ? strtok_r(copy, ",", &save) : NULL; v && !err;
		     v = strtok_r(NULL, ",", &save))
			err = push_value(c, v);
		free(copy);
		if (!err && !c->n_values) {
			usage_error("--parameter-list %s wants values: a,b,c", sc->var);
			return -EINVAL;
		}
		return err;
	}
	double min, max, step = 1;
	if (parse_double(sc->min, -1e15, 1e15, &min) || parse_double(sc->max, -1e15, 1e15, &max) ||
	    (sc->step && parse_double(sc->step, 1e-12, 1e15, &step)) || max < min) {
		usage_error("--parameter-scan %s %s %s%s%s wants numbers MIN <= MAX and a step "
			    "above 0", sc->var, sc->min, sc->max, sc->step ? " -D " : "",
			    sc->step ? sc->step : "");
		return -EINVAL;
	}
	bool whole = min == (long long)min && max == (long long)max && step == (long long)step;
	double count = floor((max - min) / step + 1e-9) + 1;
	if (count > MAX_SCAN_VALUES) {
		usage_error("--parameter-scan gives %.0f values, more than %d", count,
			    MAX_SCAN_VALUES);
		return -EINVAL;
	}
	for (int i = 0; i < (int)count && !err; i++) {
		double v = min + i * step;
		if (whole)
			snprintf(buf, sizeof(buf), "%lld", (long long)v);
		else
			snprintf(buf, sizeof(buf), "%.10g", v);
		err = push_value(c, buf);
	}
	return err;
}

/* The options of krunner run -- CMD only, given without a command. */
static int check_command_only(const struct options *opts, bool runs, bool warmup, bool scan)
{
	const char *given = runs ? "--runs" : warmup ? "--warmup" : scan ? "-P/-L" :
			    opts->cmd.prepare ? "--prepare" : opts->cmd.setup ? "--setup" :
			    opts->cmd.cleanup ? "--cleanup" : opts->cmd.parse_metrics ? "--parse-metrics" :
			    opts->export_json ? "--export-json" : opts->export_csv ? "--export-csv" :
			    opts->export_markdown ? "--export-markdown" : NULL;
	if (!given || (opts->command_argv && (opts->command == COMMAND_RUN ||
					     opts->command == COMMAND_AB)))
		return 0;
	usage_error("%s is for a command: krunner run [OPTIONS] -- CMD ARGS%s", given,
		    runs ? " (suites take --rounds)" : warmup ? " (suites take --warmup-rounds)" : "");
	return -EINVAL;
}

/* The operand after an option that takes more than one (-P VAR MIN MAX). */
static const char *next_operand(int argc, char **argv, const char *option)
{
	if (optind >= argc || strcmp(argv[optind], "--") == 0) {
		usage_error("%s wants more values", option);
		return NULL;
	}
	return argv[optind++];
}

int options_parse(int argc, char **argv, struct options *opts)
{
	static struct option table[MAX_LONG_OPTIONS];
	static const char *suite_option_names[MAX_LONG_OPTIONS];
	bool rounds_given = false, runs_given = false, warmup_given = false;
	struct scan scan = { 0 };
	int err;

	memset(opts, 0, sizeof(*opts));
	opts->command = COMMAND_RUN;
	opts->rounds = 0; /* each suite's default */
	opts->warmup_rounds = -1;
	opts->alpha = 0.05;
	opts->threshold = 0.05;
	opts->run_noise = -1;
	opts->argc = argc;
	opts->argv = argv;
	if (argc > 1 && argv[1][0] != '-') {
		if (strcmp(argv[1], "compare") == 0)
			opts->command = COMMAND_COMPARE;
		else if (strcmp(argv[1], "calibrate") == 0)
			opts->command = COMMAND_CALIBRATE;
		else if (strcmp(argv[1], "ab") == 0)
			opts->command = COMMAND_AB;
		else if (strcmp(argv[1], "list") == 0)
			opts->command = COMMAND_LIST;
		else if (strcmp(argv[1], "run") != 0) {
			usage_error("unknown command '%s'", argv[1]);
			return -EINVAL;
		}
		argv++;
		argc--;
	}
	err = build_table(table, suite_option_names);
	if (err) {
		fprintf(stderr, "krunner: too many suite options\n");
		return err;
	}
	optind = 1;
	opterr = 0; /* said here, as krunner: */
	for (;;) {
		int c = getopt_long(argc, argv, ":s:r:lhVP:D:L:", table, NULL);
		if (c == -1)
			break;
		switch (c) {
		case OPT_SUITE:
			err = split_suites(optarg, opts);
			if (err)
				return err;
			break;
		case OPT_ROUNDS: {
			double rounds;
			if (parse_double(optarg, 1, 10000, &rounds) || rounds != (int)rounds) {
				usage_error("--rounds wants a whole number from 1 to 10000, not '%s'",
					    optarg);
				return -EINVAL;
			}
			opts->rounds = (int)rounds;
			rounds_given = true;
			break;
		}
		case OPT_WARMUP_ROUNDS: {
			double w;
			if (parse_double(optarg, 0, 100, &w) || w != (int)w) {
				usage_error("--warmup-rounds wants a whole number from 0 to 100, not '%s'",
					    optarg);
				return -EINVAL;
			}
			opts->warmup_rounds = (int)w;
			break;
		}
		case OPT_RUNS:
		case OPT_WARMUP: {
			double n;
			bool runs = c == OPT_RUNS;
			if (parse_double(optarg, runs ? 1 : 0, 10000, &n) || n != (int)n) {
				usage_error("--%s wants a whole number from %d to 10000, not '%s'",
					    runs ? "runs" : "warmup", runs ? 1 : 0, optarg);
				return -EINVAL;
			}
			if (runs) {
				opts->rounds = (int)n;
				runs_given = true;
			} else {
				opts->warmup_rounds = (int)n;
				warmup_given = true;
			}
			break;
		}
		case OPT_PREPARE:
			opts->cmd.prepare = optarg;
			break;
		case OPT_SETUP:
			opts->cmd.setup = optarg;
			break;
		case OPT_CLEANUP:
			opts->cmd.cleanup = optarg;
			break;
		case OPT_PARSE_METRICS:
			opts->cmd.parse_metrics = true;
			break;
		case OPT_EXPORT_JSON:
			opts->export_json = optarg;
			break;
		case OPT_EXPORT_CSV:
			opts->export_csv = optarg;
			break;
		case OPT_EXPORT_MARKDOWN:
			opts->export_markdown = optarg;
			break;
		case OPT_SCAN:
		case OPT_LIST_PARAM:
			if (scan.var) {
				usage_error("one parameter scan at a time (-P or -L once)%s", "");
				return -EINVAL;
			}
			scan.var = optarg;
			if (c == OPT_SCAN && (!(scan.min = next_operand(argc, argv, "-P VAR MIN MAX")) ||
					      !(scan.max = next_operand(argc, argv, "-P VAR MIN MAX"))))
				return -EINVAL;
			if (c == OPT_LIST_PARAM &&
			    !(scan.list = next_operand(argc, argv, "-L VAR a,b,c")))
				return -EINVAL;
			break;
		case OPT_STEP:
			scan.step = optarg;
			break;
		case OPT_LIST:
			opts->command = COMMAND_LIST;
			break;
		case OPT_PROFILE:
			if (strcmp(optarg, "preload") == 0)
				opts->profile = PROFILE_PRELOAD;
			else if (strcmp(optarg, "bpf") == 0)
				opts->profile = PROFILE_BPF;
			else {
				usage_error("--profile is preload or bpf, not '%s'", optarg);
				return -EINVAL;
			}
			break;
		case OPT_LAUNCHER:
			opts->launcher = optarg;
			break;
		case OPT_B_LAUNCHER:
			opts->b_launcher = optarg;
			break;
		case OPT_JSON:
			opts->json = true;
			break;
		case OPT_OUT:
			opts->out_dir = optarg;
			break;
		case OPT_PROGRAMS:
			opts->programs_dir = optarg;
			break;
		case OPT_NOISE:
			opts->noise_path = optarg;
			break;
		case OPT_NO_NOISE:
			opts->no_noise = true;
			break;
		case OPT_FAIL_ON_REGRESSION:
			opts->fail_on_regression = true;
			break;
		case OPT_ALPHA:
			if (parse_double(optarg, 1e-9, 1, &opts->alpha)) {
				usage_error("--alpha wants a probability in (0, 1], not '%s'", optarg);
				return -EINVAL;
			}
			break;
		case OPT_THRESHOLD:
			if (parse_double(optarg, 0, 1000, &opts->threshold)) {
				usage_error("--threshold wants a percentage, not '%s'", optarg);
				return -EINVAL;
			}
			opts->threshold /= 100;
			break;
		case OPT_RUN_NOISE:
			if (parse_double(optarg, 0, 100, &opts->run_noise)) {
				usage_error("--run-noise wants a number from 0 to 100, not '%s'",
					    optarg);
				return -EINVAL;
			}
			break;
		case OPT_HELP:
			print_help();
			return 1;
		case OPT_VERSION:
			printf("krunner (kprof) %s\n", KRUNNER_VERSION);
			return 1;
		default:
			if (c >= SUITE_OPTION_BASE && c < SUITE_OPTION_BASE + MAX_LONG_OPTIONS) {
				if (suite_option_set(suite_option_names[c - SUITE_OPTION_BASE],
						      optarg ? optarg : "1")) {
					fprintf(stderr, "krunner: too many suite options\n");
					return -E2BIG;
				}
				break;
			}
			usage_error(c == ':' ? "option '%s' needs a value" : "unknown option '%s'",
				    argv[optind - 1]);
			return -EINVAL;
		}
	}

	int rest = argc - optind;
	switch (opts->command) {
	case COMMAND_COMPARE:
		if (rest != 2) {
			usage_error("compare wants two result files, got %s",
				    rest < 2 ? "fewer" : "more");
			return -EINVAL;
		}
		opts->before = argv[optind];
		opts->after = argv[optind + 1];
		return 0;
	case COMMAND_CALIBRATE:
		if (!rounds_given)
			opts->rounds = 10;
		if (opts->rounds < 2) {
			usage_error("calibrate needs at least 2 rounds%s", "");
			return -EINVAL;
		}
		if (opts->profile != PROFILE_NONE) {
			usage_error("calibrate measures plain runs; drop --profile%s", "");
			return -EINVAL;
		}
		break;
	case COMMAND_LIST:
		break;
	case COMMAND_AB:
		if (opts->profile != PROFILE_NONE) {
			usage_error("ab compares plain runs; drop --profile%s", "");
			return -EINVAL;
		}
		/* suites, or a command after --, as for run */
		__attribute__((fallthrough));
	case COMMAND_RUN:
		if (rest > 0 && strcmp(argv[optind - 1], "--") == 0) {
			if (opts->n_suites) {
				usage_error("give suites or a command after --, not both%s", "");
				return -EINVAL;
			}
			opts->command_argv = &argv[optind];
			if (rounds_given && runs_given) {
				usage_error("give --runs (timed runs of the command), not --rounds too%s", "");
				return -EINVAL;
			}
			if (scan.step && !scan.min) {
				usage_error("-D/--parameter-step-size goes with -P VAR MIN MAX%s", "");
				return -EINVAL;
			}
			if (scan.var && (err = scan_values(&scan, &opts->cmd)))
				return err;
			err = suite_command_set((const char *const *)opts->command_argv, &opts->cmd);
			for (size_t i = 0; !err && i < suite_command_count(); i++)
				err = add_suite(opts, suite_command_name(i));
			if (err)
				return err;
			rest = 0;
		} else if (opts->n_suites == 1 && strcmp(opts->suite_names[0], "command") == 0) {
			usage_error("the command suite times what follows --: krunner run -- CMD ARGS%s", "");
			return -EINVAL;
		}
		break;
	}
	if (rest > 0) {
		usage_error("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	err = check_command_only(opts, runs_given, warmup_given, scan.var != NULL);
	if (err)
		return err;
	if (opts->b_launcher && opts->command != COMMAND_AB) {
		usage_error("--b-launcher is for krunner ab%s", "");
		return -EINVAL;
	}
	if ((opts->command == COMMAND_RUN || opts->command == COMMAND_CALIBRATE ||
	     opts->command == COMMAND_AB) && opts->n_suites == 0) {
		usage_error("which suite? give --suite=NAME (krunner --list shows them)%s", "");
		return -EINVAL;
	}
	return check_suite_options(opts);
}

void options_free(struct options *opts)
{
	for (size_t i = 0; i < opts->n_suites; i++)
		free(opts->suite_names[i]);
	free(opts->suite_names);
	opts->suite_names = NULL;
	for (size_t i = 0; i < opts->cmd.n_values; i++)
		free(opts->cmd.values[i]);
	free(opts->cmd.values);
	opts->cmd.values = NULL;
	opts->cmd.n_values = 0;
	opts->n_suites = 0;
}
