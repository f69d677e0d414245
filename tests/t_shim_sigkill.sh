# SPDX-License-Identifier: MIT
# tier: check
# SIGKILL mid-run loses nothing the shim counted. The program makes 1000
# getppid calls, says "ready" and sleeps in a loop until it is killed; no
# periodic batch is written (KPROF_INTERVAL_MS=0), so every call is still
# only in memory when SIGKILL comes. The output process (which holds the
# trace descriptor and shares the program's memory) sees its parent die and
# writes the final batch itself: exact counts, an exit record marked
# after_death with the signal, a stream that ends cleanly (gzip too).
# Then the case it cannot help: the output process killed with the
# program (the whole process group): the stream ends after its start-up
# header, and kanalyze says so (--strict fails).
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/calls_wait
wait_ready() { for _ in $(seq 300); do [ "$(cat "$1" 2>/dev/null)" = ready ] && return; sleep 0.1; done; fail "program never got ready"; }
for mode in symbols rewrite; do
	[ $mode = rewrite ] && [ "$(id -u)" != 0 ] && continue
	for kind in plain gzip; do
		gz=0; [ $kind = gzip ] && gz=1
		KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/$mode-$kind KPROF_GZIP=$gz \
			KPROF_INTERVAL_MS=0 "$prog" kill 1000 > $mode-$kind.out &
		pid=$!
		wait_ready $mode-$kind.out
		kill -KILL $pid
		wait $pid && fail "$mode $kind: program was not killed" || true
		sleep 0.3 # the output process writes after its parent is gone
		rc=0; json=$(profile_json $mode-$kind) || rc=$?
		expect_eq "$mode $kind: kanalyze status" 0 "$rc"
		expect_eq "$mode $kind: getppid, every call" 1000 "$(syscall_field "$json" getppid count)"
		expect_eq "$mode $kind: how it ended, status, signal" "after_death -1 9" \
			"$(jq -r '.processes[0] | "\(.ending) \(.exit_status) \(.exit_signal)"' <<<"$json")"
		"$KANALYZE" --strict $mode-$kind > /dev/null || fail "$mode $kind: --strict failed"
		"$KANALYZE" --by=process $mode-$kind | grep >/dev/null "died without its exit path" ||
			fail "$mode $kind: the profile does not say how the process ended"
	done
done
# Program and output process killed together (setsid: a group of its own)
setsid bash -c 'echo $$ > pgid; exec env LD_PRELOAD="$1" KPROF_OUT="$2" KPROF_INTERVAL_MS=0 "$3" kill 1000' \
	_ "$SHIM" "$PWD/group" "$prog" > group.out &
wait_ready group.out
kill -KILL -- -"$(cat pgid)"
sleep 0.3
rc=0; json=$(profile_json group 2> group.err) || rc=$?
cat group.err
expect_eq "group: ending" unknown "$(jq -r '.processes[0].ending' <<<"$json")"
grep -q "ended without exit" group.err || fail "group: no report of the stream that never ended"
rc=0; "$KANALYZE" --strict group > /dev/null 2>&1 || rc=$?
expect_eq "group: --strict status" 3 "$rc"
