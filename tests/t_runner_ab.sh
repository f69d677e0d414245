# SPDX-License-Identifier: MIT
# serial: A/B benchmark runs compared
# krunner ab: A and B in one run, rounds interleaved ABBA after one shared
# setup, two result files (-A, -B) and their comparison. A known slowdown
# (B preloads libkprof.so through its launcher) is flagged on the fork and
# exec metrics with the default threshold and test, and
# --fail-on-regression exits 3; a failure on one side fails both; option
# errors are usage errors.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

# the order of the rounds, as the launchers see them
cat >side.sh <<'EOF'
#!/bin/sh
echo "$SIDE" >>"$ORDER_LOG"
exec "$@"
EOF
chmod +x side.sh
export ORDER_LOG=$PWD/order.log
"$KRUNNER" ab --suite=erlang-ring --rounds=4 --laps=2 --processes=10 --out="$PWD/order" \
	--launcher="env SIDE=A $PWD/side.sh" --b-launcher="env SIDE=B $PWD/side.sh" \
	>order.txt 2>order.err || fail "krunner ab exited $?: $(cat order.err)"
# erlang-ring has a warm-up round: A then B; then ABBA
expect_eq "round order" "A B A B B A A B B A" "$(tr '\n' ' ' <order.log | sed 's/ $//')"
a=$(echo order/*-erlang-ring-A.json) b=$(echo order/*-erlang-ring-B.json)
[ -f "$a" ] && [ -f "$b" ] || fail "no -A and -B result files: $(ls order)"
expect_eq "one stamp for both sides" "${a%-A.json}" "${b%-B.json}"
expect_eq "A's values" 4 "$(jq '.suites[0].metrics.total_ms.n' "$a")"
expect_eq "B's values" 4 "$(jq '.suites[0].metrics.total_ms.n' "$b")"
expect_eq "B's launcher in its result" "env SIDE=B $PWD/side.sh" "$(jq -r '.options.launcher' "$b")"
expect_eq "setup shared: the same notes" "$(jq -c '.suites[0].notes' "$a")" "$(jq -c '.suites[0].notes' "$b")"
expect_eq "setup shared: the same inputs" \
	"$(jq -c '[.suites[0].artifacts[] | select(.kind == "input") | .sha256]' "$a")" \
	"$(jq -c '[.suites[0].artifacts[] | select(.kind == "input") | .sha256]' "$b")"
grep -q '^| erlang-ring / total_ms' order.txt || fail "no comparison printed: $(cat order.txt)"
echo "ok: ABBA order, two results, the comparison"

# A known slowdown: B preloads the shim. fork and exec are flagged with
# the defaults' test and threshold, and the gate fires.
rc=0
"$KRUNNER" ab --suite=process-lifecycle --rounds=4 --min-time-ms=10 --out="$PWD/slow" \
	--b-launcher="env LD_PRELOAD=$SHIM KPROF_OUT=$PWD/traces" --fail-on-regression \
	>slow.txt 2>slow.err || rc=$?
expect_eq "slowdown: exit" 3 "$rc"
for metric in fork_ms exec_ms hello_start_ms; do
	grep -q "^| process-lifecycle / $metric .*(interleaved) | \*\*regression\*\* |$" slow.txt ||
		fail "$metric not flagged: $(grep "$metric" slow.txt)"
done
echo "ok: a known slowdown is flagged and fails the gate"

# one side failing fails both: B's launcher does not exist as a program
rc=0
"$KRUNNER" ab --suite=process-lifecycle --rounds=2 --min-time-ms=10 --out="$PWD/fail" \
	--b-launcher="$PWD/side.sh false" >fail.txt 2>fail.err || rc=$?
expect_eq "one side failing: exit" 5 "$rc"
expect_eq "A marked failed too" true "$(jq '.suites[0].error != null' fail/*-A.json)"
grep -q 'the other side failed' fail.err || fail "no word of the other side: $(cat fail.err)"
echo "ok: a failure on one side fails both"

# usage errors
rc=0
"$KRUNNER" --suite=syscall-io --b-launcher=env --out="$PWD/u1" >/dev/null 2>u1.err || rc=$?
expect_eq "--b-launcher without ab: exit" 2 "$rc"
grep -q -- '--b-launcher is for krunner ab' u1.err || fail "message: $(cat u1.err)"
rc=0
"$KRUNNER" ab --suite=syscall-io --profile=preload --out="$PWD/u2" >/dev/null 2>u2.err || rc=$?
expect_eq "ab --profile: exit" 2 "$rc"
[ ! -e u1 ] && [ ! -e u2 ] || fail "a usage error wrote results"
echo "ok: usage errors"
