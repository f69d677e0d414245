/* SPDX-License-Identifier: MIT */
/*
 * The HTML report's timeline of the event records (KPROF_EVENTS=1,
 * kbpf-trace --events): one lane per thread, the busiest LANES_MAX of
 * them, each call a bar from its start as long as it took (at least a
 * pixel), colored by syscall (the same syscall, the same color in every
 * lane), its name and duration in its tooltip; up to EVENTS_MAX calls, the
 * longest first (the earlier of two as long), so that what took time is
 * always drawn. The calls come from the lanes (lanes.h): bounded memory
 * whatever the trace's length.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "syscalls.h"

#define LANES_MAX KA_LANES_DRAWN
#define EVENTS_MAX KA_LANE_LONGEST
#define WIDTH 1100
#define LANE_H 18

struct lane {
	const struct ka_stream *s;
	const struct ka_lane *l;
};

struct drawn {
	const struct ka_event *e;
	size_t lane;
};

static int lane_by_time(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;
	return x->l->time_ns > y->l->time_ns ? -1 : x->l->time_ns < y->l->time_ns;
}

static int longest_first(const void *a, const void *b)
{
	const struct ka_event *x = ((const struct drawn *)a)->e, *y = ((const struct drawn *)b)->e;
	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	/* as long: the earlier first, as the lanes keep them */
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static const char *const colors[] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
				      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

/*
 * The lanes of every stream: those the model kept (ka_model.keep_lanes),
 * or made here from the events when it kept them all (after the filters).
 * made[i]: lanes made for stream i, freed by the caller.
 */
static int collect(const struct ka_model *m, struct ka_lanes *made, struct lane **out,
		   size_t *n_out)
{
	size_t n = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		for (size_t k = 0; k < s->n_event_list; k++) {
			int err = ka_lanes_add(&made[i], &s->event_list[k]);
			if (err)
				return err;
		}
		n += s->n_event_list ? made[i].n : s->lanes.n;
	}
	struct lane *lanes = calloc(n ? n : 1, sizeof(*lanes));
	if (!lanes)
		return -ENOMEM;
	*n_out = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const struct ka_lanes *ls = s->n_event_list ? &made[i] : &s->lanes;
		for (size_t k = 0; k < ls->n; k++)
			lanes[(*n_out)++] = (struct lane){ s, &ls->lane[k] };
	}
	*out = lanes;
	return 0;
}

static int draw(FILE *out, const struct ka_model *m, struct lane *lanes, size_t n_lanes)
{
	size_t n_events = 0, n_longest = 0;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t l = 0; l < n_lanes; l++) {
		n_events += lanes[l].l->calls;
		if (lanes[l].l->first_ns < t0)
			t0 = lanes[l].l->first_ns;
		if (lanes[l].l->end_ns > t1)
			t1 = lanes[l].l->end_ns;
	}
	qsort(lanes, n_lanes, sizeof(*lanes), lane_by_time);
	size_t shown_lanes = n_lanes < LANES_MAX ? n_lanes : LANES_MAX, n = 0;
	for (size_t l = 0; l < shown_lanes; l++)
		n_longest += lanes[l].l->n_longest;
	struct drawn *d = calloc(n_longest ? n_longest : 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t l = 0; l < shown_lanes; l++)
		for (size_t k = 0; k < lanes[l].l->n_longest; k++)
			d[n++] = (struct drawn){ &lanes[l].l->longest[k], l };
	qsort(d, n, sizeof(*d), longest_first);
	size_t shown = n < EVENTS_MAX ? n : EVENTS_MAX;
	double span = t1 > t0 ? (double)(t1 - t0) : 1;
	unsigned left = 0;
	char label[LANES_MAX][64];
	for (size_t l = 0; l < shown_lanes; l++) {
		const struct ka_stream *s = lanes[l].s;
		const char *base = s->exe ? strrchr(s->exe, '/') : NULL;
		snprintf(label[l], sizeof(label[l]), "%s %" PRIu64 "/%" PRIu64,
			 s->comm[0] ? s->comm : base ? base + 1 : "pid", s->pid, lanes[l].l->tid);
		if (ka_html_text_px(label[l]) + 12 > left)
			left = ka_html_text_px(label[l]) + 12;
	}
	size_t let_go = 0;
	for (size_t l = 0; l < shown_lanes; l++)
		let_go += lanes[l].l->let_go;
	if (let_go)
		fprintf(out, "<p>%zu of these threads are drawn without their calls: "
			"they were let go when their process had ended below the busiest, "
			"and more of its calls came later (the same trace read twice?).</p>\n",
			let_go);
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
	return 0;
}

int ka_html_timeline(FILE *out, const struct ka_model *m)
{
	fputs("<h2>Timeline</h2>\n", out);
	struct ka_lanes *made = calloc(m->n_streams ? m->n_streams : 1, sizeof(*made));
	struct lane *lanes = NULL;
	size_t n_lanes = 0;
	int err = made ? collect(m, made, &lanes, &n_lanes) : -ENOMEM;
	if (!err && !n_lanes)
		fputs("<p>No event records (trace with KPROF_EVENTS=1 or kbpf-trace "
		      "--events for a timeline).</p>\n", out);
	else if (!err)
		err = draw(out, m, lanes, n_lanes);
	for (size_t i = 0; made && i < m->n_streams; i++)
		ka_lanes_free(&made[i]);
	free(made);
	free(lanes);
	return err;
}
