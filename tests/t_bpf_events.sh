# --events under a syscall storm with a deliberately small ring buffer:
# what was lost is reported as drop records (and by kanalyze), never
# silently: events written + events dropped = calls counted.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/static_getppid
"$KBPF" --events --events-buffer=16 -o small -- "$prog" 500000 >/dev/null
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
echo "ok: drops reported"

# with the default buffer: every call of a storm arrives or is accounted
"$KBPF" --events -o big -- "$prog" 500000 >/dev/null
json=$(profile_json big)
count=$(jq '.total.count' <<<"$json")
events=$(jq '[.processes[].events] | add' <<<"$json")
dropped=$(jq '.drops.events' <<<"$json")
echo "default buffer: calls $count, events $events, dropped $dropped"
expect_eq "events + dropped" "$count" $((events + dropped))
