/* SPDX-License-Identifier: MIT */
/*
 * Building a profile from the model (profile.h): threads merged into rows
 * by syscall, errno lists and histograms combined, percentiles, names,
 * and the orders the views sort by.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "syscalls.h"

const char *ka_errno_name(uint64_t err, char *buf, size_t size)
{
	/* the kernel's restart codes, which kbpf-trace sees at sys_exit of a
	 * call a signal interrupted: the program sees the call restarted
	 * (and counted again) or EINTR, never these */
	static const char *const restart[] = { "ERESTARTSYS", "ERESTARTNOINTR",
					       "ERESTARTNOHAND", "ENOIOCTLCMD",
					       "ERESTART_RESTARTBLOCK" };
	if (err >= 512 && err <= 516)
		return restart[err - 512];
	const char *name = err && err <= KA_ERRNO_MAX ? strerrorname_np((int)err) :
						     NULL;
	if (name)
		return name;
	snprintf(buf, size, "errno_%" PRIu64, err);
	return buf;
}

/* ---- merging ---- */

static int sc_by_nr(const void *a, const void *b)
{
	const struct ka_sc_stats *x = *(const struct ka_sc_stats *const *)a;
	const struct ka_sc_stats *y = *(const struct ka_sc_stats *const *)b;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static int pair_by_key(const void *a, const void *b)
{
	const struct ka_pair *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Sorts and combines equal keys of pairs in place; returns the new count. */
static size_t pairs_combine(struct ka_pair *p, size_t n)
{
	if (n == 0)
		return 0;
	qsort(p, n, sizeof(*p), pair_by_key);
	size_t out = 0;
	for (size_t i = 1; i < n; i++) {
		if (p[i].key == p[out].key)
			p[out].value += p[i].value;
		else
			p[++out] = p[i];
	}
	return out + 1;
}

static int pairs_append(struct ka_pair **dst, size_t *n,
			const struct ka_pair *src, size_t count)
{
	if (count == 0)
		return 0;
	void *p = reallocarray(*dst, *n + count, sizeof(**dst));
	if (!p)
		return -ENOMEM;
	*dst = p;
	memcpy(*dst + *n, src, count * sizeof(*src));
	*n += count;
	return 0;
}

static void row_name(struct ka_row *r, const char *arch)
{
	const char *name = r->nr <= UINT_MAX ?
				   kp_syscall_name(arch, (unsigned)r->nr) :
				   NULL;
	if (name)
		snprintf(r->name, sizeof(r->name), "%s", name);
	else
		snprintf(r->name, sizeof(r->name), "syscall_%" PRIu64, r->nr);
}

static void row_percentiles(struct ka_row *r)
{
	r->p50_ns = kp_hist_quantile(&r->hist, 0.50, r->min_ns, r->max_ns);
	r->p90_ns = kp_hist_quantile(&r->hist, 0.90, r->min_ns, r->max_ns);
	r->p99_ns = kp_hist_quantile(&r->hist, 0.99, r->min_ns, r->max_ns);
}

int ka_profile_build(struct ka_profile *p, const struct ka_model *m,
		     const struct ka_stream *stream,
		     const struct ka_thread *thread)
{
	const struct ka_sc_stats **all = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	memset(p, 0, sizeof(*p));
	snprintf(p->total.name, sizeof(p->total.name), "TOTAL");
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (stream && s != stream)
			continue;
		for (size_t t = 0; t < s->n_threads; t++) {
			const struct ka_thread *th = &s->threads[t];
			if (thread && th != thread)
				continue;
			err = ka_grow((void **)&all, &cap, n + th->n_sc, sizeof(*all));
			if (err)
				goto out;
			for (size_t k = 0; k < th->n_sc; k++)
				if (!(m->set_aside && th->sc[k].nr < 1024 &&
				      m->set_aside[th->sc[k].nr]))
					all[n++] = &th->sc[k];
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), sc_by_nr);
	const char *arch = stream && stream->arch ? stream->arch : ka_model_arch(m);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && all[j]->nr == all[i]->nr)
			j++;
		if (p->n_rows % 16 == 0) {
			void *q = reallocarray(p->rows, p->n_rows + 16, sizeof(*p->rows));
			if (!q) {
				err = -ENOMEM;
				goto out;
			}
			p->rows = q;
		}
		struct ka_row *r = &p->rows[p->n_rows++];
		memset(r, 0, sizeof(*r));
		r->nr = all[i]->nr;
		row_name(r, arch);
		for (size_t k = i; k < j; k++) {
			const struct ka_sc_stats *sc = all[k];
			KP_SC_MERGE(r, sc);
			KP_SC_MERGE_HAS(r, sc);
			for (size_t h = 0; h < sc->n_hist; h++)
				r->hist.bucket[sc->hist[h].key] += sc->hist[h].value;
			err = pairs_append(&r->errnos, &r->n_errnos, sc->errnos,
					   sc->n_errnos);
			if (err)
				goto out;
		}
		r->n_errnos = pairs_combine(r->errnos, r->n_errnos);
		row_percentiles(r);

		struct ka_row *t = &p->total;
		KP_SC_MERGE(t, r);
		KP_SC_MERGE_HAS(t, r);
		kp_hist_add(&t->hist, &r->hist);
		err = pairs_append(&t->errnos, &t->n_errnos, r->errnos, r->n_errnos);
		if (err)
			goto out;
		i = j;
	}
	p->total.n_errnos = pairs_combine(p->total.errnos, p->total.n_errnos);
	row_percentiles(&p->total);
out:
	free(all);
	if (err)
		ka_profile_free(p);
	return err;
}

void ka_profile_free(struct ka_profile *p)
{
	for (size_t i = 0; i < p->n_rows; i++)
		free(p->rows[i].errnos);
	free(p->rows);
	free(p->total.errnos);
	memset(p, 0, sizeof(*p));
}

static uint64_t row_avg(const struct ka_row *r)
{
	return r->count ? r->time_ns / r->count : 0;
}

static enum ka_sort sort_key;

static int row_order(const void *a, const void *b)
{
	const struct ka_row *x = a, *y = b;
	uint64_t u = 0, v = 0;
	switch (sort_key) {
	case KA_SORT_TIME: u = x->time_ns; v = y->time_ns; break;
	case KA_SORT_COUNT: u = x->count; v = y->count; break;
	case KA_SORT_AVG: u = row_avg(x); v = row_avg(y); break;
	case KA_SORT_RETRIES: u = x->retries; v = y->retries; break;
	case KA_SORT_ERRORS: u = x->errors; v = y->errors; break;
	case KA_SORT_NAME: {
		int c = strcmp(x->name, y->name);
		if (c)
			return c;
		break;
	}
	}
	if (u != v)
		return u > v ? -1 : 1; /* highest first */
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

void ka_profile_sort(struct ka_profile *p, enum ka_sort by)
{
	sort_key = by;
	if (p->n_rows > 1)
		qsort(p->rows, p->n_rows, sizeof(*p->rows), row_order);
}
