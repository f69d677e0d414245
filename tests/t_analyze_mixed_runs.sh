# SPDX-License-Identifier: MIT
# One directory reused for two runs, or traces of two producers given
# together, are merged into one profile, but never without a word:
# kanalyze names the runs and producers on stderr, and the profile gives
# each producer its own coverage line (the shim's "complete after
# start-up" once stood over kbpf-trace's numbers too). One run: silence.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/getppid_loop
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/one "$prog" 100 > /dev/null
"$KANALYZE" one > one.txt 2> one.err
expect_eq "one run: stderr" "" "$(cat one.err)"
grep -q '^getppid (110) *100 ' one.txt || fail "one run: $(cat one.txt)"
# the same directory again
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/one "$prog" 200 > /dev/null
"$KANALYZE" one > two.txt 2> two.err
cat two.err
grep -q '^kanalyze: warning: the inputs hold 2 runs (getppid_loop pid [0-9]* by preload, getppid_loop pid [0-9]* by preload), merged into one profile' two.err ||
	fail "two runs not named: $(cat two.err)"
grep -q '^getppid (110) *300 ' two.txt || fail "two runs: the merged profile: $(cat two.txt)"
# the shim and kbpf-trace, given together
"$KBPF" -o "$PWD/bpf" -- env LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/shim" "$prog" 50 > /dev/null
"$KANALYZE" shim bpf > mixed.txt 2> mixed.err
cat mixed.err
grep -q '^kanalyze: warning: the inputs hold one run traced by 2 producers (bpf: [0-9]* streams, preload: 1 stream), merged' mixed.err ||
	fail "producers not named: $(cat mixed.err)"
jq -e '[.producers[] | .producer] == ["bpf", "preload"] and
	(.producers[0].coverage | test("every syscall")) and .producers[1].streams == 1' \
	<("$KANALYZE" --format=json shim bpf 2>/dev/null) > /dev/null ||
	fail "JSON producers: $("$KANALYZE" --format=json shim bpf 2>/dev/null | jq -c .producers)"
grep -q '^coverage of the bpf streams ([0-9]*): every syscall' mixed.txt ||
	fail "no coverage line of kbpf-trace: $(head -3 mixed.txt)"
grep -q '^coverage of the preload streams (1): ' mixed.txt ||
	fail "no coverage line of the shim: $(head -3 mixed.txt)"
# the shim in both hook modes: the JSON's coverage says mixed
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/modes "$prog" 10 > /dev/null
KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/modes "$prog" 10 > /dev/null
json=$("$KANALYZE" --format=json modes 2>/dev/null)
if [ "$(jq -r .hook_mode <<<"$json")" = mixed ]; then
	jq -e '.coverage | test("^mixed")' <<<"$json" > /dev/null || fail "mixed modes: coverage $(jq .coverage <<<"$json")"
	echo "ok: mixed hook modes: $(jq .coverage <<<"$json")"
fi
# each on its own: no warning
"$KANALYZE" bpf > /dev/null 2> bpf.err
expect_eq "kbpf-trace's run alone: stderr" "" "$(cat bpf.err)"
