/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --timeline=FILE: the event records as Chrome trace event JSON
 * (the "JSON Object Format" that chrome://tracing and Perfetto's UI open):
 * one complete event ("ph":"X") per call, on a track per thread (pid = the
 * process, tid = the kernel thread id), named after the syscall, with the
 * return value (and errno name on failure) as arguments. Times are
 * microseconds since the earliest stream start.
 *
 * Viewers open a few hundred MB of it at most (Perfetto's UI runs out of
 * memory on a 2.6 GB file without a word): beyond max_bytes the timeline
 * is cut at a time, keeping the run's beginning whole on every track, and
 * one line on stderr says where and what was left out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "views.h"

void ka_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static uint64_t base_ns(const struct ka_model *m)
{
	uint64_t base = UINT64_MAX;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (s->have_header && s->start_ns < base)
			base = s->start_ns;
		for (size_t k = 0; k < s->n_event_list; k++)
			if (s->event_list[k].start_ns < base)
				base = s->event_list[k].start_ns;
	}
	return base == UINT64_MAX ? 0 : base;
}

/* One slice's JSON, as written after its ",\n"; its length (at most cap - 1). */
static size_t slice_json(char *buf, size_t cap, const struct ka_event *e, const char *arch,
			 uint64_t pid, uint64_t base)
{
	const char *name = e->nr < KP_SYSCALL_MAX ? kp_syscall_name(arch, (unsigned)e->nr) : NULL;
	char tmp[40], err[64] = "";
	if (!name) {
		snprintf(tmp, sizeof(tmp), "syscall_%" PRIu64, e->nr);
		name = tmp;
	}
	if (e->ret < 0 && e->ret > -4096) {
		char eb[32];
		snprintf(err, sizeof(err), ",\"error\":\"%s\"",
			 ka_errno_name((uint64_t)-e->ret, eb, sizeof(eb)));
	}
	uint64_t ts = e->start_ns >= base ? e->start_ns - base : 0;
	int n = snprintf(buf, cap,
			 "{\"name\":\"%s\",\"cat\":\"syscall\",\"ph\":\"X\",\"ts\":%" PRIu64
			 ".%03" PRIu64 ",\"dur\":%" PRIu64 ".%03" PRIu64 ",\"pid\":%" PRIu64
			 ",\"tid\":%" PRIu64 ",\"args\":{\"nr\":%" PRIu64 ",\"ret\":%" PRId64 "%s}}",
			 name, ts / 1000, ts % 1000, e->duration_ns / 1000, e->duration_ns % 1000, pid,
			 e->tid, e->nr, e->ret, err);
	return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Where the timeline is cut: events starting at or after the time
 * returned are left out (UINT64_MAX: none). *bytes: the whole timeline's
 * size, from the mean of up to 10,000 slices taken across it. */
static uint64_t cut_at(const struct ka_model *m, uint64_t base, uint64_t max_bytes,
		       double *bytes)
{
	uint64_t n = 0, sampled = 0, sample_bytes = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		n += m->streams[i].n_event_list;
	uint64_t stride = n / 10000 + 1, k = 0;
	char buf[512];
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		for (size_t j = 0; j < s->n_event_list; j++, k++)
			if (k % stride == 0) {
				sample_bytes += slice_json(buf, sizeof(buf), &s->event_list[j], arch,
							   s->pid, base) + 2;
				sampled++;
			}
	}
	double mean = sampled ? (double)sample_bytes / (double)sampled : 0;
	*bytes = mean * (double)n;
	if (!max_bytes || *bytes <= (double)max_bytes || !n)
		return UINT64_MAX;
	uint64_t keep = (uint64_t)((double)max_bytes / mean);
	uint64_t *starts = malloc(n * sizeof(*starts));
	if (!starts) { /* no room to sort: the run's span, as if the calls were even */
		uint64_t last = base;
		for (size_t i = 0; i < m->n_streams; i++)
			for (size_t j = 0; j < m->streams[i].n_event_list; j++)
				if (m->streams[i].event_list[j].start_ns > last)
					last = m->streams[i].event_list[j].start_ns;
		return base + (uint64_t)((double)(last - base) * (double)max_bytes / *bytes);
	}
	k = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		for (size_t j = 0; j < m->streams[i].n_event_list; j++)
			starts[k++] = m->streams[i].event_list[j].start_ns;
	qsort(starts, n, sizeof(*starts), cmp_u64);
	uint64_t t = starts[keep < n ? keep : n - 1];
	free(starts);
	/* a whole microsecond after the base: said exactly as the slices' ts are */
	return t > base ? base + (t - base + 999) / 1000 * 1000 : base;
}

