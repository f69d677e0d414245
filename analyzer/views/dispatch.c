/* SPDX-License-Identifier: MIT */
/* The shim's dispatch path, summed over the streams (dispatch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "symbolize.h"

static int by_calls(const void *a, const void *b)
{
	const struct ka_dispatch_site *x = a, *y = b;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->where, y->where);
}

int ka_dispatch_sum(const struct ka_model *m, struct ka_dispatch *d)
{
	memset(d, 0, sizeof(*d));
	size_t cap = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		cap += m->streams[i].n_dispatch_sites;
	if (cap && !(d->sites = calloc(cap, sizeof(*d->sites))))
		return -ENOMEM;
	struct ka_symbolizer *sym = NULL;
	int err = cap ? ka_symbolizer_new(&sym) : 0;
	if (err) {
		ka_dispatch_free(d);
		return err;
	}
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!s->dispatch)
			continue;
		d->armed = true;
		d->calls += s->dispatch_calls;
		for (size_t k = 0; k < s->n_dispatch_sites; k++) {
			char where[sizeof(d->sites[0].where)];
			/* the syscall instruction: named as the return address after it */
			ka_symbolize(sym, s, s->dispatch_sites[k].key + 2, where, sizeof(where));
			size_t j = 0;
			while (j < d->n_sites && strcmp(d->sites[j].where, where) != 0)
				j++;
			if (j == d->n_sites)
				memcpy(d->sites[d->n_sites++].where, where, sizeof(where));
			d->sites[j].calls += s->dispatch_sites[k].value;
		}
	}
	ka_symbolizer_free(sym);
	if (d->n_sites)
		qsort(d->sites, d->n_sites, sizeof(*d->sites), by_calls);
	return 0;
}

void ka_dispatch_free(struct ka_dispatch *d)
{
	free(d->sites);
	memset(d, 0, sizeof(*d));
}
