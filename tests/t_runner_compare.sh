# SPDX-License-Identifier: MIT
# serial: benchmark runs compared
# krunner compare on synthetic results whose verdict is known: the round
# (one median per process) is the unit; a clear regression exits 3 with
# --fail-on-regression, two sides drawn alike exit 0, three rounds of wild
# noise exit 4 (no verdict), and a regression wins over no verdict; the
# direction of each metric is respected; a rebuilt program is compared
# and named, never dropped; differing host, settings and tool versions
# are warned of; a side that ran busy is named with its rounds; calibrated
# between-run noise is used only for its host and settings; the two sides
# of one krunner ab get no between-run term; calibrate measures a
# metric's between-run noise from its third run on.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=syscall-io --rounds=1 --min-time-ms=10 --out="$PWD/results" >/dev/null ||
	fail "krunner exited $?"
real=$(echo results/*.json)

# side ROUNDS SPREAD SEED [METRIC FACTOR [ROUND_LEVELS]]: the real result
# with its rounds replaced by ROUNDS generated ones of 3 values each: every
# metric at 100 times a deterministic scatter of +-SPREAD (a fraction) that
# differs with SEED, times round r's level (ROUND_LEVELS[r], a JSON array,
# default all 1); METRIC's values times FACTOR.
side() {
	jq --argjson n "$1" --argjson spread "$2" --argjson seed "$3" \
		--arg metric "${4:-}" --argjson factor "${5:-1}" --argjson levels "${6:-[1]}" '
	  def scatter($r; $i; $k): (($r * 7.31 + $i * 1.77 + $k * 0.53 + $seed * 3.1) | sin);
	  (.suites[0].metrics | keys) as $names
	  | .suites[0].round_details = [range($n) as $r | {
	      round: ($r + 1), ok: true, profiled: false,
	      state_start: {load_average: [0.1, 0.1, 0.1], running: 0},
	      state_end: {load_average: [0.1, 0.1, 0.1], running: 0},
	      values: ([$names | to_entries[] | .key as $k | .value as $m
	                | {key: $m, value: [range(3) as $i
	                   | 100 * $levels[$r % ($levels | length)]
	                     * (1 + $spread * scatter($r; $i; $k))
	                     * (if $m == $metric then $factor else 1 end)]}]
	               | from_entries)}]
	  | .suites[0].metrics |= with_entries(.value.samples =
	      [range($n * 3)] | .value.n = ($n * 3))' "$real"
}
# gate BEFORE AFTER [OPTIONS]: compare --fail-on-regression into $out, err.txt, $rc
gate() {
	rc=0
	out=$("$KRUNNER" compare --no-noise --fail-on-regression "$@" 2>err.txt) || rc=$?
}
# row METRIC: the table row of METRIC in $out
row() { grep "^| syscall-io / $1 " <<<"$out" || true; }
summary() { grep -E '^[0-9]+ regressions?, [0-9]+ without a verdict\.$' <<<"$out"; }

side 10 0.01 1 >base.json
side 10 0.01 2 >same.json
side 10 0.01 2 pipe_mbps 0.8 >throughput_down.json
side 10 0.01 2 syscall_latency_us 1.2 >latency_up.json
side 10 0.01 2 syscall_latency_us 0.8 >latency_down.json
# wild noise: rounds at 60%, 100% and 140% on both sides, in another order
side 3 0.01 1 "" 1 '[0.6, 1.0, 1.4]' >wild_a.json
side 3 0.01 2 "" 1 '[1.4, 0.6, 1.0]' >wild_b.json
metrics=$(jq '.suites[0].metrics | length' base.json)

# Two sides drawn alike: no regression anywhere, exit 0
gate base.json same.json
expect_eq "alike: exit" 0 "$rc"
expect_eq "alike: summary" "0 regressions, 0 without a verdict." "$(summary)"
expect_eq "alike: rows saying no regression" "$metrics" "$(grep -c '| no regression |$' <<<"$out")"
grep -q 'pipe_mbps.*\] 10 rounds, 30 values | .*\] 10 rounds, 30 values |' <<<"$(row pipe_mbps)" ||
	fail "rounds and values not shown: $(row pipe_mbps)"
echo "ok: two sides drawn alike: no regression, exit 0"

# A clear regression: throughput -20%, on that metric only, exit 3
gate base.json throughput_down.json
expect_eq "throughput -20%: exit" 3 "$rc"
expect_eq "throughput -20%: summary" "1 regression, 0 without a verdict." "$(summary)"
grep -Eq '\| \*\*-(19|20)\.[0-9]% \[-2[0-9]\.[0-9]%, -1[0-9]\.[0-9]%\]\*\* \| .* \| \*\*regression\*\* \|$' \
	<<<"$(row pipe_mbps)" || fail "pipe_mbps not a regression: $(row pipe_mbps)"
gate base.json latency_up.json
expect_eq "latency +20%: exit" 3 "$rc"
grep -q '\*\*regression\*\*' <<<"$(row syscall_latency_us)" ||
	fail "latency up not a regression: $(row syscall_latency_us)"
# the other way is better, not worse
gate base.json latency_down.json
expect_eq "latency -20%: exit" 0 "$rc"
grep -q '| no regression |$' <<<"$(row syscall_latency_us)" ||
	fail "latency down judged: $(row syscall_latency_us)"
gate latency_down.json base.json
expect_eq "latency +25% (swapped): exit" 3 "$rc"
echo "ok: a clear regression exits 3, in the metric's direction"

# without --fail-on-regression a regression is shown, the exit is 0
"$KRUNNER" compare --no-noise base.json throughput_down.json >plain.txt ||
	fail "compare without --fail-on-regression exited $?"
grep -q '^1 regression, ' plain.txt || fail "regression not told: $(tail -1 plain.txt)"
echo "ok: without --fail-on-regression the exit is 0"

# Three rounds of wild noise (+-40% between rounds): no verdict on every
# metric, exit 4
gate wild_a.json wild_b.json
expect_eq "wild noise: exit" 4 "$rc"
expect_eq "wild noise: summary" "0 regressions, $metrics without a verdict." "$(summary)"
grep -q 'without a verdict' err.txt || fail "no message for no verdict: $(cat err.txt)"
# the smallest change the data could detect is told, and is large
detectable=$(row pipe_mbps | awk -F' \\| ' '{print $6}')
awk -v d="${detectable%%%*}" 'BEGIN { exit !(d > 20) }' ||
	fail "detectable change of wild noise not large: $detectable"
echo "ok: three rounds of wild noise: no verdict, exit 4 (detectable $detectable)"

# A regression on one metric and no verdict on others: the regression wins
jq --slurpfile t throughput_down.json \
	'.suites[0].round_details |= [range(3) as $r | .[$r] | .values.pipe_mbps = $t[0].suites[0].round_details[$r].values.pipe_mbps]' \
	wild_b.json >mixed_after.json
jq --slurpfile t base.json \
	'.suites[0].round_details |= [range(3) as $r | .[$r] | .values.pipe_mbps = $t[0].suites[0].round_details[$r].values.pipe_mbps]' \
	wild_a.json >mixed_before.json
gate mixed_before.json mixed_after.json
expect_eq "regression and no verdict: exit" 3 "$rc"
grep -q '\*\*regression\*\*' <<<"$(row pipe_mbps)" || fail "mixed: $(row pipe_mbps)"
echo "ok: a regression wins over no verdict"

# A rebuilt program: the verdict is still given, the change named
jq '.suites[0].artifacts[0].sha256 = ("0" * 64)' throughput_down.json >rebuilt_down.json
jq '.suites[0].artifacts[0].sha256 = ("0" * 64)' same.json >rebuilt_same.json
gate base.json rebuilt_down.json
expect_eq "rebuilt, slower: exit" 3 "$rc"
grep -q '^> Changed: syscall-io: program .* differs' <<<"$out" ||
	fail "rebuilt program not named: $(grep '^>' <<<"$out")"
gate base.json rebuilt_same.json
expect_eq "rebuilt, same speed: exit" 0 "$rc"
expect_eq "rebuilt, same speed: summary" "0 regressions, 0 without a verdict." "$(summary)"
echo "ok: a rebuilt program is compared"

# Host, suite settings and tool versions that differ are warned of
jq '.host.kernel = "0.0.1-other" | .tool_versions.krunner = "0.0"
    | .suites[0].settings.options.samples = "4"' same.json >elsewhere.json
gate base.json elsewhere.json
expect_eq "elsewhere: exit" 0 "$rc"
for what in 'host kernel differ' 'tool versions differ' 'syscall-io: suite settings differ'; do
	grep -q "^> \*\*Warning:\*\* $what" <<<"$out" || fail "no warning: $what"
done
echo "ok: host, settings and tool versions that differ are warned of"

# A side that ran busy: which side, which rounds
jq '.suites[0].round_details[1].state_start.load_average[0] = 5.5
    | .suites[0].round_details[2].state_end.running = 9' same.json >busy.json
gate base.json busy.json
grep -q '^> After ran busy: syscall-io: 2 of 10 rounds (round 2, 3; first: the machine was busy: load average 5.50' \
	<<<"$out" || fail "busy side not reported: $(grep '^>' <<<"$out")"
grep -q '^> Before ran busy' <<<"$out" && fail "the quiet side reported busy"
echo "ok: the busy side and its rounds are named"

# Calibrated between-run noise: used for its host and settings only
host=$(jq -r .host.hostname base.json)
settings=$(jq -c '.suites[0].settings' base.json)
jq -n --arg h "$host" --argjson s "$settings" '{format: "krunner-noise", format_version: 1,
	host: $h, metrics: {"syscall-io/pipe_mbps": {noise: 0.01, between_run_sd: 0.2,
	settings: $s}}}' >noise.json
rc=0
out=$("$KRUNNER" compare --noise=noise.json --fail-on-regression base.json throughput_down.json) ||
	rc=$?
expect_eq "calibrated 20% between runs: exit" 4 "$rc"
grep -q '| no verdict |$' <<<"$(row pipe_mbps)" || fail "calibrated: $(row pipe_mbps)"
grep -q '(calibrated)' <<<"$(row pipe_mbps)" || fail "calibrated source not shown: $(row pipe_mbps)"
jq '.metrics[].settings.rounds = 99' noise.json >other_settings.json
out=$("$KRUNNER" compare --noise=other_settings.json base.json throughput_down.json)
grep -q '\*\*regression\*\*' <<<"$(row pipe_mbps)" || fail "other settings' noise used"
jq '.host = "elsewhere"' noise.json >other_host.json
out=$("$KRUNNER" compare --noise=other_host.json base.json throughput_down.json)
grep -q 'ignored: measured on elsewhere' <<<"$out" || fail "other host's noise not refused"
mkdir beside && cp base.json throughput_down.json noise.json beside/
out=$("$KRUNNER" compare beside/base.json beside/throughput_down.json)
grep -q 'Between-run noise calibrated in beside/noise.json for 1 metric' <<<"$out" ||
	fail "noise beside the results not used: $(grep -i noise <<<"$out" | tail -2)"
echo "ok: calibrated between-run noise only for its host and settings"

# --run-noise: the between-run term as a multiple of the rounds' spread
gate base.json same.json --run-noise=0
grep -q '(--run-noise)' <<<"$(row pipe_mbps)" || fail "--run-noise not shown: $(row pipe_mbps)"
# the two sides of one krunner ab: no between-run term
jq '.command = ["krunner", "ab"] | .end_time = "T"' base.json >ab_a.json
jq '.command = ["krunner", "ab"] | .end_time = "T"' same.json >ab_b.json
gate ab_a.json ab_b.json
grep -q '(interleaved)' <<<"$(row pipe_mbps)" || fail "ab sides not interleaved: $(row pipe_mbps)"
echo "ok: --run-noise and interleaved sides"

# krunner calibrate keeps each run's level; from the third run on, the
# metric's between-run noise, which compare then uses for separate runs
for run in 1 2 3; do
	"$KRUNNER" calibrate --suite=syscall-io --rounds=3 --min-time-ms=10 \
		--noise="$PWD/calibrated.json" >/dev/null 2>&1 ||
		fail "calibrate run $run exited $?"
	expect_eq "calibrate run $run: levels kept" "$run" \
		"$(jq '.metrics["syscall-io/pipe_mbps"].runs | length' calibrated.json)"
	expect_eq "calibrate run $run: between-run noise given" "$([ "$run" = 3 ] && echo true || echo false)" \
		"$(jq '.metrics["syscall-io/pipe_mbps"] | has("between_run_sd")' calibrated.json)"
done
jq -e '[.metrics[] | select(has("between_run_sd")) | .between_run_sd >= 0] | all and length > 0' \
	calibrated.json >/dev/null || fail "between_run_sd not a figure >= 0"
# two separate runs with the calibrated settings
for run in 1 2; do
	"$KRUNNER" --suite=syscall-io --rounds=3 --min-time-ms=10 --out="$PWD/separate$run" \
		>/dev/null 2>&1 || fail "run $run exited $?"
done
out=$("$KRUNNER" compare --noise=calibrated.json separate1/*.json separate2/*.json)
grep -q '(calibrated)' <<<"$(row pipe_mbps)" || fail "calibrated between-run noise unused: $(row pipe_mbps)"
echo "ok: calibrate measures between-run noise from its third run, compare uses it"

# the header gives each side's rounds from its suites when --rounds was
# not given (each suite's own default: options.rounds is null)
jq '.options.rounds = null' "$real" > default-rounds.json
"$KRUNNER" compare default-rounds.json default-rounds.json > header.txt 2>&1 || true
grep -q '^- Before: .*, 1 round)' header.txt || fail "compare's header: $(grep -- '- Before' header.txt)"
echo "ok: the header's rounds come from the suites"
