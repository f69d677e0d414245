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
grep -q 'from 2 producers (' mixed.err || fail "producers not named: $(cat mixed.err)"
grep -q 'preload: 1 streams' mixed.err || fail "preload streams not counted: $(cat mixed.err)"
grep -q '^coverage of the bpf streams ([0-9]*): every syscall' mixed.txt ||
	fail "no coverage line of kbpf-trace: $(head -3 mixed.txt)"
grep -q '^coverage of the preload streams (1): ' mixed.txt ||
	fail "no coverage line of the shim: $(head -3 mixed.txt)"
# each on its own: no warning
"$KANALYZE" bpf > /dev/null 2> bpf.err
expect_eq "kbpf-trace's run alone: stderr" "" "$(cat bpf.err)"
