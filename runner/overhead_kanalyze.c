/* SPDX-License-Identifier: MIT */
/*
 * kanalyze's read speed on a trace of the shim (events on a getppid
 * loop), plain and gzip, next to gzip -dc alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "exec.h"
#include "overhead.h"
#include "run.h"
#include "stats.h"

/* --- kanalyze throughput --- */

struct trace_input {
	char dir[4200];
	double file_bytes;	/* on disk */
	double data_bytes;	/* uncompressed */
	double events;
};

static struct trace_input trace_plain, trace_gzip;

static double dir_bytes(const char *dir)
{
	double total = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[8400];
	struct stat st;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			total += (double)st.st_size;
	}
	closedir(d);
	return total;
}

/* Runs kanalyze --format=json on the trace: seconds taken, events seen. */
static int kanalyze_timed(struct suite_ctx *ctx, const char *dir, double *seconds, double *events)
{
	const char *argv[] = { ctx->run->loc->kanalyze, "--format=json", dir, NULL };
	struct suite_text out = { 0 };
	double t0 = overhead_now_s();
	int err = overhead_run(ctx, "kanalyze", argv, NULL, suite_text_line, &out);
	*seconds = overhead_now_s() - t0;
	json_error_t jerr;
	json_t *profile = err ? NULL : json_loads(out.data ? out.data : "", 0, &jerr);
	json_t *count = json_object_get(json_object_get(profile, "total"), "count");
	if (!err && !json_is_integer(count)) {
		suite_fail(ctx, "kanalyze printed no total count for %s", dir);
		err = -ENODATA;
	}
	if (!err)
		*events = (double)json_integer_value(count);
	json_decref(profile);
	free(out.data);
	return err;
}

static int make_trace(struct suite_ctx *ctx, struct trace_input *t, bool gzip)
{
	if (snprintf(t->dir, sizeof(t->dir), "%s/trace-%s", suite_scratch_dir(ctx),
		     gzip ? "gzip" : "plain") >= (int)sizeof(t->dir))
		return -ENAMETOOLONG;
	struct cmdline c;
	struct sample s;
	memset(&c, 0, sizeof(c));
	struct profiler pr = suite_profiler_of(ctx, PROFILE_PRELOAD, t->dir);
	pr.events = 1;
	pr.gzip = gzip;
	overhead_add_profiler(ctx, &c, &pr);
	cmdline_add(&c, suite_artifact_path(ctx, "overhead"));
	cmdline_add(&c, "--workload=getppid");
	cmdline_add(&c, cmdline_fmt(&c, "--calls=%s%s", suite_option(ctx, "trace-calls"), NULL));
	int err = c.truncated ? -ENAMETOOLONG :
		  overhead_run(ctx, "generating the kanalyze trace", c.argv, &s, NULL, NULL);
	if (err)
		return err;
	t->file_bytes = dir_bytes(t->dir);
	t->data_bytes = t->file_bytes;
	if (gzip) {
		char script[4400];
		snprintf(script, sizeof(script), "gzip -dc \"$1\"/* | wc -c");
		const char *argv[] = { suite_artifact_path(ctx, "sh"), "-c", script, "sh", t->dir,
				       NULL };
		struct suite_text out = { 0 };
		err = overhead_run(ctx, "measuring the uncompressed trace", argv, NULL, suite_text_line, &out);
		t->data_bytes = err || !out.data ? 0 : strtod(out.data, NULL);
		free(out.data);
	}
	if (!err && !(t->data_bytes > 0)) {
		suite_fail(ctx, "the generated trace %s is empty", t->dir);
		err = -ENODATA;
	}
	return err;
}

int overhead_round_kanalyze(struct suite_ctx *ctx)
{
	double sec, events;
	int err = kanalyze_timed(ctx, trace_plain.dir, &sec, &events);
	if (!err)
		err = suite_metric(ctx, "kanalyze_plain_mbps", trace_plain.data_bytes / 1e6 / sec);
	if (!err)
		err = suite_metric(ctx, "kanalyze_plain_events_per_s", events / sec);
	if (!err)
		err = kanalyze_timed(ctx, trace_gzip.dir, &sec, &events);
	if (!err)
		err = suite_metric(ctx, "kanalyze_gzip_mbps", trace_gzip.data_bytes / 1e6 / sec);
	if (!err)
		err = suite_metric(ctx, "kanalyze_gzip_events_per_s", events / sec);
	if (err)
		return err;
	const char *argv[] = { suite_artifact_path(ctx, "sh"), "-c",
			       "gzip -dc \"$1\"/* > /dev/null", "sh", trace_gzip.dir, NULL };
	double t0 = overhead_now_s();
	err = overhead_run(ctx, "gzip -dc", argv, NULL, NULL, NULL);
	sec = overhead_now_s() - t0;
	if (!err)
		err = suite_metric(ctx, "gzip_inflate_mbps", trace_gzip.data_bytes / 1e6 / sec);
	return err;
}

/* The traces kanalyze reads in every round, plain and gzip: made once. */
int overhead_kanalyze_setup(struct suite_ctx *ctx)
{
	int err = make_trace(ctx, &trace_plain, false);
	if (!err)
		err = make_trace(ctx, &trace_gzip, true);
	if (!err) {
		char text[64];
		snprintf(text, sizeof(text), "%.0f", trace_plain.file_bytes);
		suite_note(ctx, "kanalyze_trace_plain_bytes", text);
		snprintf(text, sizeof(text), "%.0f", trace_gzip.file_bytes);
		suite_note(ctx, "kanalyze_trace_gzip_bytes", text);
	}
	return err;
}
