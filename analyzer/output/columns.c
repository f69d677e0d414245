/* SPDX-License-Identifier: MIT */
/*
 * The columns of a profile row (columns.h): one row per column, and the
 * values and cells every format takes from it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "columns.h"

/* key, the table's title, Markdown's and HTML's, the table's width, unit */
const struct ka_column ka_columns[KA_COLS] = {
	[KA_COL_NAME] = { .key = "name", .title = "Syscall", .heading = "Syscall",
			.width = 16, .left = true },
	[KA_COL_NR] = { .key = "nr", .title = "Nr", .heading = "Nr",
			.width = 4 },
	[KA_COL_COUNT] = { .key = "count", .title = "Count", .heading = "Count",
			.width = 6 },
	[KA_COL_CALLS_PER_S] = { .key = "calls_per_s", .title = "Calls/s", .heading = "Calls/s",
			.width = 10, .when = KA_SHOWN_RATES },
	[KA_COL_MS_PER_S] = { .key = "ms_per_s", .title = "ms/s", .heading = "ms/s",
			.width = 9, .decimals = 2, .when = KA_SHOWN_RATES },
	[KA_COL_TIME] = { .key = "time_ns", .title = "Time(ms)", .heading = "Time (ms)",
			.width = 13, .unit_ns = 1e6, .decimals = 2 },
	[KA_COL_OFF_CPU] = { .key = "off_cpu_ns", .title = "OffCPU(ms)", .heading = "Off CPU (ms)",
			.width = 12, .unit_ns = 1e6, .decimals = 2, .when = KA_SHOWN_OFF_CPU },
	[KA_COL_AVG] = { .key = "avg_ns", .title = "Avg(ms)", .heading = "Avg (ms)",
			.width = 11, .unit_ns = 1e6, .decimals = 3 },
	[KA_COL_MIN] = { .key = "min_ns", .title = "Min(us)", .heading = "Min (us)",
			.width = 11, .unit_ns = 1e3, .decimals = 2, .latency = true, .when = KA_SHOWN_PERCENTILES },
	[KA_COL_MAX] = { .key = "max_ns", .title = "Max(us)", .heading = "Max (us)",
			.width = 11, .unit_ns = 1e3, .decimals = 2, .latency = true, .when = KA_SHOWN_PERCENTILES },
	[KA_COL_RETRIES] = { .key = "retries", .title = "Retries", .heading = "Retries",
			.width = 11 },
	[KA_COL_ERRORS] = { .key = "errors", .title = "Errors", .heading = "Errors",
			.width = 10, .when = KA_SHOWN_ERRORS },
	[KA_COL_ERRNO] = { .key = "errno", .title = "Errno", .heading = "Errno",
			.width = 0, .left = true, .latency = true, .when = KA_SHOWN_ERRORS },
	[KA_COL_P50] = { .key = "p50_ns", .title = "p50(us)", .heading = "p50 (us)",
			.width = 11, .unit_ns = 1e3, .decimals = 2, .latency = true, .from_hist = true,
			 .when = KA_SHOWN_PERCENTILES },
	[KA_COL_P90] = { .key = "p90_ns", .title = "p90(us)", .heading = "p90 (us)",
			.width = 11, .unit_ns = 1e3, .decimals = 2, .latency = true, .from_hist = true,
			 .when = KA_SHOWN_PERCENTILES },
	[KA_COL_P99] = { .key = "p99_ns", .title = "p99(us)", .heading = "p99 (us)",
			.width = 11, .unit_ns = 1e3, .decimals = 2, .latency = true, .from_hist = true,
			 .when = KA_SHOWN_PERCENTILES },
};

static bool shown(enum ka_col_when when, const struct ka_report_opts *o,
		  const struct ka_profile *p)
{
	switch (when) {
	case KA_SHOWN_ALWAYS: return true;
	case KA_SHOWN_ERRORS: return o->errors;
	case KA_SHOWN_PERCENTILES: return o->percentiles;
	case KA_SHOWN_OFF_CPU: return p->total.has_off_cpu_ns;
	case KA_SHOWN_RATES: return o->rate_calls != NULL;
	}
	return false;
}

size_t ka_cols_shown(const enum ka_col *order, size_t n,
		     const struct ka_report_opts *o, const struct ka_profile *p,
		     enum ka_col *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (shown(ka_columns[order[i]].when, o, p))
			out[k++] = order[i];
	return k;
}

