#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# KPROF_EVENTS=1: every call that returned is an event of the trace or
# counted as dropped (a thread's ring of 2048 events filled between two
# flushes), exactly. Four threads calling getppid as fast as they can fill
# their rings; the drops were once taken after the batch's drop record was
# written and cleared with it, so that none was ever said.
source "$KPROF_ROOT/tests/lib.sh"
KPROF_EVENTS=1 KPROF_GZIP=0 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace \
	"$BUILD/tests/threads_calls" 4 250000 > /dev/null
json=$(profile_json trace)
calls=$(jq ".total.count" <<<"$json")
# exit (the four threads) and exit_group never return: no event
no_return=$(( $(syscall_field "$json" exit count) + $(syscall_field "$json" exit_group count) ))
dropped=$(jq '.drops.events' <<<"$json")
"$KANALYZE" --timeline=all.json --timeline-max=0 trace 2> /dev/null
events=$(jq '[.traceEvents[] | select(.ph == "X")] | length' all.json)
echo "calls $calls (no return $no_return): events $events, dropped $dropped"
expect_eq "events + dropped" $((calls - no_return)) $((events + dropped))
if [ "$dropped" -gt 0 ]; then
	jq -e '.drops.reasons | any(startswith("event ring full"))' <<<"$json" > /dev/null ||
		fail "no reason for the dropped events: $(jq -c .drops <<<"$json")"
	"$KANALYZE" trace | grep >/dev/null "^Dropped: 0 records, $dropped events (event ring full" ||
		fail "the profile does not say the dropped events"
	echo "ok: the drops said in the profile"
fi
