/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --timeline=FILE: the event records as Chrome trace event JSON
 * (the "JSON Object Format" that chrome://tracing and Perfetto's UI open):
 * one complete event ("ph":"X") per call, on a track per thread (pid = the
 * process, tid = the kernel thread id), named after the syscall, with the
 * return value (and errno name on failure) as arguments. Times are
 * microseconds since the earliest stream start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
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

static void put_us(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

int ka_write_timeline(FILE *out, const struct ka_model *m, uint64_t *slices)
{
	uint64_t base = base_ns(m);
	bool first = true;
	*slices = 0;
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		char label[512];
		if (!s->n_event_list)
			continue;
		ka_report_label(label, sizeof(label), s, NULL);
		fprintf(out, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu64
			",\"args\":{\"name\":", first ? "" : ",", s->pid);
		ka_json_string(out, label);
		fprintf(out, "}}");
		first = false;
		uint64_t named_tids[256];
		size_t n_named = 0;
		for (size_t k = 0; k < s->n_event_list; k++) {
			const struct ka_event *e = &s->event_list[k];
			bool named = false;
			for (size_t j = 0; j < n_named && !named; j++)
				named = named_tids[j] == e->tid;
			if (!named && n_named < 256)
				named_tids[n_named++] = e->tid;
			if (!named)
				fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%" PRIu64
					",\"tid\":%" PRIu64 ",\"args\":{\"name\":\"tid %" PRIu64 "\"}}",
					s->pid, e->tid, e->tid);
			const char *name = e->nr < KP_SYSCALL_MAX ?
						   kp_syscall_name(arch, (unsigned)e->nr) : NULL;
			char tmp[40];
			if (!name) {
				snprintf(tmp, sizeof(tmp), "syscall_%" PRIu64, e->nr);
				name = tmp;
			}
			fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"syscall\",\"ph\":\"X\",\"ts\":", name);
			put_us(out, e->start_ns >= base ? e->start_ns - base : 0);
			fprintf(out, ",\"dur\":");
			put_us(out, e->duration_ns);
			fprintf(out, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
				",\"args\":{\"nr\":%" PRIu64 ",\"ret\":%" PRId64,
				s->pid, e->tid, e->nr, e->ret);
			if (e->ret < 0 && e->ret > -4096) {
				char eb[32];
				fprintf(out, ",\"error\":\"%s\"",
					ka_errno_name((uint64_t)-e->ret, eb, sizeof(eb)));
			}
			fprintf(out, "}}");
			(*slices)++;
		}
	}
	fprintf(out, "\n]}\n");
	return ferror(out) ? -EIO : 0;
}
