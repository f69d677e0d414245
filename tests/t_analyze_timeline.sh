#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze --timeline: valid JSON in Chrome trace event format, one
# complete ("X") slice per event record entry, on one track per thread.
source "$KPROF_ROOT/tests/lib.sh"
KPROF_EVENTS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/threads_calls" 4 1000 > /dev/null
events=$(profile_json trace | jq '[.processes[].events] | add')
[ "$events" -gt 0 ] || fail "no event records"
"$KANALYZE" --timeline=out.json trace 2> err
jq -e . out.json > /dev/null || fail "not valid JSON"
expect_eq "slices = event entries" "$events" "$(jq '[.traceEvents[] | select(.ph == "X")] | length' out.json)"
# Chrome trace format: every event has name, ph, pid, tid; X has ts and dur.
jq -e '.traceEvents | all(has("name") and has("ph") and has("pid")) and
	([.[] | select(.ph == "X")] | all(has("ts") and has("dur") and has("tid") and
	(.ts | type) == "number" and .dur >= 0 and .cat == "syscall" and (.args | has("ret"))))' \
	out.json > /dev/null || fail "events lack Chrome trace fields"
threads=$(jq '[.traceEvents[] | select(.ph == "X") | .tid] | unique | length' out.json)
named=$(jq '[.traceEvents[] | select(.name == "thread_name")] | length' out.json)
expect_eq "one named track per thread" "$threads" "$named"
[ "$threads" -gt 1 ] || fail "threads_calls ran one thread only?"
grep -q "out.json: $events slices" err || fail "slice count message: $(cat err)"
# Failed calls carry the errno name.
KPROF_EVENTS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/eagain "$BUILD/tests/eagain_pipe" > /dev/null
"$KANALYZE" --timeline=eagain.json eagain 2> /dev/null
jq -e '[.traceEvents[] | select(.args.error == "EAGAIN")] | length > 0' eagain.json > /dev/null ||
	fail "no EAGAIN slice"
# No event records: the message, exit 1, no file (tests/t_analyze_cli_errors.sh
# also covers events that no filter lets through).
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/noev "$BUILD/tests/getppid_loop" 10 > /dev/null
rc=0; "$KANALYZE" --timeline=empty.json noev 2> noev.err || rc=$?
expect_eq "without events: exit" 1 "$rc"
expect_eq "without events: message" "kanalyze: --timeline: the trace has no events: record them with KPROF_EVENTS=1 or kbpf-trace --events; empty.json not written" "$(cat noev.err)"
[ ! -e empty.json ] || fail "an empty timeline was written"
# Longer than --timeline-max (MB): cut at a time, every track's beginning
# kept whole, one line saying where and how much; --timeline-max=0: all.
KPROF_EVENTS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/big "$BUILD/tests/threads_calls" 4 6000 > /dev/null
all=$(profile_json big | jq '[.processes[].events] | add')
"$KANALYZE" --timeline=all.json --timeline-max=0 big 2> all.err
expect_eq "--timeline-max=0: every slice" "$all" "$(jq '[.traceEvents[] | select(.ph == "X")] | length' all.json)"
[ "$(stat -c %s all.json)" -gt 1048576 ] || fail "the whole timeline is under 1 MB: no cut to test"
"$KANALYZE" --timeline=cut.json --timeline-max=1 big 2> cut.err
jq -e . cut.json > /dev/null || fail "the cut timeline is not valid JSON"
size=$(stat -c %s cut.json)
[ "$size" -le $(( 1048576 * 21 / 20 )) ] || fail "cut timeline is $size bytes, over 1 MB by more than 5%"
kept=$(jq '[.traceEvents[] | select(.ph == "X")] | length' cut.json)
[ "$kept" -gt 0 ] && [ "$kept" -lt "$all" ] || fail "cut kept $kept of $all slices"
line=$(grep -- '--timeline: ' cut.err) || fail "no line says the cut: $(cat cut.err)"
grep -q "^kanalyze: --timeline: $all slices would make about [0-9]* MB, more than --timeline-max=1 (the most a viewer opens): cut at [0-9.]* s into the run, the first $kept slices ([0-9.]*%) written; " <<<"$line" ||
	fail "cut line: $line"
cut_s=$(sed 's/.*cut at \([0-9.]*\) s.*/\1/' <<<"$line")
# the slices kept are exactly the whole timeline's before the cut
expect_eq "slices before the cut" "$kept" \
	"$(jq --argjson c "$cut_s" '[.traceEvents[] | select(.ph == "X" and .ts < $c * 1e6)] | length' all.json)"
