/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --listen's snapshots: the profile so far with, per syscall,
 * calls and ms per second since the last snapshot, then the busiest
 * processes by the same rates. On a terminal the snapshot fits it: it is
 * drawn once into memory, and drawn again with as many fewer syscall rows
 * as it had lines too many, so that its first line never scrolls off; and
 * keys change the order (t time, c count, a average, r retries, e errors,
 * n name) without waiting for the next period. The final profile, after
 * the last producer, is the classic one (main.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "live_view.h"
#include "profile.h"
#include "views.h"

#define RATE_NRS 1024
#define PROCS_SHOWN 5

struct proc_prev {
	uint64_t pid, stream, count, time_ns;
	double calls, ms; /* per second, this snapshot */
	const struct ka_stream *s;
};

struct ka_live_view {
	uint64_t prev_count[RATE_NRS], prev_time[RATE_NRS];
	double rate_calls[RATE_NRS], rate_ms[RATE_NRS];
	uint64_t prev_ns;
	struct proc_prev *procs;
	size_t n_procs, cap_procs;
	enum ka_sort sort;
	bool sort_set;
	struct termios saved;
	bool raw;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct ka_live_view *ka_live_view_new(bool keys)
{
	struct ka_live_view *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->prev_ns = mono_ns();
	/* keys without Enter, not echoed; restored at the end */
	if (keys && isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &v->saved) == 0) {
		struct termios t = v->saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		v->raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
	return v;
}

void ka_live_view_free(struct ka_live_view *v)
{
	if (!v)
		return;
	if (v->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &v->saved);
	free(v->procs);
	free(v);
}

int ka_live_view_key_fd(const struct ka_live_view *v)
{
	return v && v->raw ? STDIN_FILENO : -1;
}

bool ka_live_view_keys(struct ka_live_view *v)
{
	static const struct {
		char key;
		enum ka_sort sort;
	} keys[] = { { 't', KA_SORT_TIME }, { 'c', KA_SORT_COUNT }, { 'a', KA_SORT_AVG },
		     { 'r', KA_SORT_RETRIES }, { 'e', KA_SORT_ERRORS }, { 'n', KA_SORT_NAME } };
	char buf[16];
	bool changed = false;
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
	for (ssize_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (buf[i] == keys[k].key) {
				v->sort = keys[k].sort;
				v->sort_set = changed = true;
			}
	return changed;
}

static struct proc_prev *proc_of(struct ka_live_view *v, const struct ka_stream *s)
{
	for (size_t i = 0; i < v->n_procs; i++)
		if (v->procs[i].pid == s->pid && v->procs[i].stream == s->stream)
			return &v->procs[i];
	if (v->n_procs == v->cap_procs) {
		size_t cap = v->cap_procs ? 2 * v->cap_procs : 32;
		void *p = reallocarray(v->procs, cap, sizeof(*v->procs));
		if (!p)
			return NULL;
		v->procs = p;
		v->cap_procs = cap;
	}
	struct proc_prev *x = &v->procs[v->n_procs++];
	memset(x, 0, sizeof(*x));
	x->pid = s->pid;
	x->stream = s->stream;
	return x;
}

static double per_s(uint64_t now, uint64_t before, double secs)
{
	return now > before && secs > 0 ? (double)(now - before) / secs : 0;
}

/* The rates since the last snapshot, by syscall and by process. */
static int measure(struct ka_live_view *v, const struct ka_model *m)
{
	uint64_t now = mono_ns();
	double secs = (double)(now - v->prev_ns) / 1e9;
	v->prev_ns = now;
	struct ka_profile p;
	int err = ka_profile_build(&p, m, NULL, NULL);
	if (err)
		return err;
	memset(v->rate_calls, 0, sizeof(v->rate_calls));
	memset(v->rate_ms, 0, sizeof(v->rate_ms));
	for (size_t i = 0; i < p.n_rows; i++) {
		uint64_t nr = p.rows[i].nr;
		if (nr >= RATE_NRS)
			continue;
		v->rate_calls[nr] = per_s(p.rows[i].count, v->prev_count[nr], secs);
		v->rate_ms[nr] = per_s(p.rows[i].time_ns, v->prev_time[nr], secs) / 1e6;
		v->prev_count[nr] = p.rows[i].count;
		v->prev_time[nr] = p.rows[i].time_ns;
	}
	ka_profile_free(&p);
	for (size_t i = 0; i < v->n_procs; i++)
		v->procs[i].s = NULL;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		struct proc_prev *x = proc_of(v, s);
		if (!x)
			return -ENOMEM;
		uint64_t count = 0, time_ns = 0;
		for (size_t t = 0; t < s->n_threads; t++)
			for (size_t k = 0; k < s->threads[t].n_sc; k++) {
				const struct ka_sc_stats *sc = &s->threads[t].sc[k];
				if (m->set_aside && sc->nr < 1024 && m->set_aside[sc->nr])
					continue;
				count += sc->count;
				time_ns += sc->time_ns;
			}
		x->calls = per_s(count, x->count, secs);
		x->ms = per_s(time_ns, x->time_ns, secs) / 1e6;
		x->count = count;
		x->time_ns = time_ns;
		x->s = s;
	}
	return 0;
}

static int by_ms(const void *a, const void *b)
{
	const struct proc_prev *x = *(const struct proc_prev *const *)a;
	const struct proc_prev *y = *(const struct proc_prev *const *)b;
	if (x->ms != y->ms)
		return x->ms > y->ms ? -1 : 1;
	return x->calls > y->calls ? -1 : x->calls < y->calls;
}

/* The busiest processes of this interval, by ms/s. */
static void print_procs(const struct ka_live_view *v, FILE *out)
{
	const struct proc_prev *top[PROCS_SHOWN + 1];
	size_t n = 0;
	const struct proc_prev **all = calloc(v->n_procs + 1, sizeof(*all));
	if (!all)
		return;
	for (size_t i = 0; i < v->n_procs; i++)
		if (v->procs[i].s && (v->procs[i].calls > 0 || v->procs[i].ms > 0))
			all[n++] = &v->procs[i];
	qsort(all, n, sizeof(*all), by_ms);
	size_t shown = n < PROCS_SHOWN ? n : PROCS_SHOWN;
	memcpy(top, all, shown * sizeof(*top));
	fprintf(out, "Busiest processes this interval (of %zu active):\n", n);
	for (size_t i = 0; i < shown; i++) {
		const struct ka_stream *s = top[i]->s;
		const char *name = s->comm[0] ? s->comm : s->exe ? s->exe : "?";
		fprintf(out, "  pid %-8" PRIu64 " %-16.16s %10.0f calls/s %9.2f ms/s\n", s->pid,
			name, top[i]->calls, top[i]->ms);
	}
	free(all);
}

static void draw(struct ka_live_view *v, FILE *out, const struct ka_model *m,
		 const struct ka_report_opts *o, const char *title)
{
	fprintf(out, "%s\n", title);
	ka_report_table(out, m, o);
	print_procs(v, out);
	if (v->raw)
		fputs("keys: t time, c count, a avg, r retries, e errors, n name\n", out);
}

/* The terminal rows text takes: each line, wrapped at cols (0: none). */
static unsigned lines_of(const char *text, size_t len, unsigned cols)
{
	unsigned n = 0, col = 0;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n') {
			n++;
			col = 0;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80 && cols && ++col > cols) {
			n++; /* wrapped (UTF-8 continuation bytes take no column) */
			col = 1;
		}
	}
	return n;
}

