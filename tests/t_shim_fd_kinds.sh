# SPDX-License-Identifier: MIT
# tier: check
# The descriptor-kind breakdown (docs/FORMAT.md `kinds`): a program reads
# an exact number of times from pipes, a FIFO, a socketpair, a regular
# file, /dev/null, an fopen()ed file (classified lazily), a pipe dup2()ed
# onto a file's number, an eventfd, a closed descriptor and an empty
# non-blocking pipe (EAGAIN). kanalyze --by=kind must show exactly the
# counts the program says it made, with and without event records, and
# --blocking must put the EAGAIN run under pipe.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/fd_kinds

# want KEY: the program's own count
want() { sed -n "s/^$1=//p" out.txt; }
# kind_field JSON KIND SYSCALL FIELD: a counter of a --by=kind row (0 if absent)
kind_field() {
	jq -r --arg k "$2" --arg n "$3" --arg f "$4" \
		'[.kind_profiles[$k].syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$1"
}

check_trace() {
	local trace=$1 json
	json=$("$KANALYZE" --by=kind --format=json "$trace")
	expect_eq "read on pipes" "$(want read.pipe)" "$(kind_field "$json" pipe read count)"
	expect_eq "EAGAIN retries on pipes" "$(want read.pipe.retries)" "$(kind_field "$json" pipe read retries)"
	expect_eq "read on sockets" "$(want read.socket)" "$(kind_field "$json" socket read count)"
	expect_eq "read on files (file, /dev/null, fopen)" "$(want read.file)" "$(kind_field "$json" file read count)"
	expect_eq "read on other (eventfd, EBADF)" "$(want read.other)" "$(kind_field "$json" other read count)"
	expect_eq "EBADF read errors under other" "$(want read.other.errors)" "$(kind_field "$json" other read errors)"
	expect_eq "retries only on pipes" "$(want read.pipe.retries)" \
		"$(jq '[.kind_profiles[] | .syscalls[] | select(.name == "read") | .retries] | add' <<<"$json")"
	expect_eq "read calls in all" "$(want read)" "$(syscall_field "$json" read count)"
	expect_eq "no read of unknown kind" 0 "$(kind_field "$json" unknown read count)"
	# the sections add up to the whole profile
	expect_eq "sections add up to the total" "$(jq .total.count <<<"$json")" \
		"$(jq '[.kind_profiles[] | .total.count] | add' <<<"$json")"
	expect_eq "kind rows have no latency distribution" null \
		"$(jq '.kind_profiles.pipe.syscalls[0].p50_ns' <<<"$json")"
	# the other formats print the same sections
	"$KANALYZE" --by=kind "$trace" > table.txt
	grep -q '^--- descriptor kind: pipe ---$' table.txt || fail "no pipe section in the table"
	awk '/^--- descriptor kind: socket ---$/ { s = 1 } s && $1 == "read" { print $3; exit }' table.txt > n.txt
	expect_eq "table: read on sockets" "$(want read.socket)" "$(cat n.txt)"
	expect_eq "csv: read on files" "$(want read.file)" \
		"$("$KANALYZE" --by=kind --format=csv "$trace" | awk -F, '$1 == "file" && $2 == "read" { print $4 }')"
	"$KANALYZE" --by=kind --format=markdown "$trace" | grep >/dev/null '^### Descriptor kind: other$' ||
		fail "no other section in markdown"
}

mkdir counts events
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" "$PWD/counts" > out.txt || fail "program failed: $(cat out.txt)"
cat out.txt
check_trace trace
"$KANALYZE" --blocking trace | grep >/dev/null 'No event records' || fail "--blocking without events should say so"

# with event records: the same counts, and the EAGAIN run is one operation
# on a pipe
rm -rf trace.ev
LD_PRELOAD=$SHIM KPROF_EVENTS=1 KPROF_OUT=$PWD/trace.ev "$prog" "$PWD/events" > out.txt ||
	fail "program failed with events: $(cat out.txt)"
check_trace trace.ev
blocking=$("$KANALYZE" --blocking --format=json trace.ev)
echo "$blocking"
expect_eq "blocking is per kind" kind "$(jq -r .per <<<"$blocking")"
op() { jq -r --arg f "$1" '[.operations[] | select(.kind == "pipe" and .name == "read") | .[$f]] | add // 0' <<<"$blocking"; }
expect_eq "pipe read operations" "$(want eagain_ops)" "$(op ops)"
expect_eq "pipe read retries" "$(want read.pipe.retries)" "$(op retries)"
expect_eq "no unfinished operation" 0 "$(op unfinished)"
expect_eq "one operation of 17-32 retries" 1 \
	"$(jq '[.operations[] | select(.kind == "pipe") | .retries_per_op["17-32"]] | add' <<<"$blocking")"
expect_eq "no other kind blocked" 1 "$(jq '.operations | length' <<<"$blocking")"
"$KANALYZE" --blocking trace.ev | grep -Eq '^pipe +read \(0\) +1 +25 ' || fail "table: pipe read row"
# events carry fd and kind: the filters rebuild the kinds from them
json=$("$KANALYZE" --by=kind --format=json --succeeded trace.ev)
expect_eq "from events (--succeeded): pipe reads" "$(( $(want read.pipe) - $(want read.pipe.retries) ))" \
	"$(kind_field "$json" pipe read count)"

# an old trace without kinds: --by=kind refuses with a reason
"$KANALYZE" --by=kind "$BUILD/no-such-trace" 2>/dev/null && fail "a missing trace should fail"
"$BUILD/tests/gen_trace" old.msgpack
if "$KANALYZE" --by=kind old.msgpack > /dev/null 2> err.txt; then fail "--by=kind on a trace without kinds"; fi
grep -q 'do not record the kind of descriptor' err.txt || fail "no reason given: $(cat err.txt)"
echo "ok: trace without kinds refused: $(cat err.txt)"
