/* SPDX-License-Identifier: MIT */
/*
 * The columns of a profile row, as data: each column's key in the machine
 * formats (CSV, JSON), its titles in the text table and in Markdown and
 * HTML, its unit, and when it is shown. A format is a list of column ids
 * in its order plus a thin writer (report_table.c, report_markdown.c,
 * report_csv.c, report_json.c, html.c), as hyperfine's export/markup.rs
 * builds one table for several markups. A new counter (record_schema.h)
 * reaches every output by one row in columns.c and its id in the lists of
 * the formats that show it.
 */
#ifndef KANALYZE_COLUMNS_H
#define KANALYZE_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "report.h"

enum ka_col {
	KA_COL_NAME, KA_COL_NR, KA_COL_COUNT, KA_COL_CALLS_PER_S, KA_COL_MS_PER_S,
	KA_COL_TIME, KA_COL_OFF_CPU, KA_COL_AVG, KA_COL_MIN, KA_COL_MAX,
	KA_COL_RETRIES, KA_COL_ERRORS, KA_COL_ERRNO, KA_COL_P50, KA_COL_P90,
	KA_COL_P99, KA_COLS
};

/* When the human formats (table, Markdown, HTML) show a column. */
enum ka_col_when {
	KA_SHOWN_ALWAYS,
	KA_SHOWN_ERRORS,	/* --errors */
	KA_SHOWN_PERCENTILES,	/* --percentiles */
	KA_SHOWN_OFF_CPU,	/* the profile has off_cpu_ns (kbpf-trace) */
	KA_SHOWN_RATES,		/* the live view's rates */
};

struct ka_column {
	const char *key;	/* CSV's column and JSON's key ("time_ns") */
	const char *title;	/* the text table's ("Time(ms)") */
	const char *heading;	/* Markdown's and HTML's ("Time (ms)") */
	unsigned width;		/* the text table's narrowest */
	double unit_ns;		/* a duration: ns per unit shown (1e6: ms);
				 * 0: a number of calls */
	int decimals;		/* of a duration or a rate as shown */
	bool left;		/* text, aligned left */
	/* not known for a row without per-call latency (--by=kind) */
	bool latency;
	/* from the histogram: in the human formats the range of the bucket
	 * the quantile falls in ("0.96-1.02"), "-" when the row has no
	 * histogram data; in JSON and CSV an estimate inside it */
	bool from_hist;
	enum ka_col_when when;
};

extern const struct ka_column ka_columns[KA_COLS];

/* Of the format's list order (n ids), the columns the human formats
 * show for o and a profile p, into out (room for n); returns how many. */
size_t ka_cols_shown(const enum ka_col *order, size_t n,
		     const struct ka_report_opts *o, const struct ka_profile *p,
		     enum ka_col *out);

/* The value of column c in row r, in ns or calls, for the machine
 * formats: false when the row does not know it (no per-call latency, no
 * off-CPU time). NAME, ERRNO and the rates have none. */
bool ka_col_value(enum ka_col c, const struct ka_row *r, uint64_t *v);

/* The cell of column c in row r as the human formats show it ("13.84",
 * "-", "read (0)", "EAGAIN 7, ENOENT 3"); total: r is the profile p's
 * TOTAL row. */
void ka_col_text(char *buf, size_t size, enum ka_col c, const struct ka_row *r,
		 const struct ka_profile *p, bool total,
		 const struct ka_report_opts *o);

#endif
