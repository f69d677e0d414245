# SPDX-License-Identifier: MIT
# krunner run -- CMD ARGS: any command timed run by run (hyperfine's job):
# warm-ups discarded, every run a value, the executable fingerprinted, a
# failing command a failed suite, --profile tracing exactly the runs made,
# and compare working on the result.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner
prog=$BUILD/tests/getppid_loop

"$KRUNNER" run --rounds=2 --runs=4 --warmups=1 --out="$PWD/a" -- "$prog" 1000 > summary.txt ||
	fail "krunner run exited $?"
cat summary.txt
result=$(echo a/*.json)
sel='.suites[] | select(.name == "command")'
expect_eq "status" ok "$(jq -r "$sel | .status" "$result")"
expect_eq "wall_ms values (2 rounds x 4 runs)" 8 "$(jq "$sel | .metrics.wall_ms.n" "$result")"
expect_eq "fingerprint" "$(sha256sum "$prog" | cut -d' ' -f1)" "$(jq -r "$sel | .artifacts[0].sha256" "$result")"
jq -e "$sel | .metrics.wall_ms | .median > 0 and .ci[0] <= .median and .median <= .ci[1]" "$result" > /dev/null ||
	fail "wall_ms figures: $(jq -c "$sel | .metrics.wall_ms" "$result")"
grep -q '^  wall_ms .* 8 values; .* ± .*; .* … ' summary.txt || fail "no hyperfine-like summary line"

# compare of two runs of the same command: a table, no regression
"$KRUNNER" run --rounds=1 --runs=4 --out="$PWD/b" -- "$prog" 1000 > /dev/null
out=$("$KRUNNER" compare --no-noise "$result" b/*.json) || fail "compare failed"
grep -q '^| command / wall_ms' <<<"$out" || fail "no wall_ms row: $out"
echo "ok: compare reads command results"

# profiled: each round's trace holds its warm-up and its runs, exactly
"$KRUNNER" run --rounds=1 --runs=3 --warmups=1 --profile=preload --out="$PWD/p" -- "$prog" 1000 > /dev/null ||
	fail "krunner run --profile exited $?"
presult=$(echo p/*.json)
trace=$(jq -r "$sel | .round_details[] | select(.profiled) | .trace" "$presult")
expect_eq "getppid in the profiled round's trace (4 runs x 1000)" 4000 \
	"$("$KANALYZE" --format=json "$trace" | jq '.syscalls[] | select(.name == "getppid") | .count')"
jq -e "$sel | .metrics.wall_ms.probe_effect_text | test(\"slower|faster|same\")" "$presult" > /dev/null ||
	fail "no probe effect"
echo "ok: profiled runs traced exactly"

# a failing command fails the suite: exit 2, no metric
rc=0
"$KRUNNER" run --rounds=1 --runs=2 --out="$PWD/f" -- /bin/false > /dev/null 2> err.txt || rc=$?
expect_eq "failing command: exit" 2 "$rc"
grep -q 'command: /bin/false failed (exit status 1)' err.txt || fail "no reason: $(cat err.txt)"
expect_eq "failing command: metrics" 0 "$(jq "$sel | .metrics | length" f/*.json)"
# usage errors
rc=0
"$KRUNNER" run --suite=syscall-io --out="$PWD/u" -- "$prog" 2> err.txt || rc=$?
expect_eq "suites and a command: exit" 1 "$rc"
grep -q 'not both' err.txt || fail "$(cat err.txt)"
rc=0
"$KRUNNER" --suite=command --out="$PWD/u" 2> err.txt || rc=$?
expect_eq "the command suite without a command: exit" 1 "$rc"
[ ! -e u ] || fail "a result was written for a usage error"