bool ka_col_value(enum ka_col c, const struct ka_row *r, uint64_t *v)
{
	if (ka_columns[c].latency && r->no_latency)
		return false;
	switch (c) {
	case KA_COL_NR: *v = r->nr; return true;
	case KA_COL_COUNT: *v = r->count; return true;
	case KA_COL_TIME: *v = r->time_ns; return true;
	case KA_COL_OFF_CPU: *v = r->off_cpu_ns; return r->has_off_cpu_ns;
	case KA_COL_AVG: *v = r->count ? r->time_ns / r->count : 0; return true;
	case KA_COL_MIN: *v = r->min_ns; return true;
	case KA_COL_MAX: *v = r->max_ns; return true;
	case KA_COL_RETRIES: *v = r->retries; return true;
	case KA_COL_ERRORS: *v = r->errors; return true;
	case KA_COL_P50: *v = r->p50_ns; return true;
	case KA_COL_P90: *v = r->p90_ns; return true;
	case KA_COL_P99: *v = r->p99_ns; return true;
	default: return false;
	}
}

/* The live view's rates of r (total: of every row of p). */
static void rates(const struct ka_row *r, const struct ka_profile *p, bool total,
		  const struct ka_report_opts *o, double *calls, double *ms)
{
	*calls = *ms = 0;
	for (size_t i = 0; i < (total ? p->n_rows : 1); i++) {
		uint64_t nr = total ? p->rows[i].nr : r->nr;
		if (nr < o->n_rates) {
			*calls += o->rate_calls[nr];
			*ms += o->rate_ms[nr];
		}
	}
}

static bool has_hist(const struct ka_row *r)
{
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		if (r->hist.bucket[b])
			return true;
	return false;
}

void ka_col_text(char *buf, size_t size, enum ka_col c, const struct ka_row *r,
		 const struct ka_profile *p, bool total,
		 const struct ka_report_opts *o)
{
	const struct ka_column *col = &ka_columns[c];
	double calls, ms;
	uint64_t v = 0;

	switch (c) {
	case KA_COL_NAME:
		if (total)
			snprintf(buf, size, "TOTAL");
		else
			snprintf(buf, size, "%s (%" PRIu64 ")", r->name, r->nr);
		return;
	case KA_COL_ERRNO:
		ka_report_errnos(buf, size, r);
		return;
	case KA_COL_CALLS_PER_S:
	case KA_COL_MS_PER_S:
		rates(r, p, total, o, &calls, &ms);
		snprintf(buf, size, "%.*f", col->decimals,
			 c == KA_COL_CALLS_PER_S ? calls : ms);
		return;
	default:
		break;
	}
	/* the human formats show 0 off CPU for a row of a profile that has
	 * the column where the row's entries did not say */
	if (!ka_col_value(c, r, &v) && c != KA_COL_OFF_CPU) {
		snprintf(buf, size, "-");
		return;
	}
	uint64_t lo, hi;
	if (col->from_hist && !has_hist(r)) /* no percentiles to show */
		snprintf(buf, size, "-");
	else if (col->from_hist &&
		 kp_hist_quantile_range(&r->hist, c == KA_COL_P50 ? 0.50 : c == KA_COL_P90 ? 0.90 : 0.99,
					r->min_ns, r->max_ns, &lo, &hi)) {
		/* what the histogram knows: the bucket, "lo-hi" (its last value
		 * included); one value when the bucket holds one */
		char a[32], b[32];
		ka_format_duration(a, sizeof(a), (double)lo / col->unit_ns, col->decimals);
		ka_format_duration(b, sizeof(b), (double)(hi - 1) / col->unit_ns, col->decimals);
		if (hi - 1 <= lo || strcmp(a, b) == 0)
			snprintf(buf, size, "%s", a);
		else
			snprintf(buf, size, "%s-%s", a, b);
	}
	else if (col->unit_ns == 0)
		snprintf(buf, size, "%" PRIu64, v);
	else if (c == KA_COL_AVG) /* not rounded to whole ns */
		ka_format_duration(buf, size,
				   r->count ? (double)r->time_ns / (double)r->count /
						      col->unit_ns :
					      0.0,
				   col->decimals);
	else
		ka_format_duration(buf, size, (double)v / col->unit_ns, col->decimals);
}
