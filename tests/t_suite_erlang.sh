# SPDX-License-Identifier: MIT
# serial: a benchmark: rounds timed against each other
# krunner --suite=erlang-ring: erlc compiles programs/erlang/ring.erl, erl
# runs the ring once; both metrics are there, positive and finite. Without
# erl in PATH the run stops before anything is timed and names the package.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner

rc=0
PATH=/nonexistent "$KRUNNER" --suite=erlang-ring --rounds=1 --out="$PWD/results" 2>stderr.txt || rc=$?
expect_eq "exit without erl" 1 "$rc"
grep -q "apt-get install erlang-base" stderr.txt || fail "no install hint: $(cat stderr.txt)"
grep -q "nothing was run" stderr.txt || fail "does not say nothing ran"
echo "ok: missing erl names erlang-base"

"$KRUNNER" --suite=erlang-ring --rounds=1 --out="$PWD/results" >stdout.txt || fail "krunner exited $?"
result=$(echo results/*.json)
for metric in total_ms messages_per_sec; do
	v=$(jq ".suites[0].metrics.$metric.median" "$result")
	jq -e ".suites[0].metrics.$metric.median | type == \"number\" and . > 0" "$result" >/dev/null ||
		fail "$metric = $v"
	echo "ok: $metric = $v"
done
# 100,000 messages: the rate and the time agree.
jq -e '.suites[0].metrics | (100000 / (.total_ms.median / 1000)) / .messages_per_sec.median
	| . > 0.99 and . < 1.01' "$result" >/dev/null || fail "messages_per_sec does not match 100000 messages in total_ms"
echo "ok: messages_per_sec = 100000 / total_ms"
expect_eq "OTP release noted" true "$(jq '.suites[0].notes.otp_release != null' "$result")"
root=$(erl -noshell -eval 'io:format("~s", [code:root_dir()]), halt().')
release=$(jq -r '.suites[0].notes.otp_release' "$result")
expect_eq "OTP patch level noted" "$(cat "$root/releases/$release/OTP_VERSION")" \
	"$(jq -r '.suites[0].notes.otp_version' "$result")"
erts=$(jq -r '.suites[0].notes.erts_version' "$result")
expect_eq "beam.smp fingerprinted" "$(sha256sum "$root/erts-$erts/bin/beam.smp" | cut -d' ' -f1)" \
	"$(jq -r '.suites[0].artifacts[] | select(.name == "beam.smp") | .sha256' "$result")"
# an application suite's warm-up round: run, shown, not kept
expect_eq "rounds run (a warm-up, then 1)" 2 "$(jq '.suites[0].round_details | length' "$result")"
expect_eq "the warm-up round" true "$(jq '.suites[0].round_details[0].warmup' "$result")"
expect_eq "values kept" 1 "$(jq '.suites[0].metrics.total_ms.n' "$result")"
"$KRUNNER" --suite=erlang-ring --rounds=1 --warmup-rounds=0 --out="$PWD/none" >/dev/null || fail "krunner exited $?"
expect_eq "--warmup-rounds=0: rounds run" 1 "$(jq '.suites[0].round_details | length' none/*.json)"
