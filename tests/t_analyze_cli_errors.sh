#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze where it used to answer wrongly with success or flood stderr:
# a file that is no kprof trace (one message, exit 5, not one line per
# byte), damage past the first 10 records of an input (counted), --by=errno
# in every --format, --timeline without events (exit 1, no file), times
# below the table's decimals (never 0.000), the symbol-mode coverage line
# (chosen, or no privilege), and the README's and --help's --assert
# examples on a real Node run. --coverage --pid: t_coverage_pid.sh.
source "$KPROF_ROOT/tests/lib.sh"
GEN=$BUILD/tests/gen_trace
[ -x "$GEN" ] || fail "$GEN not built"
"$GEN" fx.msgpack
fx_size=$(stat -c %s fx.msgpack)

# run_k NAME ARGS...: kanalyze ARGS, stdout to NAME.out, stderr to NAME.err,
# exit status in $rc
run_k() {
	local name=$1
	shift
	rc=0
	"$KANALYZE" "$@" > "$name.out" 2> "$name.err" || rc=$?
}

# ---- not a kprof trace: one message naming what the file starts with ----
for i in $(seq 60); do echo "user$i:x:$i:$i:User $i:/home/user$i:/bin/sh"; done > passwd
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0' > image.png
printf 'hello\tworld "q"\n' | gzip -n > text.gz
printf '\xdd\x7f\xff\xff\xff\xc0' > array.msgpack
foreign() { # FILE START: exit 5, exactly one line on stderr
	run_k foreign "$1"
	expect_eq "$1: exit" 5 "$rc"
	expect_eq "$1: message" "kanalyze: $1: not a kprof trace ($2, not with a msgpack map with a \"type\" key)" "$(cat foreign.err)"
	grep -q '^TOTAL  *0 ' foreign.out || fail "$1: no (empty) profile"
}
foreign passwd 'it starts with the text "user1:x:1:1:User"'
foreign image.png 'it starts with bytes 89 50 4e 47 0d 0a 1a 0a'
foreign text.gz 'its gzip content starts with the text "hello\tworld \"q\"\n"'
foreign array.msgpack 'it starts with bytes dd 7f ff ff ff c0'
# the same with more bytes behind: still one message
for i in $(seq 2000); do cat passwd; done > big.txt
run_k big big.txt
expect_eq "big text file: exit" 5 "$rc"
expect_eq "big text file: stderr lines" 1 "$(wc -l < big.err)"
# JSON names it once, as an input without a stream start (--strict fails)
run_k json --format=json passwd
expect_eq "JSON damaged" '[{"file":"passwd","offset":0,"decompressed":false,"reason":"not a kprof trace (it starts with the text \"user1:x:1:1:User\", not with a msgpack map with a \"type\" key)","no_stream_start":true}]' \
	"$(jq -c .damaged json.out)"
run_k strict --strict passwd
expect_eq "--strict on a foreign file: exit" 3 "$rc"
grep -q -- '--strict: .* 1 inputs without a stream start' strict.err || fail "--strict summary: $(cat strict.err)"
# next to a good trace: the good one is counted, exit 5
run_k mixed passwd fx.msgpack
expect_eq "foreign + good: exit" 5 "$rc"
expect_eq "foreign + good: TOTAL" 1095 "$(awk '$1 == "TOTAL" { print $2 }' mixed.out)"

# ---- damaged kprof traces keep their byte offsets ----
# a cut header is truncated, not foreign
head -c 7 fx.msgpack > cut.msgpack
run_k cut cut.msgpack
expect_eq "cut header: exit" 5 "$rc"
expect_eq "cut header: message" "kanalyze: cut.msgpack: truncated record at byte 0" "$(cat cut.err)"
# one stray byte before a trace: reported, the records after it still count
{ printf 'X'; cat fx.msgpack; } > stray.msgpack
run_k stray stray.msgpack
expect_eq "stray byte: exit" 5 "$rc"
expect_eq "stray byte: message" "kanalyze: stray.msgpack: record is not a map at byte 0" "$(cat stray.err)"
expect_eq "stray byte: TOTAL" 1095 "$(awk '$1 == "TOTAL" { print $2 }' stray.out)"
# text after a trace: 10 damaged records listed, the rest counted
{ cat fx.msgpack; cat passwd; } > tail.msgpack
text_size=$(stat -c %s passwd)
run_k tail tail.msgpack
expect_eq "text after a trace: exit" 5 "$rc"
expect_eq "text after a trace: stderr lines" 11 "$(wc -l < tail.err)"
expect_eq "text after a trace: first" "kanalyze: tail.msgpack: record is not a map at byte $fx_size" "$(head -n 1 tail.err)"
expect_eq "text after a trace: summary" \
	"kanalyze: tail.msgpack: $((text_size - 10)) more damaged records after byte $((fx_size + 9)) (not listed)" \
	"$(tail -n 1 tail.err)"
