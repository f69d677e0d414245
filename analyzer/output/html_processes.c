/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's processes: one row per process image (stream), the
 * busiest by time in syscalls first, up to PROCS_MAX, with its name,
 * parent, origin, calls, time, its three busiest syscalls and how it
 * ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "profile.h"
#include "report.h"

#define PROCS_MAX 50

struct proc_row {
	const struct ka_stream *s;
	uint64_t count, time_ns;
};

static int by_time(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return x->s->pid < y->s->pid ? -1 : x->s->pid > y->s->pid;
}

static void ending(FILE *out, const struct ka_stream *s)
{
	if (s->exec_path) {
		fputs("exec ", out);
		ka_html_esc(out, s->exec_path);
	} else if (s->have_exit && s->exit_signal)
		fprintf(out, "signal %" PRIu64, s->exit_signal);
	else if (s->have_exit)
		fprintf(out, "exit %" PRId64 "%s", s->exit_status,
			s->exit_after_death ? " (after death)" : "");
	else
		fputs("no exit record", out);
}

int ka_html_processes(FILE *out, const struct ka_model *m)
{
	struct proc_row *rows = calloc(m->n_streams + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		rows[i].s = s;
		for (size_t t = 0; t < s->n_threads; t++)
			for (size_t k = 0; k < s->threads[t].n_sc; k++) {
				rows[i].count += s->threads[t].sc[k].count;
				rows[i].time_ns += s->threads[t].sc[k].time_ns;
			}
	}
	qsort(rows, m->n_streams, sizeof(*rows), by_time);
	size_t n = m->n_streams < PROCS_MAX ? m->n_streams : PROCS_MAX;
	fprintf(out, "<h2>Processes</h2>\n<p>%zu process images%s, by time in syscalls.</p>\n"
		"<table id=\"processes\"><thead><tr><th>pid</th><th>Name</th><th>ppid</th>"
		"<th>Origin</th><th>Calls</th><th>Time (ms)</th><th>Busiest syscalls</th>"
		"<th>End</th></tr></thead><tbody>\n", m->n_streams,
		n < m->n_streams ? ", the busiest 50" : "");
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		const struct ka_stream *s = rows[i].s;
		const char *base = s->exe ? strrchr(s->exe, '/') : NULL;
		const char *name = s->comm[0] ? s->comm : base ? base + 1 : s->exe ? s->exe : "?";
		fprintf(out, "<tr><td>%" PRIu64 "</td><td>", s->pid);
		ka_html_esc(out, name);
		fprintf(out, "</td><td>%" PRIu64 "</td><td>", s->ppid);
		ka_html_esc(out, s->origin ? s->origin : "?");
		fprintf(out, "</td><td>%" PRIu64 "</td><td>%.3f</td><td>", rows[i].count,
			(double)rows[i].time_ns / 1e6);
		struct ka_profile p;
		if ((err = ka_profile_build(&p, m, s, NULL)))
			break;
		ka_profile_sort(&p, KA_SORT_TIME);
		for (size_t k = 0; k < p.n_rows && k < 3; k++)
			fprintf(out, "%s%s %.3f ms", k ? ", " : "", p.rows[k].name,
				(double)p.rows[k].time_ns / 1e6);
		ka_profile_free(&p);
		fputs("</td><td>", out);
		ending(out, s);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
	free(rows);
	return err;
}
