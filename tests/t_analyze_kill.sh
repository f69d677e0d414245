#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze --listen survives a producer killed with SIGKILL mid-stream and
# reports the others correctly; SIGINT then ends it with the final profile
# (--linger keeps it from ending on its own between producers).
source "$KPROF_ROOT/tests/lib.sh"
sock=$PWD/k.sock
"$KANALYZE" --listen=unix:$sock --refresh=100 --linger=600000 > live.txt 2> live.err &
listener=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "listener did not create $sock"
# The victim flushes every 10 ms and keeps going until killed, with its
# process group (the shim's output process too: alone it would write the
# victim's end itself), so its stream stops mid-run.
setsid bash -c 'echo $$ > victim.pid; exec env KPROF_INTERVAL_MS=10 LD_PRELOAD="$1" KPROF_OUT="$2" "$3" 2000000000' \
	_ "$SHIM" "unix:$sock" "$BUILD/tests/getppid_loop" > /dev/null &
sleep 0.5
victim=$(cat victim.pid)
kill -KILL -- -"$victim"
wait $! 2>/dev/null || true
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
grep -Eq "^kanalyze: stream of pid $victim \(getppid_loop\) ended without exit: killed or lost after byte [0-9]+ of connection [0-9]+ \(pid [0-9]+\)\$" live.err ||
	fail "the killed producer's stream is not reported: $(cat live.err)"
echo "ok: $(grep 'ended without exit' live.err)"

# A producer killed in the middle of a record loses only that record: a
# real trace with periodic aggregates is sent up to the middle of one of
# its records, then the sender is killed. The listener reports the cut by
# connection and offset, keeps every record before it (the profile of the
# file cut at the last whole record) and the other producer's counts exact.
KPROF_INTERVAL_MS=2 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/whole "$BUILD/tests/getppid_loop" 100000 > /dev/null
src=$(ls whole/*.msgpack)
"$BUILD/tests/format_plain" --offsets "$src" > ends
records=$(wc -l < ends)
[ "$records" -ge 6 ] || fail "only $records records in the trace; need periodic aggregates"
mid=$((records / 2))
last_whole=$(sed -n "${mid}p" ends)
next_end=$(sed -n "$((mid + 1))p" ends)
cut=$(( (last_whole + next_end) / 2 ))
head -c "$last_whole" "$src" > expected.msgpack
"$KANALYZE" --format=json --listen=unix:$PWD/cut.sock --linger=600000 --refresh=0 \
	> cut.json 2> cut.err &
listener=$!
for _ in $(seq 50); do [ -S cut.sock ] && break; sleep 0.1; done
[ -S cut.sock ] || fail "listener did not create cut.sock"
head -c "$cut" "$src" > part
node -e 'const s = require("net").connect(process.argv[1]);
	s.write(require("fs").readFileSync(process.argv[2]),
		() => process.kill(process.pid, "SIGKILL"));' "$PWD/cut.sock" part &
sender=$!
LD_PRELOAD=$SHIM KPROF_OUT=unix:$PWD/cut.sock "$BUILD/tests/getppid_loop" 3000 > /dev/null
rc=0; wait $sender || rc=$?
expect_eq "sender killed" 137 "$rc"
sleep 0.3
kill -INT $listener
rc=0; wait $listener || rc=$?
expect_eq "listener exit (a damaged connection)" 5 "$rc"
grep -Eq "^kanalyze: connection [0-9]+ \(pid [0-9]+\): truncated record at byte $last_whole\$" cut.err ||
	fail "no truncation report at byte $last_whole: $(cat cut.err)"
of() { jq -c --arg p "$1" '[.processes[] | select(.stream == $p) | .syscalls[] | {name, count, errors}] | sort_by(.name)' cut.json; }
expected_stream=$(jq -r '.processes[0].stream' <<<"$(profile_json expected.msgpack)")
expected=$(jq -c '[.processes[0].syscalls[] | {name, count, errors}] | sort_by(.name)' <<<"$(profile_json expected.msgpack)")
expect_eq "the cut producer: every record before the cut" "$expected" "$(of "$expected_stream")"
complete=$(jq '[.processes[] | select(.stream != "'"$expected_stream"'") | .syscalls[] | select(.name == "getppid") | .count] | add' cut.json)
expect_eq "the other producer's getppid" 3000 "$complete"
