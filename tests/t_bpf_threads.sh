# SPDX-License-Identifier: MIT
# kbpf-trace -t: one aggregate per thread with its exact count, threads
# that ended marked exited; one file holding the stream (-o X.msgpack);
# periodic cumulative aggregates (-i) superseded by the final ones.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
"$KBPF" -t -i 50 -o trace.msgpack -- "$BUILD/tests/bpf_threads" > threads.out
cat threads.out
[ -f trace.msgpack ] || fail "-o trace.msgpack did not write one file"
json=$("$KANALYZE" --format=json --by=thread trace.msgpack)
expect_eq "threads" 4 "$(jq '.processes[0].threads' <<<"$json")"
while read -r tid count; do
	got=$(jq --argjson t "$tid" '[.processes[0].thread_profiles[] | select(.tid == $t) |
		.syscalls[] | select(.name == "getppid") | .count] | add // 0' <<<"$json")
	expect_eq "thread $tid getppid" "$count" "$got"
	expect_eq "thread $tid exited" true \
		"$(jq --argjson t "$tid" '.processes[0].thread_profiles[] | select(.tid == $t) | .exited' <<<"$json")"
done < threads.out
expect_eq "getppid in total" 607 "$(syscall_field "$json" getppid count)"
records=$(jq '.counts.records' <<<"$json")
# header + exit + at least 4 final aggregates + periodic ones over 300 ms
[ "$records" -gt 8 ] || fail "only $records records: no periodic aggregates?"
echo "ok: $records records"
