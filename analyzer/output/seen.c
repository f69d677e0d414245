/* SPDX-License-Identifier: MIT */
/*
 * What the producers could see and what their times measure, above a
 * profile (the table's and the summary's first lines): the shim's
 * coverage by its hook mode (symbols, patch, rewrite), the processes it
 * could not enter, and where the times of kbpf-trace begin and end.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "report.h"
#include "views.h"

/*
 * Why a symbol-mode stream ran in symbol mode, from its header's coverage
 * sentence (preload/rewrite/setup.c): "(symbol mode chosen: WHY)",
 * "(rewrite mode unavailable: WHY)", or from older shims "(rewrite mode:
 * WHY)" where WHY "KPROF_HOOK=symbols" means chosen. Copies WHY to buf;
 * 1 chosen, 0 unavailable, -1 unknown (no such part).
 */
static int symbols_reason(const char *coverage, char *buf, size_t size)
{
	static const struct { const char *tag; int chosen; } tags[] = {
		{ "(symbol mode chosen: ", 1 },
		{ "(rewrite mode unavailable: ", 0 },
		{ "(rewrite mode: ", 0 },
	};
	for (size_t i = 0; coverage && i < sizeof(tags) / sizeof(tags[0]); i++) {
		const char *p = strstr(coverage, tags[i].tag);
		if (!p)
			continue;
		p += strlen(tags[i].tag);
		/* up to the parenthesis that closes the tag's (WHY may hold some) */
		size_t n = 0;
		for (int depth = 1; p[n]; n++) {
			if (p[n] == '(')
				depth++;
			else if (p[n] == ')' && --depth == 0)
				break;
		}
		snprintf(buf, size, "%.*s", (int)n, p);
		return tags[i].chosen || strcmp(buf, "KPROF_HOOK=symbols") == 0;
	}
	return -1;
}

/* The symbol-mode note: what is missed and why (one reason per distinct one). */
static void print_symbols_note(FILE *out, const struct ka_model *m, const char *label)
{
	char reasons[4][200];
	int chosen[4], n = 0;
	bool more = false;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		char why[200];
		if (!s->producer || strcmp(s->producer, "preload") != 0)
			continue;
		int c = symbols_reason(s->coverage, why, sizeof(why));
		if (c < 0)
			continue;
		bool seen = false;
		for (int k = 0; k < n && !seen; k++)
			seen = chosen[k] == c && strcmp(reasons[k], why) == 0;
		if (seen)
			continue;
		if (n == 4) {
			more = true;
			continue;
		}
		chosen[n] = c;
		snprintf(reasons[n++], sizeof(reasons[0]), "%s", why);
	}
	fprintf(out, "%s: libc exported functions only — futex and internal "
		     "calls are not seen", label);
	for (int k = 0; k < n; k++) {
		fputs(k ? "; " : " (", out);
		if (chosen[k])
			fprintf(out, "symbol mode chosen: %s", reasons[k]);
		else
			fprintf(out, "rewrite mode unavailable: %s", reasons[k]);
	}
	fputs(more ? "; ...)" : n ? ")" : "", out);
	bool any_chosen = false;
	for (int k = 0; k < n; k++)
		any_chosen |= chosen[k];
	fprintf(out, "; use kbpf-trace to see them%s\n",
		any_chosen ? ", or unset KPROF_HOOK" : "");
}

/* Patch mode: complete with dispatch, and how many calls took that path. */
static void print_patch_coverage(FILE *out, const struct ka_model *m, const char *label)
{
	struct ka_dispatch d;
	if (ka_dispatch_sum(m, &d) || !d.armed) {
		fprintf(out, "%s: complete after start-up for the loaded files' code "
			     "(patch mode without Syscall User Dispatch: not code made at run "
			     "time)\n", label);
		ka_dispatch_free(&d);
		return;
	}
	fprintf(out, "%s: complete after start-up (patch mode)", label);
	if (!d.calls) {
		fputs("; no call needed Syscall User Dispatch\n", out);
	} else {
		fprintf(out, "; %" PRIu64 " call%s at %zu site%s came through Syscall User "
			     "Dispatch (SIGSYS, slower)",
			d.calls, d.calls == 1 ? "" : "s", d.n_sites, d.n_sites == 1 ? "" : "s");
		for (size_t k = 0; k < d.n_sites && k < 3; k++)
			fprintf(out, "%s %s %" PRIu64, k ? "," : ":", d.sites[k].where,
				d.sites[k].calls);
		fputs(d.n_sites > 3 ? ", ...\n" : "\n", out);
	}
	ka_dispatch_free(&d);
}

/* Where kbpf-trace's times begin and end, when a stream is its. */
static void print_bpf_timing(FILE *out, const struct ka_model *m)
{
	for (size_t i = 0; i < m->n_streams; i++) {
		const char *p = m->streams[i].producer;
		if (p && strcmp(p, "bpf") == 0) {
			fputs("times (kbpf-trace): from the kernel's syscall entry tracepoint to "
			      "its exit tracepoint; the syscall instruction's own entry and exit "
			      "are outside them (most of a call under 2 us on a host with "
			      "page-table isolation: docs/PERFORMANCE.md)\n",
			      out);
			return;
		}
	}
}

/* What the shim could see, by its hook mode (the header's hook_mode); with
 * more than one producer merged, a line for each. */
void ka_report_seen(FILE *out, const struct ka_model *m)
{
	print_bpf_timing(out, m);
	const char *mode = ka_model_hook_mode(m);
	struct ka_runs runs;
	ka_runs_count(m, &runs);
	if (runs.n_producers > 1) {
		for (unsigned k = 0; k < runs.n_producers; k++) {
			if (!strcmp(runs.producer[k], "preload"))
				continue;
			struct ka_producer_coverage c;
			ka_runs_coverage(m, runs.producer[k], &c);
			fprintf(out, "coverage of the %s streams (%" PRIu64 "): %s\n",
				runs.producer[k], runs.streams[k],
				c.coverage ? c.coverage : "not said");
		}
	}
	if (!mode)
		return;
	char label[64] = "coverage";
	for (unsigned k = 0; runs.n_producers > 1 && k < runs.n_producers; k++)
		if (!strcmp(runs.producer[k], "preload"))
			snprintf(label, sizeof(label), "coverage of the preload streams (%" PRIu64 ")",
				 runs.streams[k]);
	/* a process of the run the shim could not enter: not complete */
	size_t untraced = ka_untraced_count(m);
	if (untraced) {
		fprintf(out, "coverage: incomplete: %zu process%s of the run not traced (named "
			     "below)\n", untraced, untraced == 1 ? "" : "es");
		snprintf(label, sizeof(label), "coverage of the traced processes");
	}
	if (strcmp(mode, "rewrite") == 0)
		fprintf(out, "%s: complete after start-up\n", label);
	else if (strcmp(mode, "patch") == 0)
		print_patch_coverage(out, m, label);
	else if (strcmp(mode, "symbols") == 0)
		print_symbols_note(out, m, label);
	else
		fprintf(out, "%s: mixed — some processes complete after "
			     "start-up, some libc exported functions only\n", label);
	ka_report_go_note(out, m, "coverage: ");
}
