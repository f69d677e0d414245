/* SPDX-License-Identifier: MIT */
/*
 * erlang-ring: Erlang/OTP's lightweight processes and message passing. The
 * ring program (programs/erlang/ring.erl) is compiled with erlc into the
 * scratch directory at setup and run with erl each round; it times the
 * ring itself and prints total_ms and messages_per_sec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_process.h"
#include "suite.h"

static const struct metric_def metrics[] = {
	{ "total_ms", "ms", LOWER_IS_BETTER, "the token's full trip: every lap around the ring" },
	{ "messages_per_sec", "msg/s", HIGHER_IS_BETTER, "messages passed per second" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_INPUT, "programs/erlang/ring.erl", "the kprof source tree (programs/erlang/ring.erl)", false },
	{ ARTIFACT_TOOL, "erl", "apt-get install erlang-base", true },
	{ ARTIFACT_TOOL, "erlc", "apt-get install erlang-dev", true },
};

static const struct suite_option options[] = {
	{ "processes", "1000", "processes in the Erlang ring" },
	{ "laps", "100", "times the token goes around the ring" },
};

static int positive(struct suite_ctx *ctx, const char *name)
{
	char *end;
	long v = strtol(suite_option(ctx, name), &end, 10);
	if (*end || v < 1 || v > 10000000) {
		fprintf(stderr, "krunner: erlang-ring: --%s wants a whole number >= 1, not '%s'\n",
			name, suite_option(ctx, name));
		return -EINVAL;
	}
	return 0;
}

/*
 * The release (25), its patch level from releases/25/OTP_VERSION (25.2.3),
 * the erts version, and the real emulator: erl is a shell script, so the
 * fingerprint that tells two Erlang builds apart is beam.smp's, found at
 * <root>/erts-<version>/bin/beam.smp.
 */
#define ERTS_PROBE                                                                        \
	"R = code:root_dir(), V = erlang:system_info(version), "                          \
	"O = erlang:system_info(otp_release), "                                           \
	"{ok, P} = file:read_file(filename:join([R, \"releases\", O, \"OTP_VERSION\"])), " \
	"io:format(\"~s~n~s~n~s~n~s/erts-~s/bin/beam.smp~n\", [O, string:trim(P), V, R, V]), " \
	"halt()."

static int note_erts(struct suite_ctx *ctx)
{
	const char *argv[] = { suite_artifact_path(ctx, "erl"), "-noshell", "-eval", ERTS_PROBE,
			       NULL };
	struct app_command cmd = { .argv = argv, .quiet = true, .timeout_ms = 30000 };
	int status;
	double ms;
	char *out = NULL, *line[4] = { NULL }, *save = NULL;
	int err = app_run(ctx, &cmd, &status, &ms, &out);
	if (!err && app_exited_ok(status)) {
		char *p = out;
		for (int i = 0; i < 4; i++, p = NULL)
			line[i] = strtok_r(p, "\n", &save);
	}
	if (!line[3]) {
		fprintf(stderr, "krunner: erlang-ring: erl did not say its release, erts version "
			"and emulator path\n");
		free(out);
		return err ? err : -ECHILD;
	}
	err = suite_note(ctx, "otp_release", line[0]);
	if (!err)
		err = suite_note(ctx, "otp_version", line[1]);
	if (!err)
		err = suite_note(ctx, "erts_version", line[2]);
	if (!err)
		err = suite_add_input(ctx, "beam.smp", line[3]);
	free(out);
	return err;
}

static int setup_erlang_ring(struct suite_ctx *ctx)
{
	if (positive(ctx, "processes") || positive(ctx, "laps"))
		return -EINVAL;
	const char *argv[] = { suite_artifact_path(ctx, "erlc"), "-o", suite_scratch_dir(ctx),
			       suite_artifact_path(ctx, "programs/erlang/ring.erl"), NULL };
	struct app_command cmd = { .argv = argv, .timeout_ms = 120000 };
	int status;
	double ms;
	char text[96];
	int err = app_run(ctx, &cmd, &status, &ms, NULL);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: erlc ring.erl failed (%s)\n",
			app_status_text(status, text, sizeof(text)));
		err = -ECHILD;
	}
	if (!err)
		err = note_erts(ctx);
	return err;
}

static int round_erlang_ring(struct suite_ctx *ctx)
{
	const char *argv[] = { suite_artifact_path(ctx, "erl"), "-noshell", "-pa",
			       suite_scratch_dir(ctx), "-run", "ring", "main",
			       suite_option(ctx, "processes"), suite_option(ctx, "laps"), NULL };
	return suite_run(ctx, argv);
}

static const struct suite erlang_ring = {
	.name = "erlang-ring",
	.description = "Erlang/OTP: a token around a ring of 1000 processes, 100 laps",
	SUITE_TABLES(metrics, artifacts, options),
	.default_rounds = SUITE_APP_ROUNDS,
	.warmup_rounds = 1,
	.setup = setup_erlang_ring,
	.round = round_erlang_ring,
};

SUITE_REGISTER(erlang_ring)
