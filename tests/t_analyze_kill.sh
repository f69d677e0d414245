#!/bin/bash
# kanalyze --listen survives a producer killed with SIGKILL mid-stream and
# reports the others correctly; SIGINT then ends it with the final profile
# (--linger keeps it from ending on its own between producers).
source "$KPROF_ROOT/tests/lib.sh"
sock=$PWD/k.sock
"$KANALYZE" --listen=unix:$sock --refresh=100 --linger=600000 > live.txt 2> live.err &
listener=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "listener did not create $sock"
# The victim flushes every 10 ms and keeps going until killed.
KPROF_INTERVAL_MS=10 LD_PRELOAD=$SHIM KPROF_OUT=unix:$sock \
	"$BUILD/tests/getppid_loop" 2000000000 > /dev/null &
victim=$!
sleep 0.5
kill -KILL $victim
wait $victim 2>/dev/null || true
for n in 1000 2000; do
	LD_PRELOAD=$SHIM KPROF_OUT=unix:$sock "$BUILD/tests/getppid_loop" $n > /dev/null
done
sleep 0.3
kill -0 $listener 2>/dev/null || fail "the listener died: $(cat live.err)"
kill -INT $listener
rc=0; wait $listener || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 2 ] || fail "listener exit $rc: $(cat live.err)"
grep -q '^--- kanalyze --listen' live.txt || fail "no periodic snapshot"
# The final profile is the last one printed.
awk '/^=== Syscall Profile ===/{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' live.txt > final.txt
grep -q '^Merged: 3 processes' final.txt || fail "not 3 processes merged: $(cat final.txt)"
# The two complete producers' getppid calls are all there; the victim's
# show up to its last aggregate (more than zero: it ran for 0.5 s).
total=$(awk '/^getppid /{print $3}' final.txt)
[ "$total" -gt 3000 ] || fail "getppid total $total not above 3000"
echo "ok: getppid total $total (3000 + the victim's)"
grep -q 'Open at exit: .*(2 of 3 streams exited)' final.txt || fail "exit records: $(grep 'Open at exit' final.txt)"
echo "ok: the killed producer has no exit record, the others do"
