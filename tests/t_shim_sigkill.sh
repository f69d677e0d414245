# SIGKILL mid-run: the trace is readable up to the last periodic flush.
# The program makes 1000 getppid calls, then sleeps in a loop (each sleep
# a hooked call, so flushes go on) until it is killed. Once a flush holds
# the 1000 calls it gets SIGKILL: plain traces decode cleanly (exit 0),
# gzip ones up to their last sync flush (exit 2: the stream has no end).
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/calls_wait
for kind in plain gzip; do
	gz=0; [ $kind = gzip ] && gz=1
	LD_PRELOAD=$SHIM KPROF_OUT=$PWD/$kind KPROF_GZIP=$gz KPROF_INTERVAL_MS=10 "$prog" kill 1000 > $kind.out &
	pid=$!
	# wait (not a timing assertion: at most 30 s) for a flush with every call
	got=0
	for _ in $(seq 300); do
		got=$("$KANALYZE" --format=json $kind 2>/dev/null | jq '[.syscalls[] | select(.name == "getppid") | .count] | add // 0' || true)
		[ "${got:-0}" = 1000 ] && break
		sleep 0.1
	done
	kill -KILL $pid
	wait $pid && fail "$kind: program was not killed" || true
	expect_eq "$kind: program got as far as" ready "$(cat $kind.out)"
	rc=0; json=$(profile_json $kind) || rc=$?
	expect_eq "$kind: kanalyze status" $((gz * 2)) "$rc"
	expect_eq "$kind: getppid up to the last flush" 1000 "$(syscall_field "$json" getppid count)"
	expect_eq "$kind: no exit record" null "$(jq '.processes[0].exit_status' <<<"$json")"
	[ "$(syscall_field "$json" clock_nanosleep count)" -gt 0 ] || fail "$kind: no sleep counted"
done
