/* SPDX-License-Identifier: MIT */
/*
 * Losses at the end of a stream, which no record number can show (holes
 * below the highest number are gaps.c's): every stream whose last record
 * is not its exit (or an exec that replaced the image) is named once,
 * with the input and byte after which nothing of it arrived; and every
 * fork child with no stream at all, when the inputs should hold the whole
 * traced tree (ka_model_check_forks), and every exec whose new image
 * has none (ka_model_exec_orphan).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

/* Why a child of a traced process can lack a stream, by how it was made. */
static const char *orphan_why(const struct ka_model *m, const struct ka_fork_note *f)
{
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (s->pid == f->pid && s->stream == f->stream && s->producer &&
		    strcmp(s->producer, "bpf") == 0)
			return "kbpf-trace starts a stream for every child: its records were lost";
	}
	if (strcmp(f->how, "fork") == 0)
		return "killed before its first flush, or its trace is not among the inputs";
	/* the shim follows vfork, clone and posix_spawn children from their exec */
	return "the shim traces such a child from its exec on: a static or setuid "
	       "program, KPROF_FOLLOW=0 or a failed exec leave none; or it was killed "
	       "before its first flush, or its trace is not among the inputs";
}

void ka_report_ends(FILE *out, const struct ka_model *m, struct ka_ends *ends)
{
	memset(ends, 0, sizeof(*ends));
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!ka_stream_unended(s))
			continue;
		char why[PATH_MAX + 160];
		ka_report_unended_why(why, sizeof(why), m, s);
		fprintf(out, "kanalyze: stream of pid %" PRIu64 " (%s) ended without exit: %s\n",
			s->pid, ka_stream_name(s), why);
		ends->unended++;
	}
	for (size_t i = 0; i < m->n_forks; i++) {
		const struct ka_fork_note *f = &m->forks[i];
		if (!ka_model_fork_orphan(m, f))
			continue;
		if (f->why[0])
			fprintf(out, "kanalyze: fork child pid %" PRIu64 " of pid %" PRIu64
				" has no stream (%s of %s: %s)\n", f->child, f->pid,
				f->how[0] ? f->how : "fork", f->path, ka_untraced_reason(f->why));
		else
			fprintf(out, "kanalyze: fork child pid %" PRIu64 " of pid %" PRIu64
				" has no stream (%s: %s)\n", f->child, f->pid,
				f->how[0] ? f->how : "fork", orphan_why(m, f));
		ends->orphans++;
	}
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!ka_model_exec_orphan(m, s))
			continue;
		if (s->exec_why[0])
			fprintf(out, "kanalyze: the exec of %s by pid %" PRIu64 " has no stream "
				"after it (%s): its calls are not in the profile\n",
				s->exec_path, s->pid, ka_untraced_reason(s->exec_why));
		else
			fprintf(out, "kanalyze: the exec of %s by pid %" PRIu64 " has no stream "
				"after it (the shim was not loaded in the new program: a static or "
				"setuid program, or one the dynamic loader could not preload it "
				"into; or its trace is not among the inputs): its calls are not in "
				"the profile\n", s->exec_path, s->pid);
		ends->exec_orphans++;
	}
	/* the parents the traced said were not (the rest are named above) */
	struct ka_untraced *list;
	size_t n;
	if (!ka_untraced_list(m, &list, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(list[i].seen, "parent") != 0)
				continue;
			fputs("kanalyze: ", out);
			ka_untraced_line(out, m, &list[i], "");
			ends->untraced++;
		}
		free(list);
	}
	ends->silent_live = m->silent_live;
	for (size_t i = 0; i < m->n_damaged; i++)
		ends->no_start += m->damaged[i].no_start;
}
