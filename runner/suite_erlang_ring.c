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
	const char *version_argv[] = { suite_artifact_path(ctx, "erl"), "-noshell", "-eval",
				       "io:format(\"~s~n\", [erlang:system_info(otp_release)]), halt().",
				       NULL };
	struct app_command version = { .argv = version_argv, .quiet = true, .timeout_ms = 30000 };
	char *out = NULL;
	if (!err && app_run(ctx, &version, &status, &ms, &out) == 0 && app_exited_ok(status)) {
		out[strcspn(out, "\n")] = '\0';
		suite_note(ctx, "otp_release", out);
	}
	free(out);
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
	.warmup_rounds = 1,
	.setup = setup_erlang_ring,
	.round = round_erlang_ring,
};

SUITE_REGISTER(erlang_ring)
