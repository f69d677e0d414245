# SPDX-License-Identifier: MIT
# serial: measures the profilers' overhead
# krunner --suite=overhead, smoke run: tiny iteration counts, one round.
# Every metric is present once, finite and >= 0, with unit and direction,
# and the markdown table is written. Values are not checked: performance
# is measured by the benchmark (README, Performance), never in a test.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
[ "$(id -u)" -eq 0 ] || skip "the overhead suite needs root (BPF tools)"
for tool in strace perf bpftrace node; do
	command -v $tool >/dev/null || skip "$tool not installed (apt-get install strace linux-perf bpftrace nodejs)"
done
perf trace -o /dev/null -- true 2>/dev/null || skip "perf trace does not work on this kernel"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=overhead --rounds=1 --reps=1 --calls=2000 --warmup-ms=0 --slow-calls=100 --node-calls=400 \
	--node-slow-calls=100 --exec-calls=10 --exec-slow-calls=5 --trace-calls=20000 --memory-threads=4 \
	--out="$PWD/results" >summary.txt || fail "krunner exited $?"
files=(results/*-overhead.json)
expect_eq "result files" 1 "${#files[@]}"
result=${files[0]}
expect_eq "status" ok "$(jq -r '.suites[0].status' "$result")"

expected=()
for w in getppid read eagain threads node exec; do
	expected+=("${w}_plain_ns")
	for p in kprof kprof_events kprof_rewrite kprof_rewrite_events kprof_patch kbpf kbpf_events bpftrace perf strace; do
		expected+=("${w}_${p}_added_ns" "${w}_${p}_ratio")
	done
done
expected+=(getppid_kbpf_untraced_added_ns getppid_kbpf_untraced_ratio
	getppid_bpf_counter_added_ns getppid_bpf_counter_ratio
	memory_process_rss_bytes memory_process_vsz_bytes memory_process_rewrite_rss_bytes memory_thread_rss_bytes
	memory_thread_vsz_bytes memory_thread_events_vsz_bytes
	kanalyze_plain_mbps kanalyze_plain_events_per_s kanalyze_gzip_mbps
	kanalyze_gzip_events_per_s gzip_inflate_mbps
	exec_syscalls_plain exec_syscalls_kprof_added exec_syscalls_kprof_rewrite_added
	exec_syscalls_kprof_patch_added)
want=$(printf '%s\n' "${expected[@]}" | sort | tr '\n' ' ')
got=$(jq -r '.suites[0].metrics | keys[]' "$result" | sort | tr '\n' ' ')
expect_eq "metrics" "$want" "$got"
bad=$(jq -r '.suites[0].metrics | to_entries[]
	| select((.value.samples | length) != 1 or (.value.median | type) != "number"
		or .value.median < 0 or .value.median >= 1e300 or .value.unit == null
		or (.value.direction | IN("higher", "lower") | not)) | .key' "$result")
[ -z "$bad" ] || fail "metrics not finite and >= 0, or without unit/direction: $bad"
echo "ok: ${#expected[@]} metrics finite and >= 0"
# a ratio is a ratio of two positive times, and the plain times are positive
bad=$(jq -r '.suites[0].metrics | to_entries[]
	| select((.key | test("_ratio$|_plain_ns$|_mbps$|_per_s$|^exec_syscalls_plain$")) and .value.median <= 0) | .key' "$result")
[ -z "$bad" ] || fail "zero where a positive value is due: $bad"
echo "ok: ratios, plain times and speeds positive"
table=${result%.json}.md
[ -s "$table" ] || fail "no markdown table $table"
grep -q '^| libkprof.so symbols (counts) | +' "$table" || fail "table has no libkprof.so row: $(cat "$table")"
grep -q '^| libkprof.so rewrite (counts) | +' "$table" || fail "table has no rewrite-mode row: $(cat "$table")"
echo "ok: markdown table $(basename "$table")"
