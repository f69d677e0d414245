# SPDX-License-Identifier: MIT
# serial: benchmark runs timed
# krunner --profile=preload: every round leaves a trace that kanalyze reads,
# its top syscalls are in the result, and every metric has a probe effect
# resting on as many unprofiled values as profiled ones (each profiled round
# has an unprofiled twin), said in the metric's direction with its
# interval over the rounds, and "not significant" first when it is not;
# where one side's median is 0 (retained memory), as the difference in the
# metric's unit.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=syscall-io,process-lifecycle,spawn-scratch --rounds=2 --profile=preload \
	--min-time-ms=20 --out="$PWD/results" >/dev/null || fail "krunner exited $?"
result=$(echo results/*.json)
expect_eq "profile option" preload "$(jq -r .options.profile "$result")"
for suite in syscall-io process-lifecycle spawn-scratch; do
	sel=".suites[] | select(.name == \"$suite\")"
	expect_eq "$suite profiled rounds" 2 "$(jq "[$sel | .round_details[] | select(.profiled)] | length" "$result")"
	expect_eq "$suite unprofiled rounds" 2 "$(jq "[$sel | .round_details[] | select(.profiled | not)] | length" "$result")"
	bad=$(jq -r "$sel | .metrics | to_entries[] | select(.value.n != .value.plain_n) | .key" "$result")
	[ -z "$bad" ] || fail "$suite: fewer plain values than profiled: $bad"
	# the factor with its interval, "not significant: measured" first when
	# the interval holds 1; a 0 median as a difference of unknown significance
	factor='([0-9.]+x (slower|faster)|same)'
	bad=$(jq -r --arg f "$factor" "$sel | .metrics | to_entries[] | select(.value.probe_effect_text
		| test(\"^(not significant: measured )?\" + \$f + \" \\\\(95% interval \" + \$f + \" to \" + \$f + \", 2 rounds\\\\)$\")
		  or test(\"^significance unknown: measured ([-+][0-9.e+]+ [a-z]+ \\\\((un)?profiled: 0\\\\)|same)$\") | not) | .key" "$result")
	[ -z "$bad" ] || fail "$suite: probe effect not said as slower/faster: $bad"
	bad=$(jq -r "$sel | .metrics | to_entries[] | select((.value.probe_effect_text
		| test(\"^(not significant|significance unknown)\")) == .value.probe_effect_significant)
		| .key" "$result")
	[ -z "$bad" ] || fail "$suite: probe effect's words and significance disagree: $bad"
	for trace in $(jq -r "$sel | .round_details[] | select(.profiled) | .trace" "$result"); do
		[ -d "$trace" ] || fail "no trace directory $trace"
		json=$("$KANALYZE" --format=json "$trace") || fail "kanalyze cannot read $trace"
		count=$(jq .total.count <<<"$json")
		[ "$count" -gt 0 ] || fail "$trace: no syscalls"
		echo "ok: $suite: kanalyze reads $(basename "$trace"): $count syscalls"
	done
	top=$(jq "[$sel | .round_details[] | select(.profiled) | .profile.top_syscalls_by_time | length] | min" "$result")
	[ "$top" -ge 1 ] || fail "$suite: no profile summary in the result"
	bad=$(jq -r "$sel | .metrics | to_entries[]
		| select(((.value.probe_effect | type) != \"number\" or .value.probe_effect <= 0)
			and (.value.median != 0 and .value.plain_median != 0)) | .key" "$result")
	[ -z "$bad" ] || fail "$suite: no probe effect for $bad"
	echo "ok: $suite: profile summary and probe effect for every metric"
done
# The syscalls the workload makes are in its profile.
jq -e '.suites[] | select(.name == "syscall-io") | .round_details[0].profile.top_syscalls_by_time
	| map(.name) | index("fcntl") != null' "$result" >/dev/null ||
	fail "fcntl (the OFD locks) not among syscall-io's top syscalls"
echo "ok: fcntl in syscall-io's top syscalls"
