/* --by=errno: failed calls by errno, then by syscall, most frequent first. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "views.h"

struct cell {
	uint64_t err, calls;
	const struct kp_row *row;
};

static int by_err_then_calls(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	if (x->err != y->err)
		return x->err < y->err ? -1 : 1;
	return x->calls > y->calls ? -1 : x->calls < y->calls;
}

int kp_report_errno_table(FILE *out, const struct kp_model *m,
			  const struct kp_report_opts *o)
{
	struct kp_profile p;
	int err = kp_report_profile(&p, m, NULL, NULL, o);
	if (err)
		return err;
	size_t n = 0;
	for (size_t i = 0; i < p.n_rows; i++)
		n += p.rows[i].n_errnos;
	struct cell *c = calloc(n + 1, sizeof(*c));
	if (!c) {
		kp_profile_free(&p);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < p.n_rows; i++)
		for (size_t k = 0; k < p.rows[i].n_errnos; k++)
			c[n++] = (struct cell){ p.rows[i].errnos[k].key,
						p.rows[i].errnos[k].value, &p.rows[i] };
	qsort(c, n, sizeof(*c), by_err_then_calls);
	fprintf(out, "=== Failed Calls by errno ===\n%-16s %10s  %s\n", "errno", "Calls",
		"Syscalls");
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t total = 0;
		while (j < n && c[j].err == c[i].err)
			total += c[j++].calls;
		char buf[32];
		fprintf(out, "%-16s %10" PRIu64 " ", c[i].err ? kp_errno_name(c[i].err, buf, sizeof(buf)) :
			"(other errno)", total);
		for (size_t k = i; k < j; k++)
			fprintf(out, " %s %" PRIu64 "%s", c[k].row->name, c[k].calls,
				k + 1 < j ? "," : "");
		fputc('\n', out);
		i = j;
	}
	if (!n)
		fprintf(out, "No call failed.\n");
	fprintf(out, "=== End Failed Calls ===\n");
	free(c);
	kp_profile_free(&p);
	return 0;
}
