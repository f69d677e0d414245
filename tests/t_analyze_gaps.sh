# SPDX-License-Identifier: MIT
# tier: check
# Lossless by construction: a record removed from a real trace is named by
# its number, the profile's counts stay exact when a superseded aggregate
# is lost, and --strict turns any hole into exit status 3.
. "$KPROF_ROOT/tests/lib.sh"
N=100000
KPROF_EVENTS=1 KPROF_GZIP=0 KPROF_INTERVAL_MS=1 KPROF_OUT=$PWD/trace \
	LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" $N >/dev/null
file=$(echo trace/*.msgpack)
[ -f "$file" ] || fail "no trace file"

full=$(profile_json "$file")
expect_eq "intact: missing records" 0 "$(jq '.processes[0].missing_records.count' <<<"$full")"
rc=0; "$KANALYZE" --strict "$file" >/dev/null || rc=$?
expect_eq "--strict on an intact trace (exit)" 0 "$rc"
events_full=$(jq '.processes[0].events' <<<"$full")

# An events batch lost in the middle: exactly its number is reported.
info=$("$BUILD/tests/drop_record" "$file" lost-events.msgpack events 2)
seq=$(sed -n 's/^seq=//p' <<<"$info"); n_ev=$(sed -n 's/^events=//p' <<<"$info")
[ -n "$seq" ] && [ "${n_ev:-0}" -gt 0 ] || fail "drop_record said: $info"
rc=0; json=$("$KANALYZE" --format=json lost-events.msgpack 2>err.txt) || rc=$?
expect_eq "without --strict the profile is printed (exit)" 0 "$rc"
grep -q "1 record missing (seq $seq)" err.txt || fail "stderr does not name seq $seq: $(cat err.txt)"
echo "ok: stderr names seq $seq"
expect_eq "missing records in JSON" "1 [[$seq,$seq]]" \
	"$(jq -c '.processes[0].missing_records | "\(.count) \(.seq)"' -r <<<"$json")"
expect_eq "events lost with the batch" $((events_full - n_ev)) "$(jq '.processes[0].events' <<<"$json")"
expect_eq "getppid still exact (aggregates)" $N "$(syscall_field "$json" getppid count)"
rc=0; "$KANALYZE" --strict lost-events.msgpack >/dev/null 2>err.txt || rc=$?
expect_eq "--strict exit status" 3 "$rc"
grep -q -- "--strict: 1 records missing" err.txt || fail "--strict message: $(cat err.txt)"

# A periodic aggregate lost: the last one supersedes it, counts stay exact.
"$BUILD/tests/drop_record" "$file" /dev/null aggregate 2 >/dev/null ||
	fail "fewer than two aggregate records: nothing superseded to lose"
info=$("$BUILD/tests/drop_record" "$file" lost-agg.msgpack aggregate 1)
seq=$(sed -n 's/^seq=//p' <<<"$info")
json=$("$KANALYZE" --format=json lost-agg.msgpack 2>err.txt)
grep -q "1 record missing (seq $seq)" err.txt || fail "stderr does not name seq $seq: $(cat err.txt)"
expect_eq "getppid exact without the first aggregate" $N "$(syscall_field "$json" getppid count)"
expect_eq "exit status still known" 0 "$(jq '.processes[0].exit_status' <<<"$json")"