/*
 * The length of text to write so that it takes at most rows - 1 terminal
 * rows, the cursor's line after it included: its first lines, then its
 * last (the keys) when keep_last. For a snapshot whose fixed parts (the
 * footer, the busiest processes) do not fit with one syscall row: the
 * title stays on the screen. *last: where the last line starts (len: not
 * kept).
 */
static size_t clipped(const char *text, size_t len, unsigned cols, unsigned rows,
		      bool keep_last, size_t *last)
{
	size_t start = len;
	*last = len;
	if (keep_last && len) { /* the last line, without its newline */
		start = len - 1;
		while (start > 0 && text[start - 1] != '\n')
			start--;
	}
	unsigned budget = rows - 1;
	if (start < len) {
		unsigned n = lines_of(text + start, len - start, cols);
		if (n >= budget)
			start = len; /* the keys alone would not fit either */
		else
			budget -= n;
	}
	size_t i = 0, keep = 0;
	while (i < start) {
		size_t e = i;
		while (e < start && text[e] != '\n')
			e++;
		if (e < start)
			e++; /* the newline */
		if (lines_of(text, e, cols) > budget)
			break;
		keep = i = e;
	}
	if (start < len)
		*last = start;
	return keep;
}

void ka_live_view_print(struct ka_live_view *v, FILE *out, const struct ka_model *m,
			const struct ka_report_opts *report, const char *title, bool tty,
			bool measure_now)
{
	struct ka_report_opts o = *report;
	o.live = true;
	if (v->sort_set)
		o.sort = v->sort;
	if (measure_now && measure(v, m))
		return;
	o.rate_calls = v->rate_calls;
	o.rate_ms = v->rate_ms;
	o.n_rates = RATE_NRS;
	struct winsize ws;
	bool sized = tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0;
	unsigned rows = sized ? ws.ws_row : 0, cols = sized ? ws.ws_col : 0;
	if (rows && !o.top)
		o.top = rows > 20 ? rows - 16 : 4;
	char *text = NULL;
	size_t len = 0;
	/* drawn until it fits: each try drops the rows it had too many */
	for (int tries = 0; tries < 3; tries++) {
		free(text);
		text = NULL;
		FILE *mem = open_memstream(&text, &len);
		if (!mem)
			return;
		draw(v, mem, m, &o, title);
		if (fclose(mem))
			return;
		unsigned n = lines_of(text, len, cols);
		/* the line the cursor rests on after the last newline counts */
		if (!rows || n + 1 <= rows || o.top <= 1)
			break;
		size_t excess = n + 1 - rows;
		o.top = o.top > excess ? o.top - excess : 1;
	}
	if (tty)
		fputs("\033[H\033[2J", out);
	if (rows && lines_of(text, len, cols) + 1 > rows) {
		size_t last;
		size_t keep = clipped(text, len, cols, rows, v->raw, &last);
		fwrite(text, 1, keep, out);
		if (last < len)
			fwrite(text + last, 1, len - last, out);
	} else {
		fwrite(text, 1, len, out);
	}
	fflush(out);
	free(text);
}
