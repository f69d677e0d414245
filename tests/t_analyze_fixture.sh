#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze on the known trace of tests/gen_trace.c: exact counts in every
# output format, last aggregate wins, sort orders, --by, gzip, directories,
# exit statuses. The fixture's numbers (see gen_trace.c):
#   read 65 calls 13.84 ms 7 retries; futex 3 / 9.00 ms; write 22 / 2.10 ms
#   2 errors; openat 4 / 0.40 ms 1 error; getppid 1000 / 0.25 ms;
#   syscall_999 1 / 10 ns. TOTAL 1095 calls, 25590010 ns, 7 retries.
source "$KPROF_ROOT/tests/lib.sh"
GEN=$BUILD/tests/gen_trace
[ -x "$GEN" ] || fail "$GEN not built (make $GEN)"
[ -x "$KANALYZE" ] || fail "$KANALYZE not built"

"$GEN" fx.msgpack
"$GEN" --gzip fx.msgpack.gz
"$GEN" --gzip --two-members fx2.msgpack.gz
mkdir -p dir/sub
"$GEN" --process=a dir/a.msgpack
"$GEN" --gzip --process=b dir/sub/b.msgpack.gz
echo "not a trace" > dir/README.txt

# ---- table ----
"$KANALYZE" fx.msgpack > table.txt
expect_eq "table first line" "=== Syscall Profile ===" "$(sed -n 1p table.txt)"
# the header's hook_mode: what the shim could see, above the table
# (the fixture's coverage sentence gives no reason for symbol mode)
expect_eq "coverage line" "coverage: libc exported functions only — futex and internal calls are not seen; use kbpf-trace to see them" "$(sed -n 2p table.txt)"
expect_eq "table header" "Syscall            Count     Time(ms)    Avg(ms)    Retries" "$(sed -n 3p table.txt)"
expect_eq "table last line" "=== End Profile ===" "$(tail -n 1 table.txt)"
row() { awk -v n="$1" '$1 == n { $1 = ""; $2 = ""; print substr($0, 3) }' table.txt | tr -s ' '; }
expect_eq "read row" "65 13.84 0.213 7" "$(row read)"
expect_eq "futex row" "3 9.00 3.000 0" "$(row futex)"
expect_eq "write row (last aggregate wins)" "22 2.10 0.095 0" "$(row write)"
# a time the usual decimals round to zero gets two significant digits
expect_eq "getppid row (250 ns average)" "1000 0.25 0.00025 0" "$(row getppid)"
expect_eq "unknown nr row (10 ns)" "1 0.000010 0.000010 0" "$(row syscall_999)"
expect_eq "TOTAL row" "1095 25.59 0.023 7" "$(awk '$1 == "TOTAL" { print $2, $3, $4, $5 }' table.txt)"
order() { awk '/^-+$/ { d++; next } d == 1 && $2 ~ /^\([0-9]+\)$/ { print $1 }' | tr '\n' ' '; }
expect_eq "sorted by time" "read futex write openat getppid syscall_999 " "$(order < table.txt)"
grep -qx 'Pending pipe readers: 1, writers: 2' table.txt || fail "pending footer"
grep -qx 'Open at exit: pipe 1, socket 2, file 3, other 0 (2 of 2 streams exited)' table.txt || fail "fds footer"
grep -qx 'Dropped: 2 records, 10 events (ring buffer full)' table.txt || fail "drop footer"
grep -q '^Merged: 2 processes, 2 streams, 4 threads; preload: libc exported functions (fixture)$' table.txt || fail "merged footer"
# columns stay aligned: every row as wide as the header
w=$(sed -n 3p table.txt | wc -c)
awk -v w="$w" '/^(read|futex|write|openat|getppid|syscall_999|TOTAL) / && length($0) + 1 != w { exit 1 }' table.txt || fail "misaligned rows"

