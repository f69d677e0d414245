/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's timeline of the event records (KPROF_EVENTS=1,
 * kbpf-trace --events): one lane per thread, the busiest LANES_MAX of
 * them, each call a bar from its start as long as it took (at least a
 * pixel), colored by syscall (the same syscall, the same color in every
 * lane), its name and duration in its tooltip; up to EVENTS_MAX calls, the
 * longest first, so that what took time is always drawn.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "syscalls.h"

#define LANES_MAX 24
#define EVENTS_MAX 4000
#define WIDTH 1100
#define LANE_H 18

struct lane {
	const struct ka_stream *s;
	uint64_t tid, time_ns;
};

struct drawn {
	const struct ka_event *e;
	size_t lane;
};

static int lane_by_time(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	return x->time_ns > y->time_ns ? -1 : x->time_ns < y->time_ns;
}

static int longest_first(const void *a, const void *b)
{
	const struct drawn *x = a, *y = b;
	return x->e->duration_ns > y->e->duration_ns ? -1 : x->e->duration_ns < y->e->duration_ns;
}

static const char *const colors[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

int ka_html_timeline(FILE *out, const struct ka_model *m)
{
	size_t n_events = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		n_events += m->streams[i].n_event_list;
	fputs("<h2>Timeline</h2>\n", out);
	if (!n_events) {
		fputs("<p>No event records (trace with KPROF_EVENTS=1 or kbpf-trace "
		      "--events for a timeline).</p>\n", out);
		return 0;
	}
	/* the lanes: threads by their time in the events */
	struct lane *lanes = NULL;
	size_t n_lanes = 0, cap = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int err = 0;
	for (size_t i = 0; i < m->n_streams && !err; i++) {
		const struct ka_stream *s = &m->streams[i];
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct ka_event *e = &s->event_list[k];
			if (e->start_ns < t0)
				t0 = e->start_ns;
			if (e->start_ns + e->duration_ns > t1)
				t1 = e->start_ns + e->duration_ns;
			size_t l = 0;
			while (l < n_lanes && !(lanes[l].s == s && lanes[l].tid == e->tid))
				l++;
			if (l == n_lanes) {
				if (n_lanes == cap) {
					cap = cap ? 2 * cap : 16;
					void *p = reallocarray(lanes, cap, sizeof(*lanes));
					if (!p) {
						err = -ENOMEM;
						break;
					}
					lanes = p;
				}
				lanes[n_lanes++] = (struct lane){ s, e->tid, 0 };
			}
			lanes[l].time_ns += e->duration_ns;
		}
	}
	struct drawn *d = err ? NULL : calloc(n_events, sizeof(*d));
	if (!d) {
		free(lanes);
		return err ? err : -ENOMEM;
	}
	qsort(lanes, n_lanes, sizeof(*lanes), lane_by_time);
	size_t shown_lanes = n_lanes < LANES_MAX ? n_lanes : LANES_MAX, n = 0;
	for (size_t l = 0; l < shown_lanes; l++)
		for (size_t k = 0; k < lanes[l].s->n_event_list; k++)
			if (lanes[l].s->event_list[k].tid == lanes[l].tid)
				d[n++] = (struct drawn){ &lanes[l].s->event_list[k], l };
	qsort(d, n, sizeof(*d), longest_first);
	size_t shown = n < EVENTS_MAX ? n : EVENTS_MAX;
	double span = t1 > t0 ? (double)(t1 - t0) : 1;
	unsigned left = 0;
	char label[LANES_MAX][64];
	for (size_t l = 0; l < shown_lanes; l++) {
		const struct ka_stream *s = lanes[l].s;
		const char *base = s->exe ? strrchr(s->exe, '/') : NULL;
		snprintf(label[l], sizeof(label[l]), "%s %" PRIu64 "/%" PRIu64,
			 s->comm[0] ? s->comm : base ? base + 1 : "pid", s->pid, lanes[l].tid);
		if (ka_html_text_px(label[l]) + 12 > left)
			left = ka_html_text_px(label[l]) + 12;
	}
	unsigned w = left + WIDTH + 20, h = (unsigned)shown_lanes * LANE_H + 40;
	fprintf(out, "<p>%zu calls of %zu threads over %.3f ms; %zu drawn (the longest), "
		"in the %zu busiest threads.</p>\n<svg class=\"chart\" id=\"timeline\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" role=\"img\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", n_events, n_lanes, span / 1e6, shown,
		shown_lanes, w, h, w, h);
	for (size_t l = 0; l < shown_lanes; l++) {
		fprintf(out, "<text x=\"%u\" y=\"%zu\" text-anchor=\"end\">", left - 6,
			l * LANE_H + 13);
		ka_html_esc(out, label[l]);
		fputs("</text>\n", out);
	}
	const char *arch = ka_model_arch(m);
	for (size_t i = 0; i < shown; i++) {
		const struct ka_event *e = d[i].e;
		double x = left + (double)(e->start_ns - t0) / span * WIDTH;
		double bw = (double)e->duration_ns / span * WIDTH;
		const char *name = kp_syscall_name(arch, (unsigned)e->nr);
		fprintf(out, "<rect x=\"%.1f\" y=\"%zu\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
			"<title>%s: %.3f ms at %.3f ms, returned %" PRId64 "</title></rect>\n", x,
			d[i].lane * LANE_H + 2, bw < 1 ? 1 : bw, LANE_H - 4,
			colors[e->nr % 10], name ? name : "?", (double)e->duration_ns / 1e6,
			(double)(e->start_ns - t0) / 1e6, e->ret);
	}
	fprintf(out, "<text x=\"%u\" y=\"%u\">0 ms</text><text x=\"%u\" y=\"%u\" "
		"text-anchor=\"end\">%.3f ms</text>\n</svg>\n", left, h - 8, left + WIDTH, h - 8,
		span / 1e6);
	free(d);
	free(lanes);
	return 0;
}
