/* SPDX-License-Identifier: MIT */
/*
 * Lossless by construction: every record of a stream carries its number
 * (`seq`, from 1), so a reader can say exactly which records it did not
 * get. Holes below the highest number seen are certain; records lost after
 * the last one received show as a stream without its `exit` record.
 */
#include <inttypes.h>
#include <stdio.h>

#include "views.h"

#define HOLES_SHOWN 8

uint64_t ka_report_gaps(FILE *out, const struct ka_model *m)
{
	uint64_t total = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		struct ka_seq_range holes[HOLES_SHOWN];
		size_t n = 0;
		uint64_t missing = ka_stream_missing(s, holes, HOLES_SHOWN, &n);
		if (!missing)
			continue;
		total += missing;
		fprintf(out, "kanalyze: pid %" PRIu64 " stream %016" PRIx64 ": %" PRIu64
			" record%s missing (seq", s->pid, s->stream, missing,
			missing == 1 ? "" : "s");
		for (size_t k = 0; k < n && k < HOLES_SHOWN; k++) {
			if (holes[k].first == holes[k].last)
				fprintf(out, "%s %" PRIu64, k ? "," : "", holes[k].first);
			else
				fprintf(out, "%s %" PRIu64 "-%" PRIu64, k ? "," : "",
					holes[k].first, holes[k].last);
		}
		fprintf(out, "%s)\n", n > HOLES_SHOWN ? ", ..." : "");
	}
	return total;
}