# ---- sort orders and top ----
expect_eq "--sort=count" "getppid read write openat futex syscall_999 " "$("$KANALYZE" --sort=count fx.msgpack | order)"
expect_eq "--sort=name" "futex getppid openat read syscall_999 write " "$("$KANALYZE" --sort=name fx.msgpack | order)"
expect_eq "--sort=avg" "futex read openat write getppid syscall_999 " "$("$KANALYZE" --sort=avg fx.msgpack | order)"
# ties keep syscall number order
expect_eq "--sort=retries" "read write getppid futex openat syscall_999 " "$("$KANALYZE" --sort=retries fx.msgpack | order)"
expect_eq "--sort=errors" "write openat" "$("$KANALYZE" --sort=errors fx.msgpack | order | cut -d' ' -f1-2)"
expect_eq "--top=2" "read futex " "$("$KANALYZE" --top=2 fx.msgpack | order)"
"$KANALYZE" --top=2 fx.msgpack | grep >/dev/null -x '(4 more syscalls not shown)' || fail "--top note"

# ---- JSON ----
json=$(profile_json fx.msgpack)
expect_eq "json read count" 65 "$(syscall_field "$json" read count)"
expect_eq "json read time_ns" 13840000 "$(syscall_field "$json" read time_ns)"
expect_eq "json read retries" 7 "$(syscall_field "$json" read retries)"
expect_eq "json write count (last wins)" 22 "$(syscall_field "$json" write count)"
expect_eq "json write errors" 2 "$(syscall_field "$json" write errors)"
expect_eq "json openat nr" 257 "$(syscall_field "$json" openat nr)"
expect_eq "json syscall_999" 1 "$(syscall_field "$json" syscall_999 count)"
expect_eq "json errno EAGAIN" 7 "$(jq '.syscalls[] | select(.name == "read") | .errno.EAGAIN' <<<"$json")"
expect_eq "json errno EBADF" 2 "$(jq '.syscalls[] | select(.name == "write") | .errno.EBADF' <<<"$json")"
expect_eq "json total" "1095 25590010 7 3" "$(jq -r '.total | "\(.count) \(.time_ns) \(.retries) \(.errors)"' <<<"$json")"
p50=$(jq '.syscalls[] | select(.name == "getppid") | .p50_ns' <<<"$json")
[ "$p50" -ge 224 ] && [ "$p50" -le 260 ] || fail "getppid p50 $p50 outside its bucket"
jq -e '[.syscalls[] | has("p50_ns") and has("p90_ns") and has("p99_ns") and has("min_ns") and has("max_ns") and has("avg_ns")] | all' <<<"$json" >/dev/null || fail "percentile keys missing"
jq -e '[.. | numbers | . == floor] | all' <<<"$json" >/dev/null || fail "non-integer number in JSON"
expect_eq "json processes" \
	'100 1 /usr/bin/fixture-a start a1a2a3a4a5a6a7a8 0000000000000000 preload 0 2 1080|101 100 /usr/bin/fixture-b fork 0000000000b1b2b3 a1a2a3a4a5a6a7a8 preload 3 2 15|' \
	"$(jq -r '.processes[] | "\(.pid) \(.ppid) \(.exe) \(.origin) \(.stream) \(.parent_stream) \(.producer) \(.exit_status) \(.threads) \(.total.count)"' <<<"$json" | tr '\n' '|')"
expect_eq "json argv" '["/usr/bin/fixture-a","--alpha"]' "$(jq -c '.processes[0].argv' <<<"$json")"
expect_eq "json fds_at_exit" '{"file":0,"pipe":0,"socket":2,"other":0}' "$(jq -c '.processes[1].fds_at_exit' <<<"$json")"
expect_eq "json process syscalls" "futex read openat write syscall_999" "$(jq -r '[.processes[1].syscalls[].name] | join(" ")' <<<"$json")"
expect_eq "json pending" "1 2" "$(jq -r '"\(.pending_pipe_readers) \(.pending_pipe_writers)"' <<<"$json")"
expect_eq "json drops" '{"records":2,"events":10,"bytes":300,"reasons":["ring buffer full"]}' "$(jq -c .drops <<<"$json")"
expect_eq "json damaged" '[]' "$(jq -c .damaged <<<"$json")"
expect_eq "json --top=1" 1 "$("$KANALYZE" --format=json --top=1 fx.msgpack | jq '.syscalls | length')"
expect_eq "json --by=thread" "2 2" "$("$KANALYZE" --format=json --by=thread fx.msgpack | jq -r '[.processes[].thread_profiles | length] | join(" ")')"

