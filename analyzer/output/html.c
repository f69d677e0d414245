/* SPDX-License-Identifier: MIT */
/*
 * --html=FILE: one self-contained report (no network, no external file):
 * the profile table, time by syscall as a bar chart, the time series of
 * the periodic aggregates, the per-thread view, time by descriptor kind
 * (when the traces record kinds), the top call sites and the flame graph
 * of the stacks or sites (flame.c), drawn as inline SVG. Inline script
 * runs the flame graph's zoom and search, marks the page as rendered and
 * records script errors into the page (for the browser test).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "columns.h"
#include "html.h"
#include "syscalls.h"
#include "views.h"

#define BARS_MAX 15
#define SITES_MAX 20
#define SERIES_POINTS 60

void ka_html_esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
				       "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
				       "#9c755f", "#bab0ac" };

unsigned ka_html_text_px(const char *s)
{
	return (unsigned)((double)strlen(s) * KA_HTML_CHAR_PX) + 1;
}

#define esc ka_html_esc
#define text_px ka_html_text_px

/* Horizontal bars: label, value, text. The margins are as wide as the
 * longest label and text, so that none is cut at either side. */
static void bar_chart(FILE *out, const char *id, const char *title, size_t n,
		      const char *const *labels, const double *values,
		      const char *const *texts)
{
	double max = 0;
	unsigned left = 60, right = 60;
	for (size_t i = 0; i < n; i++) {
		if (values[i] > max)
			max = values[i];
		if (text_px(labels[i]) + 12 > left)
			left = text_px(labels[i]) + 12;
		if (text_px(texts[i]) + 12 > right)
			right = text_px(texts[i]) + 12;
	}
	unsigned h = 24 * (unsigned)n + 30, w = left + 420 + right;
	fprintf(out, "<h2>%s</h2>\n<svg class=\"chart\" id=\"%s\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		title, id, w, h, w, h);
	for (size_t i = 0; i < n; i++) {
		double bw = max > 0 ? values[i] / max * (w - left - right) : 0;
		unsigned y = 10 + 24 * (unsigned)i;
		fprintf(out, "<text x=\"%u\" y=\"%u\" text-anchor=\"end\">", left - 6, y + 15);
		esc(out, labels[i]);
		fprintf(out, "</text><rect x=\"%u\" y=\"%u\" width=\"%.1f\" height=\"18\" "
			"fill=\"%s\"><title>", left, y, bw < 1 && values[i] > 0 ? 1 : bw,
			palette[i % 10]);
		esc(out, labels[i]);
		fputs(": ", out);
		esc(out, texts[i]);
		fprintf(out, "</title></rect><text x=\"%.1f\" y=\"%u\">", left + bw + 6, y + 15);
		esc(out, texts[i]);
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
}

/* The report's profile table: every counter, whatever the options. */
static const enum ka_col html_cols[] = {
	KA_COL_NAME,	KA_COL_COUNT, KA_COL_TIME, KA_COL_OFF_CPU, KA_COL_AVG,
	KA_COL_RETRIES, KA_COL_ERRORS, KA_COL_P50, KA_COL_P90,	   KA_COL_P99,
	KA_COL_MAX,
};
#define HTML_COLS (sizeof(html_cols) / sizeof(html_cols[0]))

static void profile_section(FILE *out, const struct ka_profile *p)
{
	const struct ka_report_opts all = { .errors = true, .percentiles = true };
	enum ka_col cols[HTML_COLS];
	size_t ncols = ka_cols_shown(html_cols, HTML_COLS, &all, p, cols);
	fputs("<h2>Syscall profile</h2>\n<table id=\"profile\"><thead><tr>", out);
	for (size_t c = 0; c < ncols; c++)
		fprintf(out, "<th>%s</th>", ka_columns[cols[c]].heading);
	fputs("</tr></thead><tbody>\n", out);
	for (size_t i = 0; i <= p->n_rows; i++) {
		bool total = i == p->n_rows;
		const struct ka_row *r = total ? &p->total : &p->rows[i];
		fprintf(out, "<tr%s>", total ? " class=\"total\"" : "");
		for (size_t c = 0; c < ncols; c++) {
			char cell[256];
			ka_col_text(cell, sizeof(cell), cols[c], r, p, total, &all);
			fputs("<td>", out);
			esc(out, cell);
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
}

static int time_chart(FILE *out, const struct ka_profile *p)
{
	size_t n = p->n_rows < BARS_MAX ? p->n_rows : BARS_MAX;
	const char **labels = calloc(n + 1, sizeof(*labels));
	const char **texts = calloc(n + 1, sizeof(*texts));
	double *values = calloc(n + 1, sizeof(*values));
	char (*buf)[48] = calloc(n + 1, sizeof(*buf));
	if (!labels || !texts || !values || !buf) {
		free(labels), free(texts), free(values), free(buf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		labels[i] = p->rows[i].name;
		values[i] = (double)p->rows[i].time_ns;
		snprintf(buf[i], sizeof(buf[i]), "%.3f ms, %" PRIu64 " calls",
			 values[i] / 1e6, p->rows[i].count);
		texts[i] = buf[i];
	}
	bar_chart(out, "time-by-syscall", "Time by syscall", n, labels, values, texts);
	free(labels), free(texts), free(values), free(buf);
	return 0;
}

static int series_chart(FILE *out, const struct ka_model *m, uint64_t interval_ms)
{
	uint64_t span = 0, base = UINT64_MAX;
	for (size_t i = 0; i < m->n_history; i++) {
		if (m->history[i].time_ns < base)
			base = m->history[i].time_ns;
		if (m->history[i].time_ns > span)
			span = m->history[i].time_ns;
	}
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].have_header && m->streams[i].start_ns < base)
			base = m->streams[i].start_ns;
	span = m->n_history && span > base ? span - base : 0;
	uint64_t interval_ns = interval_ms ? interval_ms * 1000000ull :
					     (span / SERIES_POINTS > 1000000 ? span / SERIES_POINTS : 1000000);
	struct ka_series_point *p = NULL;
	size_t n = 0;
	int err = ka_series_build(m, interval_ns, &p, &n);
	if (err)
		return err;
	fprintf(out, "<h2>Time series</h2>\n<p>Per interval of %.1f ms, from %zu periodic "
		"cumulative aggregates: a call counts in the interval of the first "
		"aggregate that holds it, so their period (KPROF_INTERVAL_MS, kbpf-trace "
		"-i) bounds the resolution%s.</p>\n", (double)interval_ns / 1e6, m->n_history,
		m->n_history < 4 ? "; these traces have too few for a series" : "");
	double max = 0;
	for (size_t i = 0; i < n; i++)
		if ((double)p[i].time_ns > max)
			max = (double)p[i].time_ns;
	/* the axis label fits left of the axis, whatever its digits */
	char max_label[48];
	snprintf(max_label, sizeof(max_label), "%.2f ms", max / 1e6);
	unsigned w = 760, h = 250, left = text_px(max_label) + 10, bottom = 60;
	if (left < 40)
		left = 40;
	fprintf(out, "<svg class=\"chart\" id=\"time-series\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" role=\"img\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" stroke=\"#888\"/>\n"
		"<text x=\"%u\" y=\"14\" text-anchor=\"end\">%s</text>\n"
		"<text x=\"%u\" y=\"%u\" text-anchor=\"end\">0</text>\n",
		w, h, w, h, left, h - bottom, w - 10, h - bottom, left - 4, max_label,
		left - 4, h - bottom);
	double bw = n ? (double)(w - left - 10) / (double)n : 0;
	const char *arch = ka_model_arch(m);
	for (size_t i = 0; i < n; i++) {
		double bh = max > 0 ? (double)p[i].time_ns / max * (h - bottom - 20) : 0;
		const char *top = p[i].count ? kp_syscall_name(arch, (unsigned)p[i].top_nr) : NULL;
		fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\"><title>%.1f ms: %" PRIu64 " calls, %.3f ms, %" PRIu64
			" retries, %" PRIu64 " errors%s%s</title></rect>\n",
			left + bw * (double)i, (double)(h - bottom) - bh, bw > 2 ? bw - 1 : bw,
			bh, p[i].retries ? "#e15759" : "#4e79a7",
			(double)p[i].end_ns / 1e6, p[i].count, (double)p[i].time_ns / 1e6,
			p[i].retries, p[i].errors, top ? "; most time: " : "", top ? top : "");
	}
	unsigned axis = h - bottom + 16, legend = h - 10;
	fprintf(out, "<text x=\"%u\" y=\"%u\">0 ms</text><text x=\"%u\" y=\"%u\" "
		"text-anchor=\"end\">%.1f ms</text>\n"
		"<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" fill=\"#4e79a7\"/>"
		"<text x=\"%u\" y=\"%u\">time in syscalls per interval</text>"
		"<rect x=\"%u\" y=\"%u\" width=\"12\" height=\"12\" fill=\"#e15759\"/>"
		"<text x=\"%u\" y=\"%u\">an interval with EAGAIN retries</text>\n</svg>\n",
		left, axis, w - 10, axis, n ? (double)p[n - 1].end_ns / 1e6 : 0.0,
		left, legend - 10, left + 16, legend, left + 260, legend - 10, left + 276, legend);
	if (!n)
		fputs("<p>No aggregate records.</p>\n", out);
	free(p);
	return 0;
}

static int thread_chart(FILE *out, const struct ka_model *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		n += m->streams[i].n_threads;
	const char **labels = calloc(n + 1, sizeof(*labels));
	const char **texts = calloc(n + 1, sizeof(*texts));
	double *values = calloc(n + 1, sizeof(*values));
	char (*lb)[96] = calloc(n + 1, sizeof(*lb));
	char (*tb)[64] = calloc(n + 1, sizeof(*tb));
	if (!labels || !texts || !values || !lb || !tb) {
		free(labels), free(texts), free(values), free(lb), free(tb);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const char *exe = s->exe ? strrchr(s->exe, '/') : NULL;
		for (size_t t = 0; t < s->n_threads; t++) {
			const struct ka_thread *th = &s->threads[t];
			uint64_t count = 0, time = 0;
			for (size_t j = 0; j < th->n_sc; j++) {
				count += th->sc[j].count;
				time += th->sc[j].time_ns;
			}
			const char *name = ka_thread_name(s, th);
			snprintf(lb[k], sizeof(lb[k]), "%s %" PRIu64 "/%" PRIu64 "%s%s",
				 exe ? exe + 1 : "pid", s->pid, th->tid, name ? " " : "",
				 name ? name : "");
			snprintf(tb[k], sizeof(tb[k]), "%.3f ms, %" PRIu64 " calls",
				 (double)time / 1e6, count);
			labels[k] = lb[k];
			texts[k] = tb[k];
			values[k++] = (double)time;
		}
	}
	/* most time first, at most BARS_MAX bars */
	for (size_t a = 0; a < k; a++)
		for (size_t b = a + 1; b < k; b++)
			if (values[b] > values[a]) {
				double v = values[a];
				const char *l = labels[a], *x = texts[a];
				values[a] = values[b], labels[a] = labels[b], texts[a] = texts[b];
				values[b] = v, labels[b] = l, texts[b] = x;
			}
	bar_chart(out, "time-by-thread", "Time by thread (process/tid)",
		  k < BARS_MAX ? k : BARS_MAX, labels, values, texts);
	free(labels), free(texts), free(values), free(lb), free(tb);
	return 0;
}

/* Time by descriptor kind (the `kinds` counters), and its top syscalls. */
static int kind_section(FILE *out, const struct ka_model *m,
			const struct ka_report_opts *o)
{
	if (!ka_model_has_kinds(m))
		return 0;
	const char *labels[KP_KINDS], *texts[KP_KINDS];
	char tb[KP_KINDS][96];
	double values[KP_KINDS];
	struct ka_profile p[KP_KINDS];
	size_t n = 0;
	int err = 0;
	for (int k = 0; k < KP_KINDS && !err; k++) {
		if ((err = ka_kind_profile(&p[n], m, k, o)))
			break;
		if (!p[n].total.count) {
			ka_profile_free(&p[n]);
			continue;
		}
		snprintf(tb[n], sizeof(tb[n]), "%.3f ms, %" PRIu64 " calls, %" PRIu64 " retries",
			 (double)p[n].total.time_ns / 1e6, p[n].total.count,
			 p[n].total.retries);
		labels[n] = kp_kind_names[k];
		texts[n] = tb[n];
		values[n] = (double)p[n].total.time_ns;
		n++;
	}
	if (!err && n) {
		bar_chart(out, "time-by-kind", "Time by descriptor kind", n, labels, values,
			  texts);
		fputs("<table id=\"kinds\"><thead><tr><th>Kind</th><th>Calls</th>"
		      "<th>Time (ms)</th><th>Retries</th><th>Errors</th>"
		      "<th>Top syscalls by time</th></tr></thead><tbody>\n", out);
		for (size_t i = 0; i < n; i++) {
			const struct ka_row *t = &p[i].total;
			fprintf(out, "<tr><td>%s</td><td>%" PRIu64 "</td><td>%.3f</td><td>%"
				PRIu64 "</td><td>%" PRIu64 "</td><td>", labels[i], t->count,
				(double)t->time_ns / 1e6, t->retries, t->errors);
			for (size_t r = 0; r < p[i].n_rows && r < 3; r++) {
				fputs(r ? ", " : "", out);
				esc(out, p[i].rows[r].name);
				fprintf(out, " %" PRIu64, p[i].rows[r].count);
			}
			fputs("</td></tr>\n", out);
		}
		fputs("</tbody></table>\n", out);
	}
	for (size_t i = 0; i < n; i++)
		ka_profile_free(&p[i]);
	return err;
}

static int sites_section(FILE *out, const struct ka_model *m)
{
	struct ka_site_row *rows = NULL;
	size_t n = 0;
	int err = ka_sites_collect(m, &rows, &n);
	if (err)
		return err;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (rows[b].time_ns > rows[a].time_ns) {
				struct ka_site_row t = rows[a];
				rows[a] = rows[b];
				rows[b] = t;
			}
	fputs("<h2>Top call sites</h2>\n", out);
	if (!n)
		fputs("<p>No call sites in these traces (the shim records them; "
		      "kbpf-trace with --stacks).</p>\n", out);
	else
		fputs("<table id=\"sites\"><thead><tr><th>Site</th><th>Syscall</th>"
		      "<th>Calls</th><th>Time (ms)</th></tr></thead><tbody>\n", out);
	for (size_t i = 0; i < n && i < SITES_MAX; i++) {
		fputs("<tr><td>", out);
		esc(out, rows[i].where);
		fputs("</td><td>", out);
		esc(out, rows[i].syscall);
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%.3f</td></tr>\n", rows[i].count,
			(double)rows[i].time_ns / 1e6);
	}
	if (n)
		fputs("</tbody></table>\n", out);
	free(rows);
	return 0;
}

/* The flame graph of the stacks or sites (flame.c), when there are any. */
static int flame_section(FILE *out, const struct ka_model *m, const struct ka_report_opts *o)
{
	uint64_t frames;
	fprintf(out, "<h2>Flame graph</h2>\n<p>Calls by stack (kbpf-trace --stacks) or by "
		"call site (the shim), the syscall on top; width: %s. Click a frame to "
		"zoom, Search to mark frames.</p>\n<div class=\"flame\">\n",
		o->flame_by_calls ? "the number of calls" : "time in the calls");
	int err = ka_write_flame(out, m, !o->flame_by_calls, false, &frames);
	fputs("</div>\n", out);
	return err;
}

/* What a text report of m writes, escaped for the page. */
static void escaped(FILE *out, void (*write)(FILE *, const struct ka_model *, const char *),
		    const struct ka_model *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return;
	write(mem, m, "");
	if (fclose(mem) == 0)
		esc(out, text);
	free(text);
}

int ka_write_html(FILE *out, const struct ka_model *m,
		  const struct ka_report_opts *o, uint64_t interval_ms)
{
	struct ka_profile p;
	struct ka_report_opts by_time = *o;
	by_time.sort = KA_SORT_TIME;
	int err = ka_report_profile(&p, m, NULL, NULL, &by_time);
	if (err)
		return err;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>kprof syscall report</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\n"
	      "table{border-collapse:collapse;margin:1em 0;display:block;overflow-x:auto;"
	      "max-width:100%}td,th{padding:2px 8px;"
	      "border-bottom:1px solid #ddd;text-align:right}td:first-child,"
	      "th:first-child{text-align:left}tr.total{font-weight:bold}\n"
	      "svg.chart{display:block;margin:1em 0;font-size:12px;max-width:100%;height:auto}\n"
	      "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;overflow-wrap:anywhere}\n"
	      "p{overflow-wrap:anywhere}\n</style>\n"
	      "<script>window.kprofErrors=[];window.addEventListener('error',function(e){"
	      "window.kprofErrors.push(String(e.message));var d=document.getElementById("
	      "'errors');if(d)d.textContent=window.kprofErrors.join('\\n');});</script>\n"
	      "</head><body>\n<h1>kprof syscall report</h1>\n<div id=\"errors\"></div>\n", out);
	const char *producer = ka_model_producer(m);
	fprintf(out, "<p>%" PRIu64 " processes, %zu streams, %" PRIu64 " threads; producer: ",
		ka_model_processes(m), m->n_streams, ka_model_threads(m));
	esc(out, producer ? producer : "mixed");
	fputs("</p>\n", out);
	if (m->set_aside) {
		fputs("<p id=\"aside\">", out);
		escaped(out, ka_report_aside, m);
		fputs("</p>\n", out);
	}
	profile_section(out, &p);
	if ((err = time_chart(out, &p)) || (err = series_chart(out, m, interval_ms)) ||
	    (err = thread_chart(out, m)) || (err = kind_section(out, m, &by_time)) ||
	    (err = sites_section(out, m)) || (err = flame_section(out, m, o)) ||
	    (err = ka_html_processes(out, m)) || (err = ka_html_timeline(out, m)))
		goto out;
	fputs("<h2>End state</h2>\n<pre>", out);
	escaped(out, ka_report_footer, m);
	fputs("</pre>\n<script>document.body.setAttribute('data-rendered',"
	      "String(document.querySelectorAll('svg.chart').length));</script>\n"
	      "</body></html>\n", out);
out:
	ka_profile_free(&p);
	return err ? err : ferror(out) ? -EIO : 0;
}