static void say_cut(uint64_t written, uint64_t total, double bytes, uint64_t max_bytes,
		    uint64_t cut_ns)
{
	fprintf(stderr,
		"kanalyze: --timeline: %" PRIu64 " slices would make about %.0f MB, more than"
		" --timeline-max=%" PRIu64 " (the most a viewer opens): cut at %.6f s into the run,"
		" the first %" PRIu64 " slices (%.1f%%) written; filter (--pid, -e,"
		" --min-duration) or give --timeline-max=0 for all\n",
		total, bytes / 1048576.0, max_bytes >> 20, (double)cut_ns / 1e9, written,
		100.0 * (double)written / (double)total);
}

int ka_write_timeline(FILE *out, const struct ka_model *m, uint64_t max_bytes, uint64_t *slices)
{
	uint64_t base = base_ns(m), total = 0;
	double bytes;
	uint64_t cut = cut_at(m, base, max_bytes, &bytes);
	bool first = true;
	char buf[512];
	*slices = 0;
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		char label[1024];
		if (!s->n_event_list)
			continue;
		/* one pid, one process row: the images a pid exec'd (one stream
		 * each) are named together, by the first of them */
		bool pid_named = false;
		for (size_t k = 0; k < i && !pid_named; k++)
			pid_named = m->streams[k].pid == s->pid && m->streams[k].n_event_list;
		if (!pid_named) {
			ka_report_label(label, sizeof(label), s, NULL);
			for (size_t k = i + 1; k < m->n_streams; k++) {
				size_t len = strlen(label);
				if (m->streams[k].pid == s->pid && m->streams[k].n_event_list &&
				    len + 64 < sizeof(label))
					snprintf(label + len, sizeof(label) - len, ", then exec %s",
						 ka_stream_name(&m->streams[k]));
			}
			fprintf(out, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu64
				",\"args\":{\"name\":", first ? "" : ",", s->pid);
			ka_json_string(out, label);
			fprintf(out, "}}");
			first = false;
		}
		uint64_t named_tids[256];
		size_t n_named = 0;
		/* the threads an earlier image of the pid named already */
		for (size_t k = 0; k < i && pid_named; k++) {
			const struct ka_stream *o = &m->streams[k];
			for (size_t j = 0; o->pid == s->pid && j < o->n_event_list && n_named < 256; j++) {
				bool seen = false;
				for (size_t q = 0; q < n_named && !seen; q++)
					seen = named_tids[q] == o->event_list[j].tid;
				if (!seen && o->event_list[j].start_ns < cut)
					named_tids[n_named++] = o->event_list[j].tid;
			}
		}
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct ka_event *e = &s->event_list[k];
			total++;
			if (e->start_ns >= cut)
				continue;
			bool named = false;
			for (size_t j = 0; j < n_named && !named; j++)
				named = named_tids[j] == e->tid;
			if (!named && n_named < 256)
				named_tids[n_named++] = e->tid;
			if (!named)
				fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu64
					",\"tid\":%" PRIu64 ",\"args\":{\"name\":\"tid %" PRIu64 "\"}}",
					s->pid, e->tid, e->tid);
			fputs(",\n", out);
			fwrite(buf, 1, slice_json(buf, sizeof(buf), e, arch, s->pid, base), out);
			(*slices)++;
		}
	}
	fprintf(out, "\n]}\n");
	if (cut != UINT64_MAX)
		say_cut(*slices, total, bytes, max_bytes, cut >= base ? cut - base : 0);
	return ferror(out) ? -EIO : 0;
}