# ---- --by ----
"$KANALYZE" --by=process fx.msgpack > byproc.txt
expect_eq "--by=process sections" 2 "$(grep -c '^--- pid' byproc.txt)"
grep -q '^--- pid 101 (ppid 100, fork) /usr/bin/fixture-b --beta ---$' byproc.txt || fail "process section label"
expect_eq "--by=process totals" "1080 15 " "$(awk '$1 == "TOTAL" { printf "%s ", $2 }' byproc.txt)"
grep -q '^Exit status 3; open at exit: pipe 0, socket 2, file 0, other 0; pending pipe readers: 0, writers: 2$' byproc.txt || fail "process exit line"
"$KANALYZE" --by=thread fx.msgpack > bythread.txt
expect_eq "--by=thread sections" 4 "$(grep -c '^--- pid' bythread.txt)"
expect_eq "--by=thread totals" "70 1010 9 6 " "$(awk '$1 == "TOTAL" { printf "%s ", $2 }' bythread.txt)"
"$KANALYZE" --errors --percentiles fx.msgpack > errors.txt
grep -q '^    errno: EAGAIN 7$' errors.txt || fail "--errors breakdown"
grep -q 'p50(us)' errors.txt || fail "--percentiles columns"
# a percentile is what the histogram knows of it: its bucket, lo-hi (us),
# which holds the JSON's estimate
read -r lo hi <<<"$(awk '$1 == "getppid" { split($8, r, "-"); print r[1], r[2] }' errors.txt)"
awk -v lo="$lo" -v hi="$hi" -v p="$p50" 'BEGIN { exit !(lo < hi && lo * 1000 <= p && p <= hi * 1000) }' ||
	fail "getppid p50 cell '$lo-$hi' us is not a range holding $p50 ns"

# ---- CSV ----
"$KANALYZE" --format=csv fx.msgpack > out.csv
expect_eq "csv header" "name,nr,count,time_ns,avg_ns,min_ns,max_ns,retries,errors,p50_ns,p90_ns,p99_ns,off_cpu_ns,errno" "$(head -n 1 out.csv)"
expect_eq "csv lines" 7 "$(wc -l < out.csv)"
# (the shim measures no time off CPU: off_cpu_ns empty)
expect_eq "csv read" "read,0,65,13840000,212923,20000,400000,7,0,0,0,0,,EAGAIN=7" "$(grep '^read,' out.csv)"
awk -F, 'NF != 14 { exit 1 }' out.csv || fail "csv field count"
"$KANALYZE" --format=csv --by=process fx.msgpack > proc.csv
expect_eq "csv by process header" "pid,stream,exe,name" "$(head -n 1 proc.csv | cut -d, -f1-4)"
expect_eq "csv by process lines" 9 "$(wc -l < proc.csv)"
expect_eq "csv by thread lines" 10 "$("$KANALYZE" --format=csv --by=thread fx.msgpack | wc -l)"

# ---- markdown ----
"$KANALYZE" --format=markdown fx.msgpack > out.md
grep -qx '| Syscall | Count | Time (ms) | Avg (ms) | Retries |' out.md || fail "markdown header"
grep -qx '|:--|--:|--:|--:|--:|' out.md || fail "markdown alignment row"
grep -qx '| read (0) | 65 | 13.84 | 0.213 | 7 |' out.md || fail "markdown read row"
grep -qx '| getppid (110) | 1000 | 0.25 | 0.00025 | 0 |' out.md || fail "markdown getppid row"
grep -qx '| syscall_999 (999) | 1 | 0.000010 | 0.000010 | 0 |' out.md || fail "markdown syscall_999 row"
grep -qx '| \*\*TOTAL\*\* | \*\*1095\*\* | \*\*25.59\*\* | \*\*0.023\*\* | \*\*7\*\* |' out.md || fail "markdown total row"
grep -qx -- '- Pending pipe readers: 1, writers: 2' out.md || fail "markdown footer"
expect_eq "markdown --by=process headings" 2 "$("$KANALYZE" --format=markdown --by=process fx.msgpack | grep -c '^### pid')"

# ---- same numbers from gzip, concatenated members, a directory, twice ----
want=$(jq -c '{syscalls, total}' <<<"$json" | md5sum)
same() { expect_eq "$1" "$want" "$(profile_json "${@:2}" | jq -c '{syscalls, total}' | md5sum)"; }
same "gzip = plain" fx.msgpack.gz
same "two gzip members = plain" fx2.msgpack.gz
same "directory = plain" dir
same "same file twice = once" fx.msgpack fx.msgpack.gz

