# krunner compare: an injected 20% regression is marked on exactly that
# metric, in the metric's direction; significance, --fail-on-regression,
# calibrated noise and artifact fingerprints.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=syscall-io --rounds=2 --out="$PWD/results" >/dev/null || fail "krunner exited $?"
a=$(echo results/*.json)

# scale FILE METRIC FACTOR: a copy with one metric's samples and median scaled
scale() {
	jq --arg m "$2" --argjson f "$3" '(.suites[0].metrics[$m].samples) |= map(. * $f)
		| (.suites[0].metrics[$m].median) *= $f' "$1"
}
# bold_rows FILE...: the table rows compare sets in bold
bold_rows() { grep '^| ' | grep -F '**' || true; }

scale "$a" pipe_mbps 0.8 >throughput_down.json
rows=$("$KRUNNER" compare --no-noise "$a" throughput_down.json | bold_rows)
expect_eq "bold rows, throughput -20%" 1 "$(grep -c . <<<"$rows")"
grep -q 'pipe_mbps.*\*\*-20.0% worse\*\*' <<<"$rows" || fail "pipe_mbps not marked: $rows"

scale "$a" syscall_latency_us 1.2 >latency_up.json
rows=$("$KRUNNER" compare --no-noise "$a" latency_up.json | bold_rows)
expect_eq "bold rows, latency +20%" 1 "$(grep -c . <<<"$rows")"
grep -q 'syscall_latency_us.*\*\*+20.0% worse\*\*' <<<"$rows" || fail "latency not marked: $rows"

scale "$a" pipe_mbps 1.2 >tmp.json
scale tmp.json syscall_latency_us 0.8 >both_better.json
out=$("$KRUNNER" compare --no-noise "$a" both_better.json)
expect_eq "bold rows, improvements" "" "$(bold_rows <<<"$out")"
grep -q 'pipe_mbps.*| +20.0% better |' <<<"$out" || fail "throughput up not an improvement"
grep -q 'syscall_latency_us.*| -20.0% better |' <<<"$out" || fail "latency down not an improvement"
echo "ok: direction respected"

# Two rounds a side can never be significant: --fail-on-regression passes.
"$KRUNNER" compare --no-noise --fail-on-regression "$a" throughput_down.json >/dev/null ||
	fail "2 rounds a side called significant"
echo "ok: not significant with 2 rounds"

# Five well-separated rounds a side: significant (exact p = 2/252), exit 3.
jq '(.suites[0].metrics.pipe_mbps.samples) = [100, 101, 102, 103, 104]
	| (.suites[0].metrics.pipe_mbps.median) = 102' "$a" >five.json
jq '(.suites[0].metrics.pipe_mbps.samples) = [80, 80.8, 81.6, 82.4, 83.2]
	| (.suites[0].metrics.pipe_mbps.median) = 81.6' "$a" >five_down.json
set +e
out=$("$KRUNNER" compare --no-noise --fail-on-regression five.json five_down.json)
rc=$?
set -e
expect_eq "exit on significant regression" 3 "$rc"
grep -q 'pipe_mbps.*\*\*-20.0% worse\*\* †' <<<"$out" || fail "no significance mark: $(bold_rows <<<"$out")"
grep -q '^† significant' <<<"$out" || fail "the mark is not explained"
"$KRUNNER" compare --no-noise --fail-on-regression five_down.json five.json >/dev/null ||
	fail "an improvement failed --fail-on-regression"
echo "ok: significant regression fails, improvement does not"

# Calibrated noise above 20% raises that metric's threshold.
jq -n '{format: "krunner-noise", format_version: 1,
	metrics: {"syscall-io/pipe_mbps": {noise: 0.3}}}' >noise.json
out=$("$KRUNNER" compare --noise=noise.json --fail-on-regression five.json five_down.json) ||
	fail "a change within calibrated noise failed"
expect_eq "bold rows within noise" "" "$(bold_rows <<<"$out")"
echo "ok: calibrated noise used"

# Different program fingerprints: flagged, never a failing regression.
jq '.suites[0].artifacts[0].sha256 = ("0" * 64)' five_down.json >other_program.json
out=$("$KRUNNER" compare --no-noise --fail-on-regression five.json other_program.json) ||
	fail "a not comparable result failed --fail-on-regression"
grep -q 'Not comparable.*syscall_io' <<<"$out" || fail "differing fingerprint not flagged"
grep -q 'pipe_mbps.*(not comparable)' <<<"$out" || fail "rows not flagged"
echo "ok: not comparable flagged"
