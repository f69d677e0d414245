# SPDX-License-Identifier: MIT
# tier: check
# kprof, the one command: runs CMD under the shim, prints strace -c's
# table on stderr when it ends, exits with its status; the traces go to a
# temporary directory that is removed, or to -o DIR, kept. The counts are
# exact (getppid_loop makes N getppid calls); the calls that wait by
# nature are in their own block; usage errors exit 2; a CMD killed by a
# signal kills kprof with it. As root, --bpf counts the same.
. "$KPROF_ROOT/tests/lib.sh"
KPROF=$BUILD/kprof
export TMPDIR=$PWD/tmp
mkdir "$TMPDIR"

# exact counts, the table's shape, the directory removed, stdout untouched
"$KPROF" -- "$BUILD/tests/getppid_loop" 1000 > out.txt 2> err.txt || fail "kprof failed: $(cat err.txt)"
cat err.txt
expect_eq "CMD's stdout is CMD's alone" "$("$BUILD/tests/getppid_loop" 1000)" "$(cat out.txt)"
grep -q '^kprof: getppid_loop exited with status 0 after [0-9.]* s (wall clock) on [0-9]* CPUs$' err.txt ||
	fail "no header line"
grep -q '^% time     seconds  usecs/call     calls    errors   retries syscall$' err.txt ||
	fail "no strace -c header"
expect_eq "getppid calls" 1000 "$(awk '$NF == "getppid" { print $4 }' err.txt)"
expect_eq "temporary directories left" 0 "$(find "$TMPDIR" -mindepth 1 | wc -l)"

# CMD's exit status; not found 127; usage errors 2
set +e
"$KPROF" -- sh -c 'exit 7' 2> /dev/null; rc7=$?
"$KPROF" -- no-such-command-here 2> nf.txt; rc127=$?
"$KPROF" 2> usage1.txt; rc_none=$?
"$KPROF" --no-such-option -- true 2> usage2.txt; rc_opt=$?
"$KPROF" --hook=fast -- true 2> usage3.txt; rc_hook=$?
set -e
expect_eq "CMD's exit status" 7 "$rc7"
expect_eq "command not found" 127 "$rc127"
grep -q 'no-such-command-here: command not found' nf.txt || fail "not-found message: $(cat nf.txt)"
expect_eq "no command: usage error" 2 "$rc_none"
expect_eq "unknown option: usage error" 2 "$rc_opt"
expect_eq "unknown hook mode: usage error" 2 "$rc_hook"
grep -q "^kprof: unrecognized option '--no-such-option'" usage2.txt || fail "message: $(cat usage2.txt)"

# killed by a signal: kprof dies of it too, after printing
set +e
"$KPROF" -- sh -c 'kill -TERM $$' 2> sig.txt; rc_sig=$?
set -e
expect_eq "killed by SIGTERM" 143 "$rc_sig"
grep -q 'sh killed by SIGTERM after' sig.txt || fail "no signal in the header: $(cat sig.txt)"

# -o keeps the traces, kanalyze reads them; a directory with files is refused
"$KPROF" -o kept -e trace=getppid -- "$BUILD/tests/getppid_loop" 500 > /dev/null 2> kept.txt
expect_eq "-e trace=getppid: rows" "getppid" "$(awk '/^-----/ { d++; next } d == 1 { print $NF }' kept.txt)"
expect_eq "kept traces: getppid" 500 "$(syscall_field "$(profile_json kept)" getppid count)"
set +e
"$KPROF" -o kept -- true 2> again.txt; rc_again=$?
set -e
expect_eq "-o with files: usage error" 2 "$rc_again"

# waits apart: nanosleep is in the %wait block, not among the work
"$KPROF" -- sh -c 'sleep 0.2; cat /etc/hostname > /dev/null' 2> waits.txt
awk '/^Calls that wait by nature/ { w = 1 } w && $NF == "clock_nanosleep" { found = 1 } END { exit !found }' waits.txt ||
	fail "clock_nanosleep not in the wait block: $(cat waits.txt)"
awk '/^Calls that wait by nature/ { exit } $NF == "clock_nanosleep" { bad = 1 } END { exit bad }' waits.txt ||
	fail "clock_nanosleep among the work"

# -P: p50 and p99 said as the histogram bucket they fall in, lo-hi (us)
"$KPROF" -P -- "$BUILD/tests/getppid_loop" 1000 > /dev/null 2> pct.txt
grep -q '^% time .* retries    p50 range (us)    p99 range (us) syscall$' pct.txt ||
	fail "-P: no range columns: $(head -n 4 pct.txt)"
read -r lo hi <<<"$(awk '$NF == "getppid" { split($(NF - 2), r, "-"); print r[1], r[2] }' pct.txt)"
awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(lo > 0 && lo <= hi && hi <= 2 * lo) }' ||
	fail "-P: getppid's p50 range '$lo-$hi' is not a bucket (lo <= hi <= 2 lo)"
echo "ok: -P: getppid p50 in $lo-$hi us"
# the summary has no sections: kprof -b prints kanalyze's table instead,
# and kanalyze refuses --format=summary with --by=process
"$KPROF" -b process -- true 2> by.txt
grep -q '^--- pid [0-9]* .* true ---$' by.txt || fail "-b process: no section: $(head -n 5 by.txt)"
set +e
"$KANALYZE" --format=summary --by=process kept > /dev/null 2> by.err; rc_by=$?
set -e
expect_eq "kanalyze --format=summary --by=process: usage error" 2 "$rc_by"

# as root: --bpf, from the kernel side, counts the same
if [ "$(id -u)" -eq 0 ] && [ -x "$BUILD/kbpf-trace" ]; then
	"$KPROF" --bpf -- "$BUILD/tests/getppid_loop" 1000 > /dev/null 2> bpf.txt
	expect_eq "--bpf: getppid calls" 1000 "$(awk '$NF == "getppid" { print $4 }' bpf.txt)"
else
	echo "not root: --bpf not tried"
fi

# as root: -p attaches to a running process until kprof is told to stop
if [ "$(id -u)" -eq 0 ] && [ -x "$BUILD/kbpf-trace" ]; then
	sh -c 'while :; do cat /etc/hostname > /dev/null; sleep 0.01; done' &
	loop=$!
	"$KPROF" -p "$loop" 2> attach.txt &
	kp=$!
	sleep 2
	kill -INT "$kp"
	rc=0
	wait "$kp" || rc=$?
	kill "$loop"
	expect_eq "-p: exit status after SIGINT" 0 "$rc"
	grep -q "^kprof: pid $loop and its children, traced for [0-9.]* s" attach.txt ||
		fail "-p: no header: $(cat attach.txt)"
	# dash starts its children with vfork, others with clone
	forks=$(awk '$NF ~ /^(clone|clone3|fork|vfork)$/ { n += $4 } END { print n + 0 }' attach.txt)
	[ "$forks" -ge 10 ] || fail "-p: $forks forks in 2 s of a loop forking every 10 ms"
	echo "ok: -p: $forks forks in 2 s"
fi