# ---- unknown record types are skipped and counted ----
"$GEN" --unknown unknown.msgpack
"$KANALYZE" unknown.msgpack > unknown.txt || fail "unknown record type: exit $?"
grep -qx 'Skipped: 1 records of unknown type' unknown.txt || fail "unknown record footer"
expect_eq "unknown records in JSON" 1 "$(profile_json unknown.msgpack | jq .counts.unknown_records)"

# ---- damage and exit statuses ----
cp fx.msgpack bad.msgpack
printf '\xc1' >> bad.msgpack
rc=0; "$KANALYZE" bad.msgpack > bad.txt 2> bad.err || rc=$?
expect_eq "corrupt trace exit" 5 "$rc"
end=$(stat -c %s fx.msgpack)
grep -q "bad.msgpack: invalid msgpack byte 0xc1 at byte $end in the record at byte $end\$" bad.err || fail "corrupt message: $(cat bad.err)"
expect_eq "corrupt trace still counts" "1095" "$(awk '$1 == "TOTAL" { print $2 }' bad.txt)"
head -c 2000 fx.msgpack > cut.msgpack
rc=0; "$KANALYZE" --format=json cut.msgpack > cut.json 2> cut.err || rc=$?
expect_eq "truncated trace exit" 5 "$rc"
grep -q 'cut.msgpack: truncated record at byte 1891$' cut.err || fail "truncation message: $(cat cut.err)"
expect_eq "truncated JSON damaged" '[{"file":"cut.msgpack","offset":1891,"decompressed":false,"reason":"truncated record","no_stream_start":false}]' "$(jq -c .damaged cut.json)"
head -c $(( $(stat -c %s fx.msgpack.gz) / 2 )) fx.msgpack.gz > cut.msgpack.gz
rc=0; "$KANALYZE" cut.msgpack.gz > /dev/null 2> cutgz.err || rc=$?
expect_eq "truncated gzip exit" 5 "$rc"
grep -q 'of the decompressed stream$' cutgz.err || fail "gzip truncation message: $(cat cutgz.err)"

rc=0; "$KANALYZE" --format=yaml fx.msgpack 2> usage.err || rc=$?
expect_eq "bad --format exit" 2 "$rc"
expect_eq "usage error: the message and GNU's pointer to --help" \
	"Try 'kanalyze --help' for more information." "$(sed -n 2p usage.err)"
expect_eq "usage error is two lines" 2 "$(wc -l < usage.err)"
rc=0; "$KANALYZE" --no-such-option fx.msgpack 2>/dev/null || rc=$?
expect_eq "unknown option exit" 2 "$rc"
rc=0; "$KANALYZE" --top=x fx.msgpack 2>/dev/null || rc=$?
expect_eq "bad --top exit" 2 "$rc"
rc=0; "$KANALYZE" 2>/dev/null || rc=$?
expect_eq "no path exit" 2 "$rc"
rc=0; "$KANALYZE" missing.msgpack 2>/dev/null || rc=$?
expect_eq "missing file exit" 1 "$rc"
rc=0; "$KANALYZE" missing.msgpack fx.msgpack >/dev/null 2>&1 || rc=$?
expect_eq "missing + good file exit" 5 "$rc"
mkdir empty
rc=0; "$KANALYZE" empty 2>/dev/null || rc=$?
expect_eq "directory without traces exit" 1 "$rc"
: > zero.msgpack
# an empty file is a process whose trace never arrived: damaged input
rc=0; "$KANALYZE" zero.msgpack > zero.txt 2> zero.err || rc=$?
expect_eq "empty file exit" 5 "$rc"
expect_eq "empty file message" "kanalyze: zero.msgpack: empty trace file: the process wrote nothing (killed before its first flush, or its disk was full)" "$(cat zero.err)"
grep -q '^TOTAL  *0 ' zero.txt || fail "empty file profile"
"$KANALYZE" --help > help.txt
grep -q '^Examples:' help.txt && grep -q '^Exit status:' help.txt || fail "--help lacks examples or exit status"
"$KANALYZE" --version | grep >/dev/null '^kanalyze' || fail "--version"
echo "all fixture checks passed"