expect_eq "text after a trace: TOTAL" 1095 "$(awk '$1 == "TOTAL" { print $2 }' tail.out)"

# ---- --by=errno in every format ----
run_k errno_table --by=errno fx.msgpack
expect_eq "errno table" "=== Failed Calls by errno ===|errno                 Calls  Syscalls|ENOENT                    1  openat 1|EBADF                     2  write 2|EAGAIN                    7  read 7|=== End Failed Calls ===|" \
	"$(tr '\n' '|' < errno_table.out)"
run_k errno_json --by=errno --format=json fx.msgpack
expect_eq "errno JSON: exit" 0 "$rc"
expect_eq "errno JSON" '{"failed_calls":10,"errnos":[{"errno":"ENOENT","number":2,"calls":1,"syscalls":[{"name":"openat","nr":257,"calls":1}]},{"errno":"EBADF","number":9,"calls":2,"syscalls":[{"name":"write","nr":1,"calls":2}]},{"errno":"EAGAIN","number":11,"calls":7,"syscalls":[{"name":"read","nr":0,"calls":7}]}]}' \
	"$(jq -c . errno_json.out)"
expect_eq "errno JSON adds up to retries + errors" \
	"$(profile_json fx.msgpack | jq '.total.retries + .total.errors')" "$(jq .failed_calls errno_json.out)"
run_k errno_csv --by=errno --format=csv fx.msgpack
expect_eq "errno CSV" "errno,number,syscall,nr,calls|ENOENT,2,openat,257,1|EBADF,9,write,1,2|EAGAIN,11,read,0,7|" \
	"$(tr '\n' '|' < errno_csv.out)"
run_k errno_md --by=errno --format=markdown fx.msgpack
expect_eq "errno markdown" "| errno | Calls | Syscalls |
|:--|--:|:--|
| ENOENT | 1 | openat 1 |
| EBADF | 2 | write 2 |
| EAGAIN | 7 | read 7 |" "$(cat errno_md.out)"
run_k errno_none --by=errno --format=json -e getppid fx.msgpack   # getppid never fails
expect_eq "errno JSON without failures" '{"failed_calls":0,"errnos":[]}' "$(jq -c . errno_none.out)"
run_k errno_none_table --by=errno -e getppid fx.msgpack
expect_eq "errno table without failures" "No call failed." "$(sed -n 3p errno_none_table.out)"

# ---- --timeline: no events, or none through the filters: exit 1, no file ----
"$GEN" --process=a noevents.msgpack
run_k tl_none --timeline=none.json noevents.msgpack
expect_eq "timeline without events: exit" 1 "$rc"
expect_eq "timeline without events: message" \
	"kanalyze: --timeline: the trace has no events: record them with KPROF_EVENTS=1 or kbpf-trace --events; none.json not written" \
	"$(cat tl_none.err)"
[ ! -e none.json ] || fail "timeline without events: none.json written"
run_k tl_filtered --timeline=filtered.json -e mkdir fx.msgpack
expect_eq "timeline, every event filtered out: exit" 1 "$rc"
expect_eq "timeline, every event filtered out: message" \
	"kanalyze: --timeline: no event of the trace passes the filters; filtered.json not written" \
	"$(cat tl_filtered.err)"
[ ! -e filtered.json ] || fail "filtered.json written"
run_k tl_ok --timeline=ok.json fx.msgpack
expect_eq "timeline with events: exit" 0 "$rc"
expect_eq "timeline with events: slices" 3 "$(jq '[.traceEvents[] | select(.ph == "X")] | length' ok.json)"

# ---- times below the table's decimals: two significant digits ----
row() { awk -v n="$1" '$1 == n { print $4, $5 }' "$2"; }
"$KANALYZE" fx.msgpack > table.txt
expect_eq "getppid: 0.25 ms total, 250 ns average" "0.25 0.00025" "$(row getppid table.txt)"
expect_eq "syscall_999: one 10 ns call" "0.000010 0.000010" "$(row syscall_999 table.txt)"
"$KANALYZE" --percentiles fx.msgpack > pct.txt
expect_eq "syscall_999 percentiles (us)" "0.01 0.01 0.01 0.01" "$(awk '$1 == "syscall_999" { print $7, $8, $9, $10 }' pct.txt)"
# a real run: no row with time shows 0 in Time(ms) or Avg(ms)
KPROF_OUT=$PWD/real LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" 2000 > /dev/null
"$KANALYZE" real > real.txt
profile_json real | jq -r '.syscalls[] | select(.time_ns > 0) | .name' > timed.txt
[ -s timed.txt ] || fail "no syscall with time in the real trace"
while read -r name; do
	cells=$(row "$name" real.txt)
	case "$cells" in
	*[1-9]*' '*[1-9]*) ;;
	*) fail "$name: took time but shows '$cells'" ;;
	esac
