#!/bin/bash
# SPDX-License-Identifier: MIT
# kbpf-trace -o unix:SOCKET streams live to kanalyze --listen: the
# listener's final profile equals the same run traced into files (exact
# counts); the shim and kbpf-trace stream to one listener at once; without
# a listener the trace goes to ./kprof-trace/ with one warning; a listener
# that dies or stops reading mid-run is replaced by that directory, the
# counts there stay exact and what went down with it is a drop record.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/bpf_same_calls

# start_listener NAME ARGS...: kanalyze --listen on $PWD/NAME.sock
start_listener() {
	local name=$1; shift
	"$KANALYZE" --listen=unix:$PWD/$name.sock --format=json "$@" \
		> "$name.json" 2> "$name.err" &
	listener=$!
	for _ in $(seq 100); do [ -S "$name.sock" ] && return 0; sleep 0.1; done
	fail "listener $name did not start: $(cat "$name.err")"
}
by_name='[.syscalls[] | {name, count, errors, retries}] | sort_by(.name)'

# 1. live = files, exactly, for every syscall of a deterministic program
start_listener live --save=saved
"$KBPF" -o unix:$PWD/live.sock -- "$prog" 2> kbpf.err || fail "program failed: $(cat kbpf.err)"
rc=0; wait $listener || rc=$?
expect_eq "listener exit" 0 "$rc"
[ ! -s kbpf.err ] || fail "kbpf-trace said: $(cat kbpf.err)"
[ ! -e kprof-trace ] || fail "kbpf-trace fell back to a directory"
"$KBPF" -o files -- "$prog" || fail "program failed"
expect_eq "live profile = file profile" "$(jq -c "$by_name" <<<"$(profile_json files)")" \
	"$(jq -c "$by_name" live.json)"
expect_eq "getppid live" 300 "$(syscall_field "$(cat live.json)" getppid count)"
expect_eq "readv retries live" 25 "$(syscall_field "$(cat live.json)" readv retries)"
expect_eq "saved connection = live" "$(jq -c "$by_name" live.json)" \
	"$(jq -c "$by_name" <<<"$(profile_json saved)")"

# 2. the shim and kbpf-trace streaming to one listener at once
if [ -f "$SHIM" ]; then
	start_listener both
	# kbpf-trace first (loading BPF takes a while): the listener ends
	# when every producer has closed, so both must be connected by then
	mkfifo hold
	exec 4<>hold
	"$KBPF" -v -o unix:$PWD/both.sock -- sh -c 'read x < "$1"; exec "$2"' sh hold "$prog" \
		2> kbpf.err 4>&- &
	kbpf=$!
	for _ in $(seq 100); do grep -q "streaming to unix:" kbpf.err && break; sleep 0.1; done
	grep -q "streaming to unix:" kbpf.err || fail "kbpf-trace did not connect: $(cat kbpf.err)"
	LD_PRELOAD=$SHIM KPROF_OUT=unix:$PWD/both.sock "$BUILD/tests/getppid_loop" 3000 \
		> /dev/null 2> shim.err
	echo go >&4
	exec 4>&-
	wait $kbpf || fail "program failed under kbpf-trace"
	rc=0; wait $listener || rc=$?
	expect_eq "listener exit (two producers)" 0 "$rc"
	! grep -q "cannot connect" shim.err kbpf.err || fail "a producer fell back"
	expect_eq "producers" '["bpf","preload"]' "$(jq -c '[.processes[].producer] | unique' both.json)"
	# per process: the shim's getppid_loop, kbpf-trace's bpf_same_calls
	# (after the sh that waited for it)
	of() { jq --arg p "$1" --arg n "$2" --arg f "$3" '[.processes[] |
		select(.argv[0] | endswith($p)) | .syscalls[] | select(.name == $n) | .[$f]] | add' both.json; }
	expect_eq "getppid of the shim's process" 3000 "$(of getppid_loop getppid count)"
	expect_eq "getppid of kbpf-trace's process" 300 "$(of bpf_same_calls getppid count)"
	expect_eq "unlink errors of kbpf-trace's process" 30 "$(of bpf_same_calls unlink errors)"
else
	echo "skip: shim not built: no shim + kbpf-trace listener check"
fi

# 3. nobody listening: one warning that says where, exact counts there
mkdir nobody && cd nobody
"$KBPF" -o unix:$PWD/none.sock -- "$prog" 2> err || fail "program failed"
expect_eq "fallback warnings" 1 "$(grep -c "cannot connect to unix:$PWD/none.sock (nobody listening?); writing to $PWD/kprof-trace/ instead" err)"
expect_eq "fallback profile = file profile" "$(jq -c "$by_name" <<<"$(profile_json ../files)")" \
	"$(jq -c "$by_name" <<<"$(profile_json kprof-trace)")"
cd ..

# 4. the listener is killed mid-run: tracing goes on into ./kprof-trace/,
# whose last aggregate has every call; the batch that failed is a drop.
mkdir died && cd died
start_listener live
mkfifo go
exec 3<>go
"$KBPF" -i 20 -o unix:$PWD/live.sock -- "$BUILD/tests/bpf_phases" 1000 2000 \
	< go > out 2> err 3>&- &
kbpf=$!
for _ in $(seq 100); do grep -q ready out && break; sleep 0.1; done
grep -q ready out || fail "bpf_phases did not start"
kill -KILL $listener; wait $listener || true
# the next periodic batch (20 ms) finds the connection gone
for _ in $(seq 100); do grep -q "went away" err && break; sleep 0.1; done
exec 3>&-
rc=0; wait $kbpf || rc=$?
expect_eq "kbpf-trace exit (CMD's status)" 0 "$rc"
cat err
expect_eq "warnings" 1 "$(grep -c "the listener on unix:$PWD/live.sock went away (Broken pipe); writing the rest to $PWD/kprof-trace/" err)"
json=$("$KANALYZE" --format=json kprof-trace 2> analyze.err)
expect_eq "getppid in the fallback (both phases)" 3000 "$(syscall_field "$json" getppid count)"
[ "$(jq '.drops.records' <<<"$json")" -ge 1 ] || fail "no drop record: $(jq -c .drops <<<"$json")"
jq -e '.drops.reasons | index("the listener on unix:'"$PWD"'/live.sock went away (Broken pipe)")' \
	<<<"$json" > /dev/null || fail "drop reason: $(jq -c .drops <<<"$json")"
grep -q "records missing (seq 1-" analyze.err ||
	fail "the records sent to the listener are not reported missing: $(cat analyze.err)"
cd ..

# 5. a listener that stops reading (SIGSTOP) never blocks kbpf-trace:
# after 2 s without progress it is given up, the counts stay exact.
mkdir stopped && cd stopped
start_listener live
kill -STOP $listener
"$KBPF" -E -o unix:$PWD/live.sock -- "$BUILD/tests/static_getppid" 300000 \
	> /dev/null 2> err || fail "program failed"
kill -KILL $listener; wait $listener || true
grep -q "went away (it took nothing for 2 s); writing the rest to $PWD/kprof-trace/" err ||
	fail "no stall warning: $(cat err)"
json=$("$KANALYZE" --format=json kprof-trace 2> /dev/null)
expect_eq "getppid in the fallback" 300000 "$(syscall_field "$json" getppid count)"
echo "ok: drops $(jq -c .drops <<<"$json")"
