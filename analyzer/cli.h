/* SPDX-License-Identifier: MIT */
/*
 * kanalyze's command line: what the options set (struct cli), read from
 * one table of options (cli.c) that also writes --help.
 */
#ifndef KA_CLI_H
#define KA_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "symbolize.h"
#include "views.h"

/* Exit statuses (kanalyze --help): 1 a failure (no input, no output),
 * 2 a usage error, as every kprof tool */
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define MAX_ASSERTS 32

struct cli {
	struct ka_report_opts opts;
	bool coverage, diff, sites, folded, strict, blocking, by_errno, after_start;
	bool exclude_waits;
	const char *listen, *save, *timeline, *html, *pprof, *flame, *metrics;
	uint64_t refresh_ms, linger_ms, interval_ms;
	uint64_t timeline_max_mb;
	const char *asserts[MAX_ASSERTS];
	size_t n_asserts;
	const char *debug_dirs[KA_DEBUG_DIRS_MAX];
	size_t n_debug_dirs;
	struct ka_filter filter;
};

/* "kanalyze: " FMT, then "Try 'kanalyze --help' for more information."
 * on stderr (GNU's way, as every kprof tool). */
void ka_usage_error(const char *fmt, const char *arg);
/* Reads the options into cli (optind: the first PATH): 0; -1 when --help
 * or --version printed (exit 0); else the exit status of a usage error. */
int ka_parse_cli(int argc, char **argv, struct cli *cli);

#endif
