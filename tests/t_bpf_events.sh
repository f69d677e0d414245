# SPDX-License-Identifier: MIT
# --events under a syscall storm with a deliberately small ring buffer:
# what was lost is reported as drop records (and by kanalyze), never
# silently: events written + events dropped = calls counted.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/static_getppid
"$KBPF" --events --events-buffer=16 -o small -- "$prog" 500000 >/dev/null 2>small.err
json=$(profile_json small)
count=$(jq '.total.count' <<<"$json")
events=$(jq '[.processes[].events] | add' <<<"$json")
dropped=$(jq '.drops.events' <<<"$json")
echo "calls $count, events $events, dropped $dropped ($(jq -c '.drops.reasons' <<<"$json"))"
expect_eq "getppid" 500000 "$(syscall_field "$json" getppid count)"
[ "$dropped" -gt 0 ] || fail "a 16 KB ring buffer lost nothing under a storm: not a storm?"
expect_eq "events + dropped" "$count" $((events + dropped))
jq -e '.drops.reasons | index("ring buffer full")' <<<"$json" >/dev/null ||
	fail "drop reason missing"
# and said on stderr at the end, with the same figures
cat small.err
expect_eq "drops said on stderr" \
	"kbpf-trace: the trace is incomplete: lost $dropped calls, 0 records in 1 process image: ring buffer full" \
	"$(grep incomplete small.err)"
echo "ok: drops reported"

# with the default buffer: every call of a storm arrives or is accounted
"$KBPF" --events -o big -- "$prog" 500000 >/dev/null
json=$(profile_json big)
count=$(jq '.total.count' <<<"$json")
events=$(jq '[.processes[].events] | add' <<<"$json")
dropped=$(jq '.drops.events' <<<"$json")
echo "default buffer: calls $count, events $events, dropped $dropped"
expect_eq "events + dropped" "$count" $((events + dropped))

# Events are gathered per CPU and written in batches; every thread's
# events still come in order (across records and CPUs), exactly one per
# call, with threads migrating between CPUs.
"$KBPF" -t -E -i 20 -o threads.msgpack -- "$BUILD/programs/overhead" --workload=threads \
	--calls=200000 > /dev/null || fail "overhead --workload=threads failed"
"$BUILD/tests/events_order" threads.msgpack > per_thread.txt || fail "events out of order"
json=$("$KANALYZE" --by=thread --format=json threads.msgpack)
dropped=$(jq '.drops.events' <<<"$json")
expect_eq "events + dropped (threads)" "$(jq '.total.count' <<<"$json")" \
	$(( $(awk '{ n += $3 } END { print n }' per_thread.txt) + dropped ))
if [ "$dropped" -eq 0 ]; then
	expect_eq "events per thread = calls per thread" \
		"$(jq -r '.processes[0].thread_profiles[] | "\(.tid) \(.total.count)"' <<<"$json" | sort)" \
		"$(awk '{ print $2, $3 }' per_thread.txt | sort)"
else
	echo "($dropped events dropped under load: per-thread counts not compared)"
fi

# A partial batch does not wait for the next 63 calls: a process blocked
# after 1000 calls has all its events in the trace within an interval.
mkfifo go
exec 3<>go
"$KBPF" -E -i 50 -o blocked -- "$BUILD/tests/bpf_phases" 1000 5 < go > phases.out 3>&- &
kbpf=$!
for _ in $(seq 100); do grep -q ready phases.out && break; sleep 0.1; done
grep -q ready phases.out || fail "bpf_phases did not start"
complete=""
for _ in $(seq 100); do
	json=$("$KANALYZE" --format=json blocked 2>/dev/null || true)
	events=$(jq '[.processes[].events] | add // 0' <<<"$json" 2>/dev/null || echo 0)
	count=$(jq '.total.count // 0' <<<"$json" 2>/dev/null || echo 0)
	if [ "$events" -ge 1000 ] && [ "$events" -eq "$count" ]; then complete=yes; break; fi
	sleep 0.1
done
[ -n "$complete" ] || fail "events of the blocked process not written: $events events, $count calls"
echo "ok: blocked process: $events events = $count calls counted so far"
exec 3>&-
wait $kbpf || fail "kbpf-trace failed"
json=$(profile_json blocked)
expect_eq "events = calls at the end" "$(jq '.total.count' <<<"$json")" \
	"$(jq '[.processes[].events] | add' <<<"$json")"
