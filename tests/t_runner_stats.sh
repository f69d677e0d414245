# SPDX-License-Identifier: MIT
# krunner's statistics on generated samples with known answers
# (tests/runner_stats.c says what each check is).
. "$KPROF_ROOT/tests/lib.sh"
"$BUILD/tests/runner_stats"
