/* SPDX-License-Identifier: MIT */
/*
 * --by=kind: profiles of the calls on each kind of descriptor, from the
 * `kinds` counters of the aggregates. Each section is built as the profile
 * of a derived model whose entries hold only that section's calls, so the
 * sections go through the same merging, sorting and printing as every
 * other profile. The sections add up to the whole profile:
 *   file, pipe, socket, other  calls whose first argument is a descriptor
 *                              of that kind (kinds counters: count, time,
 *                              retries, errors; no latency distribution)
 *   none                       syscalls without a descriptor argument
 *   unknown                    descriptor calls whose kind the producer
 *                              did not record (an older trace, or calls
 *                              counted outside the kinds counters)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "syscalls.h"

static const char *const section_names[KA_KIND_SECTIONS] = {
	"file", "pipe", "socket", "other", "none", "unknown",
};

const char *ka_kind_section_name(int section)
{
	return section >= 0 && section < KA_KIND_SECTIONS ? section_names[section] : "?";
}

bool ka_model_has_kinds(const struct ka_model *m)
{
	for (size_t i = 0; i < m->n_streams; i++)
		for (size_t t = 0; t < m->streams[i].n_threads; t++) {
			const struct ka_thread *th = &m->streams[i].threads[t];
			for (size_t k = 0; k < th->n_sc; k++)
				if (th->sc[k].have_kinds)
					return true;
		}
	return false;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The entry of sc that belongs to section, into *out (counters only, or a
 * shallow copy sharing sc's arrays); false when sc has no calls there.
 */
static bool section_entry(const struct ka_sc_stats *sc, int section,
			  const char *arch, struct ka_sc_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->nr = sc->nr;
	if (section < KP_KINDS) {
		const uint64_t *k = sc->kinds[section];
		if (!sc->have_kinds || !k[0])
			return false;
		out->count = k[0];
		out->time_ns = k[1];
		out->retries = k[2];
		out->errors = k[3];
		return true;
	}
	bool fd_arg = sc->have_kinds ||
		      (sc->nr <= UINT32_MAX && kp_syscall_fd_arg(arch, (unsigned)sc->nr));
	if (section == KA_KIND_NONE_SECTION) {
		if (fd_arg)
			return false;
		*out = *sc;
		return sc->count > 0;
	}
	if (!fd_arg)
		return false;
	if (!sc->have_kinds) {
		*out = *sc;
		return sc->count > 0;
	}
	/* what the kinds counters leave out of the entry's totals */
	uint64_t c[4] = { 0 };
	for (int k = 0; k < KP_KINDS; k++)
		for (int i = 0; i < 4; i++)
			c[i] += sc->kinds[k][i];
	out->count = minus(sc->count, c[0]);
	out->time_ns = minus(sc->time_ns, c[1]);
	out->retries = minus(sc->retries, c[2]);
	out->errors = minus(sc->errors, c[3]);
	return out->count > 0;
}

static void free_derived(struct ka_model *d)
{
	for (size_t i = 0; i < d->n_streams; i++) {
		for (size_t t = 0; t < d->streams[i].n_threads; t++)
			free(d->streams[i].threads[t].sc);
		free(d->streams[i].threads);
	}
	free(d->streams);
}

/* A model sharing m's streams but with each thread's entries of section. */
static int derive(struct ka_model *d, const struct ka_model *m, int section)
{
	memset(d, 0, sizeof(*d));
	if (!m->n_streams)
		return 0;
	d->streams = calloc(m->n_streams, sizeof(*d->streams));
	if (!d->streams)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		struct ka_stream *ds = &d->streams[d->n_streams++];
		*ds = *s;
		ds->threads = NULL;
		ds->n_threads = ds->cap_threads = 0;
		if (!s->n_threads)
			continue;
		ds->threads = calloc(s->n_threads, sizeof(*ds->threads));
		if (!ds->threads)
			return -ENOMEM;
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		for (size_t t = 0; t < s->n_threads; t++) {
			const struct ka_thread *th = &s->threads[t];
			struct ka_thread *dt = &ds->threads[ds->n_threads++];
			*dt = *th;
			dt->sc = NULL;
			dt->n_sc = 0;
			if (!th->n_sc)
				continue;
			dt->sc = calloc(th->n_sc, sizeof(*dt->sc));
			if (!dt->sc)
				return -ENOMEM;
			for (size_t k = 0; k < th->n_sc; k++)
				dt->n_sc += section_entry(&th->sc[k], section, arch,
							  &dt->sc[dt->n_sc]);
		}
	}
	return 0;
}

static void mark_latency(struct ka_row *r)
{
	uint64_t n = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++)
		n += r->hist.bucket[b];
	r->no_latency = n < r->count;
}

int ka_kind_profile(struct ka_profile *p, const struct ka_model *m,
		    int section, const struct ka_report_opts *o)
{
	struct ka_model d;
	int err = derive(&d, m, section);
	if (!err)
		err = ka_report_profile(p, &d, NULL, NULL, o);
	free_derived(&d);
	if (err)
		return err;
	for (size_t i = 0; i < p->n_rows; i++)
		mark_latency(&p->rows[i]);
	mark_latency(&p->total);
	return 0;
}