done < timed.txt
echo "ok: $(wc -l < timed.txt) timed rows of a real run show non-zero Time(ms) and Avg(ms)"

# ---- the symbol-mode coverage line names the real reason (rewrite mode
# asked for by name where it cannot run; auto would run patch mode) ----
KPROF_HOOK=symbols KPROF_OUT=$PWD/sym LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" 10 > /dev/null
"$KANALYZE" sym > sym.txt
expect_eq "KPROF_HOOK=symbols: coverage line" \
	"coverage: libc exported functions only — futex and internal calls are not seen (symbol mode chosen: KPROF_HOOK=symbols); use kbpf-trace to see them, or unset KPROF_HOOK" \
	"$(sed -n 2p sym.txt)"
unprivileged="coverage: libc exported functions only — futex and internal calls are not seen (rewrite mode unavailable: cannot map the lowest page: Operation not permitted (needs CAP_SYS_RAWIO or vm.mmap_min_addr=0)); use kbpf-trace to see them"
if [ "$(uname -m)" != x86_64 ] || [ "$(cat /proc/sys/vm/mmap_min_addr)" = 0 ]; then
	echo "note: no unprivileged case here (not x86_64, or vm.mmap_min_addr is 0)"
elif [ "$(id -u)" -ne 0 ]; then
	KPROF_HOOK=rewrite KPROF_OUT=$PWD/auto LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" 10 > /dev/null
	expect_eq "not root: coverage line" "$unprivileged" "$("$KANALYZE" auto | sed -n 2p)"
elif command -v capsh > /dev/null; then
	capsh --drop=cap_sys_rawio -- -c "KPROF_HOOK=rewrite KPROF_OUT=$PWD/auto LD_PRELOAD=$SHIM $BUILD/tests/getppid_loop 10" > /dev/null
	expect_eq "root without CAP_SYS_RAWIO: coverage line" "$unprivileged" "$("$KANALYZE" auto | sed -n 2p)"
else
	echo "note: capsh missing: the unprivileged case is not tried"
fi

# ---- --assert ----
run_k assert_fail --assert 'pending_pipe_readers==1' --assert 'open_fds.pipe==0' fx.msgpack
expect_eq "failing assertion: exit" 4 "$rc"
expect_eq "failing assertion: message" "kanalyze: assertion failed: open_fds.pipe==0 (open_fds.pipe is 1)" "$(cat assert_fail.err)"
# The README's example (and --help's) hold on an ordinary Node run, whose
# libuv pipes are still open at exit.
if ! command -v node > /dev/null; then
	echo "note: node missing: the README's --assert example is not run"
	exit 0
fi
KPROF_OUT=$PWD/node LD_PRELOAD=$SHIM node "$KPROF_ROOT/programs/node/host.js" > node.out
grep -q '^done$' node.out || fail "the node workload did not finish"
readme=$(sed -n "/^    build\/kanalyze --strict --assert /,/ T\$/p" "$KPROF_ROOT/README.md" |
	sed 's/\\$//; s/^ *//' | tr '\n' ' ')
[ -n "$readme" ] || fail "no --assert example in README.md"
echo "README example: $readme"
asserts=$(grep -o "\-\-assert '[^']*'" <<<"$readme" | sed "s/--assert '\\(.*\\)'/\\1/")
expect_eq "README example's assertions" 3 "$(wc -l <<<"$asserts")"
args=(--strict)
while read -r a; do args+=(--assert "$a"); done <<<"$asserts"
run_k readme "${args[@]}" node
expect_eq "README --assert example on a Node run: exit" 0 "$rc"
help=$("$KANALYZE" --help | grep "^  kanalyze --assert ")
help_asserts=$(grep -o "\-\-assert '[^']*'" <<<"$help" | sed "s/--assert '\\(.*\\)'/\\1/")
args=()
while read -r a; do args+=(--assert "$a"); done <<<"$help_asserts"
run_k help "${args[@]}" node
expect_eq "--help --assert example on a Node run: exit" 0 "$rc"
