# SPDX-License-Identifier: MIT
# tier: check
# kanalyze --interval=MS, the time series from the periodic aggregates:
# the points add up to the profile's total exactly, and an interval in
# which no aggregate landed (shorter than the producer's 1 s period) is
# said unknown ("-", "aggregates": 0), not shown as an interval without
# calls. The timeline names a pid's images (fork, then exec) in one row.
. "$KPROF_ROOT/tests/lib.sh"
KPROF_INTERVAL_MS=1000 KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t dash -c \
	"$BUILD/tests/getppid_loop 300 > /dev/null; sleep 1.3; $BUILD/tests/getppid_loop 200 > /dev/null"
total=$(profile_json t | jq .total.count)
"$KANALYZE" --interval=250 --format=json t > series.json
expect_eq "the points add up to the total" "$total" "$(jq '[.points[].count] | add' series.json)"
unknown=$(jq '[.points[] | select(.aggregates == 0)] | length' series.json)
[ "$unknown" -ge 2 ] || fail "only $unknown intervals without an aggregate in 1.3 s at 250 ms: $(jq -c . series.json)"
expect_eq "intervals without an aggregate count nothing" 0 \
	"$(jq '[.points[] | select(.aggregates == 0) | .count] | add' series.json)"
"$KANALYZE" --interval=250 t > series.txt
cat series.txt
expect_eq "table: unknown intervals" "$unknown" "$(grep -c '(no aggregate in this interval)$' series.txt)"

# the timeline (Chrome trace JSON): one process row per pid, its images
# named together ("..., then exec ls"), each thread named once
KPROF_EVENTS=1 KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/ev \
	bash -c 'ls / > /dev/null; cat /etc/hostname > /dev/null'
"$KANALYZE" --timeline=tl.json ev 2> /dev/null
expect_eq "process rows named twice" 0 \
	"$(jq '[.traceEvents[] | select(.name == "process_name") | .pid] | group_by(.) | map(select(length > 1)) | length' tl.json)"
expect_eq "threads named twice" 0 \
	"$(jq '[.traceEvents[] | select(.name == "thread_name") | "\(.pid) \(.tid)"] | group_by(.) | map(select(length > 1)) | length' tl.json)"
jq -r '.traceEvents[] | select(.name == "process_name") | .args.name' tl.json | grep -q ', then exec ls$' ||
	fail "no row naming the fork child and its exec of ls: $(jq -c '[.traceEvents[] | select(.name == "process_name") | .args.name]' tl.json)"
