# SPDX-License-Identifier: MIT
# kbpf-trace's off_cpu_ns: how much of each syscall's time its thread
# spent off CPU (sched_switch), so that a profile tells a call that waits
# from one that works. A 300 ms sleep is off CPU for all but microseconds
# of it, and so is the shell's wait4 for the sleeper; 100 reads of 1 MiB
# from /dev/zero (the kernel copies) are on CPU for a millisecond at least;
# for every syscall the time off CPU is within its time; kanalyze shows it
# in the table (OffCPU(ms)), JSON, CSV, markdown and the HTML report. The raw_tp programs, which cannot
# reach the switched tasks' storage, write no off_cpu_ns, and the table
# then has no such column.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
# A run in which kbpf-trace said some switches went unseen (their calls'
# time off CPU is short, and said so) is made again, twice at most.
for try in 1 2 3; do
	rm -rf t
	"$KBPF" -o t -- dash -c 'sleep 0.3; dd if=/dev/zero of=/dev/null bs=1M count=100 2>/dev/null' \
		2> kbpf.err || fail "workload under kbpf-trace: $(cat kbpf.err)"
	cat kbpf.err
	grep -q "time off CPU is short" kbpf.err || break
done
json=$(profile_json t)
field() { jq -r --arg n "$1" --arg f "$2" '[.syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$json"; }
expect_eq "every row has off_cpu_ns" 0 "$(jq '[.syscalls[] | select(.off_cpu_ns == null)] | length' <<<"$json")"
expect_eq "rows whose time off CPU exceeds their time" "" \
	"$(jq -r '.syscalls[] | select(.off_cpu_ns > .time_ns) | .name' <<<"$json")"
sleep_t=$(field clock_nanosleep time_ns) sleep_off=$(field clock_nanosleep off_cpu_ns)
[ "$sleep_t" -ge 300000000 ] || fail "clock_nanosleep took $sleep_t ns"
# all of it but 1 ms off CPU
[ "$((sleep_t - sleep_off))" -lt 1000000 ] || fail "sleep: $sleep_off of $sleep_t ns off CPU"
echo "ok: the sleep's $sleep_t ns: $sleep_off off CPU"
wait_t=$(field wait4 time_ns) wait_off=$(field wait4 off_cpu_ns)
[ "$((wait_off * 100))" -ge "$((wait_t * 95))" ] || fail "wait4: $wait_off of $wait_t ns off CPU"
echo "ok: the shell's wait4 ($wait_t ns): $wait_off off CPU"
read_t=$(field read time_ns) read_off=$(field read off_cpu_ns)
# copying 100 MiB takes the CPU for at least a millisecond however loaded
# the machine is (the copies may be preempted: how much is load's business)
[ "$((read_t - read_off))" -ge 1000000 ] || fail "read: $read_off of $read_t ns off CPU"
echo "ok: dd's reads ($read_t ns): $((read_t - read_off)) on CPU"
"$KANALYZE" t > table.txt
head -n 3 table.txt
grep -q '^Syscall  *Count  *Time(ms)  *OffCPU(ms)  *Avg(ms)' table.txt || fail "no OffCPU column"
# raw_tp: not measured, not shown
"$KBPF" --raw-tp -o raw -- dash -c 'sleep 0.1' || fail "--raw-tp workload"
expect_eq "raw_tp: rows with off_cpu_ns" 0 \
	"$(profile_json raw | jq '[.syscalls[] | select(.off_cpu_ns != null)] | length')"
! grep -q OffCPU <("$KANALYZE" raw) || fail "raw_tp: an OffCPU column"
echo "ok: raw_tp writes no off_cpu_ns and the table has no column for it"
# every output of the trace carries it: CSV, markdown, HTML
expect_eq "CSV: the sleep's off_cpu_ns" "$sleep_off" \
	"$("$KANALYZE" --format=csv t | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
		$1 == "clock_nanosleep" { print $c["off_cpu_ns"] }')"
grep -q '^| Syscall | Count | Time (ms) | Avg (ms) | Retries | Off CPU (ms) |$' \
	<("$KANALYZE" --format=markdown t) || fail "markdown: no Off CPU column"
"$KANALYZE" --html=report.html t
grep -q '<th>Off CPU (ms)</th>' report.html || fail "HTML: no Off CPU column"
echo "ok: CSV, markdown and HTML carry the time off CPU"
