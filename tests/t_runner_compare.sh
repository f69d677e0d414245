# SPDX-License-Identifier: MIT
# krunner compare: an injected regression is marked on exactly that metric,
# in the metric's direction, when it is beyond the threshold and
# significant over all values; the gate fires with the defaults' number of
# values; an A/A comparison flags nothing; a metric too noisy to gate, or
# with too few values for significance, fails --fail-on-regression loudly; calibrated noise is used only for its host
# and settings; differing fingerprints are not comparable.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=syscall-io --rounds=1 --min-time-ms=10 --out="$PWD/results" >/dev/null ||
	fail "krunner exited $?"
a=$(echo results/*.json)
# base.json: every metric 15 values within 2% (the defaults give 30)
jq '.suites[0].metrics |= map_values(.samples = ([range(15)] | map(100 + . * 0.13)) | .median = 100.91)' \
	"$a" >base.json
# scale FILE METRIC FACTOR: a copy with one metric's values scaled
scale() {
	jq --arg m "$2" --argjson f "$3" '(.suites[0].metrics[$m].samples) |= map(. * $f)' "$1"
}
# gate BEFORE AFTER: compare --fail-on-regression into $out, err.txt, $rc
gate() {
	rc=0
	out=$("$KRUNNER" compare --no-noise --fail-on-regression "$1" "$2" 2>err.txt) || rc=$?
}
# bold_rows: the table rows compare sets in bold
bold_rows() { grep '^| ' | grep -F '**' || true; }

scale base.json pipe_mbps 0.9 >throughput_down.json
set +e
out=$("$KRUNNER" compare --no-noise --fail-on-regression base.json throughput_down.json)
rc=$?
set -e
rows=$(bold_rows <<<"$out")
expect_eq "bold rows, throughput -10%" 1 "$(grep -c . <<<"$rows")"
grep -q 'pipe_mbps.*\*\*-10.0% worse\*\* †' <<<"$rows" || fail "pipe_mbps not marked: $rows"
expect_eq "the gate fires with 15 values a side" 3 "$rc"
grep -q '^† significant\|(†: a two-sided' <<<"$out" || fail "the mark is not explained"

scale base.json syscall_latency_us 1.1 >latency_up.json
rows=$("$KRUNNER" compare --no-noise base.json latency_up.json | bold_rows)
expect_eq "bold rows, latency +10%" 1 "$(grep -c . <<<"$rows")"
grep -q 'syscall_latency_us.*\*\*+10.0% worse\*\*' <<<"$rows" || fail "latency not marked: $rows"

scale base.json pipe_mbps 1.1 >tmp.json
scale tmp.json syscall_latency_us 0.9 >both_better.json
out=$("$KRUNNER" compare --no-noise --fail-on-regression base.json both_better.json) ||
	fail "improvements failed --fail-on-regression"
expect_eq "bold rows, improvements" "" "$(bold_rows <<<"$out")"
grep -q 'pipe_mbps.*| +10.0% better † |' <<<"$out" || fail "throughput up not an improvement"
grep -q 'syscall_latency_us.*| -10.0% better † |' <<<"$out" || fail "latency down not an improvement"
echo "ok: direction respected"

# A/A: the same values, and a reordering of them: nothing flagged
jq '.suites[0].metrics |= map_values(.samples |= reverse)' base.json >reordered.json
out=$("$KRUNNER" compare --no-noise --fail-on-regression base.json reordered.json) ||
	fail "A/A failed --fail-on-regression"
expect_eq "A/A: regressions" "0 regressions." "$(grep 'regression' <<<"$out" | tail -1)"
grep -q '†' <<<"$(grep '^| syscall-io' <<<"$out")" && fail "A/A: a change called significant"
echo "ok: A/A flags nothing"

# 2% within a 5% threshold: significant, but no regression
scale base.json pipe_mbps 0.98 >small.json
out=$("$KRUNNER" compare --no-noise --fail-on-regression base.json small.json) ||
	fail "a change within the threshold failed"
grep -q 'pipe_mbps.*| -2.0% † |' <<<"$out" || fail "small change row: $(grep pipe_mbps <<<"$out")"
echo "ok: a significant change within the threshold is not a regression"

# no_verdict BEFORE AFTER MARK MESSAGE: the gate fails loudly (exit 3),
# pipe_mbps's row says MARK and stderr MESSAGE
no_verdict() {
	gate "$1" "$2"
	expect_eq "$3: exit" 3 "$rc"
	grep -q "pipe_mbps.*$3" <<<"$out" || fail "pipe_mbps not marked $3: $(grep pipe_mbps <<<"$out")"
	grep -q "$4" err.txt || fail "no loud failure: $(cat err.txt)"
	echo "ok: $3: --fail-on-regression fails loudly"
}
# Too noisy to gate: values spread over +-50% on both sides
jq '(.suites[0].metrics.pipe_mbps.samples) = ([range(15)] | map(50 + . * 7))' base.json >noisy.json
scale noisy.json pipe_mbps 0.9 >noisy_down.json
no_verdict noisy.json noisy_down.json "too noisy" "too noisy (threshold above 20%)"
"$KRUNNER" compare --no-noise noisy.json noisy_down.json >/dev/null ||
	fail "too noisy without --fail-on-regression is not a failure"
# Too few values: 3 against 3, tight, 50% worse: no p can reach 0.05, so
# the metric cannot be gated, and the gate says so instead of passing
jq '(.suites[0].metrics.pipe_mbps.samples) = [100, 100.1, 100.2]' base.json >three.json
scale three.json pipe_mbps 0.5 >three_down.json
no_verdict three.json three_down.json "too few values" "too few values to gate"

# Calibrated noise of this host and these settings raises the threshold
host=$(jq -r .host.hostname base.json)
settings=$(jq -c '.suites[0].settings' base.json)
jq -n --arg h "$host" --argjson s "$settings" '{format: "krunner-noise", format_version: 1,
	host: $h, metrics: {"syscall-io/pipe_mbps": {noise: 0.15, settings: $s}}}' >noise.json
out=$("$KRUNNER" compare --noise=noise.json --fail-on-regression base.json throughput_down.json) ||
	fail "a change within calibrated noise failed"
expect_eq "bold rows within noise" "" "$(bold_rows <<<"$out")"
grep -q 'pipe_mbps.*| 15.0% (calibrated) |' <<<"$out" || fail "calibrated threshold not shown"
echo "ok: calibrated noise used"
# ... but not for other settings, nor another host
jq '.metrics[].settings.rounds = 99' noise.json >other_settings.json
rows=$("$KRUNNER" compare --noise=other_settings.json base.json throughput_down.json | bold_rows)
expect_eq "noise of other settings ignored: bold rows" 1 "$(grep -c . <<<"$rows")"
jq '.host = "elsewhere"' noise.json >other_host.json
out=$("$KRUNNER" compare --noise=other_host.json base.json throughput_down.json)
grep -q 'ignored: measured on elsewhere' <<<"$out" || fail "other host's noise not refused"
expect_eq "noise of another host ignored: bold rows" 1 "$(bold_rows <<<"$out" | grep -c .)"
echo "ok: noise only for its host and settings"
# without --noise and --out, the noise file beside the results compared
mkdir beside && cp base.json throughput_down.json beside/ && cp noise.json beside/
out=$("$KRUNNER" compare beside/base.json beside/throughput_down.json)
grep -q 'Calibrated noise from beside/noise.json' <<<"$out" ||
	fail "noise beside the results not used: $(grep -i noise <<<"$out" | tail -2)"
echo "ok: the noise file beside the results"

# Different program fingerprints: flagged, never a failing regression.
jq '.suites[0].artifacts[0].sha256 = ("0" * 64)' throughput_down.json >other_program.json
out=$("$KRUNNER" compare --no-noise --fail-on-regression base.json other_program.json) ||
	fail "a not comparable result failed --fail-on-regression"
grep -q 'Not comparable.*syscall_io' <<<"$out" || fail "differing fingerprint not flagged"
grep -q 'pipe_mbps.*(not comparable)' <<<"$out" || fail "rows not flagged"
echo "ok: not comparable flagged"
