#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze --by=kind and --blocking on the known trace of gen_trace --kinds:
# process a's read and write entries carry `kinds` (its first thread's
# read leaves 5 calls out of them), process b's entries carry none, and b
# has six-element events. Expected (see gen_trace.c):
#   file   write 20 calls 2.00 ms 2 errors
#   pipe   read 40 calls 11.00 ms 7 retries
#   socket read 15 calls 2.00 ms
#   none   getppid 1000, openat 4, futex 3, syscall_999 1 (1008 calls)
#   unknown read 10 (5 left out of a's kinds + 5 of b) 0.84 ms, write 2
# --blocking: one EAGAIN run per descriptor (pipe fd 5: 1 retry; socket fd
# 6: 2 retries), the eventfd's run ends unfinished at its close; the
# futex EAGAIN is not a would-block (the word had changed): no operation.
source "$KPROF_ROOT/tests/lib.sh"
"$BUILD/tests/gen_trace" --kinds k.msgpack
"$BUILD/tests/format_plain" k.msgpack > /dev/null || fail "fixture does not match FORMAT.md"

json=$("$KANALYZE" --by=kind --format=json k.msgpack)
kf() { jq -r --arg k "$1" --arg n "$2" --arg f "$3" \
	'[.kind_profiles[$k].syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$json"; }
expect_eq "file write count" 20 "$(kf file write count)"
expect_eq "file write errors" 2 "$(kf file write errors)"
expect_eq "file write time" 2000000 "$(kf file write time_ns)"
expect_eq "pipe read count" 40 "$(kf pipe read count)"
expect_eq "pipe read retries" 7 "$(kf pipe read retries)"
expect_eq "pipe read time" 11000000 "$(kf pipe read time_ns)"
expect_eq "socket read count" 15 "$(kf socket read count)"
expect_eq "other is empty" 0 "$(jq '.kind_profiles.other.total.count' <<<"$json")"
expect_eq "none total" 1008 "$(jq '.kind_profiles.none.total.count' <<<"$json")"
expect_eq "none keeps latency (getppid p50 known)" true \
	"$(jq '[.kind_profiles.none.syscalls[] | select(.name == "getppid") | .p50_ns != null] | all' <<<"$json")"
expect_eq "unknown read count" 10 "$(kf unknown read count)"
expect_eq "unknown read time" 840000 "$(kf unknown read time_ns)"
expect_eq "unknown write count" 2 "$(kf unknown write count)"
expect_eq "sections add up" 1095 "$(jq '[.kind_profiles[] | .total.count] | add' <<<"$json")"
expect_eq "and so does time" "$(jq .total.time_ns <<<"$json")" \
	"$(jq '[.kind_profiles[] | .total.time_ns] | add' <<<"$json")"
expect_eq "kind rows: no latency" "null null null" \
	"$(jq -r '.kind_profiles.pipe.syscalls[0] | "\(.min_ns) \(.p99_ns) \(.errno)"' <<<"$json")"
# -e narrows the sections like any view
expect_eq "-e read: file section empty" 0 \
	"$("$KANALYZE" --by=kind --format=json -e read k.msgpack | jq '.kind_profiles.file.total.count')"
# table: empty sections are left out, "unknown" is named
"$KANALYZE" --by=kind k.msgpack > table.txt
grep -q '^--- descriptor kind: other ---$' table.txt && fail "empty section printed"
grep -q '^--- descriptor kind not recorded ---$' table.txt || fail "no unknown section"
"$KANALYZE" --by=kind --percentiles k.msgpack |
	awk '/^--- descriptor kind: pipe ---$/ { s = 1 } s && $1 == "read" { print $7, $10; exit }' > p.txt
expect_eq "table: kind rows print - for percentiles" "- -" "$(cat p.txt)"
expect_eq "csv: socket read" "socket,read,0,15,2000000,133333,,,0,0,,,,," \
	"$("$KANALYZE" --by=kind --format=csv k.msgpack | grep '^socket,read,')"

# --blocking, per kind from six-element events
b=$("$KANALYZE" --blocking --format=json k.msgpack)
op() { jq -r --arg k "$1" --arg n "$2" --arg f "$3" \
	'[.operations[] | select((.kind // "-") == $k and .name == $n) | .[$f]] | add // 0' <<<"$b"; }
expect_eq "per kind" kind "$(jq -r .per <<<"$b")"
expect_eq "pipe read ops" 1 "$(op pipe read ops)"
expect_eq "pipe read retries" 1 "$(op pipe read retries)"
expect_eq "pipe read blocked" 2300 "$(op pipe read blocked_ns)"
expect_eq "socket read ops (its own run, not the pipe's)" 1 "$(op socket read ops)"
expect_eq "socket read retries" 2 "$(op socket read retries)"
expect_eq "socket: one op of 2 retries" 1 \
	"$(jq '[.operations[] | select(.kind == "socket") | .retries_per_op["2"]] | add' <<<"$b")"
expect_eq "eventfd run unfinished at close" 1 "$(op other read unfinished)"
expect_eq "futex EAGAIN: no operation" "0 0" "$(op - futex ops) $(op - futex unfinished)"
# an old trace (four-element events): per syscall, as before
old=$("$KANALYZE" --blocking --format=json <("$BUILD/tests/gen_trace" /dev/stdout))
expect_eq "old events: per syscall" syscall "$(jq -r .per <<<"$old")"
"$BUILD/tests/gen_trace" old.msgpack
"$KANALYZE" --blocking old.msgpack | grep >/dev/null '^=== EAGAIN Blocking (from event records, per syscall) ===$' ||
	fail "old trace: table header"
