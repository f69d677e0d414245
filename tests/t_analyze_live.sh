#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze --listen: a Node process and a C process stream to one listener
# at the same time; the final merged profile equals the profile of the
# same run read back from the files the listener saved (--save), and the C
# process's counts equal those of the same program traced into files.
source "$KPROF_ROOT/tests/lib.sh"
command -v node >/dev/null || skip "node not installed"
sock=$PWD/k.sock
"$KANALYZE" --listen=unix:$sock --save=saved --refresh=200 --format=json \
	> live.json 2> live.err &
listener=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "listener did not create $sock: $(cat live.err)"
LD_PRELOAD=$SHIM KPROF_OUT=unix:$sock node -e '
	const fs = require("fs");
	for (let i = 0; i < 200; i++) fs.readFileSync("/etc/hostname");
	setTimeout(() => {}, 300);' 2> node.err &
node_pid=$!
LD_PRELOAD=$SHIM KPROF_OUT=unix:$sock "$BUILD/tests/getppid_loop" 3000 2> c.err > /dev/null
wait $node_pid
rc=0; wait $listener || rc=$?
expect_eq "listener exit" 0 "$rc"
! grep -q "cannot connect" node.err c.err || fail "a producer fell back to a file"
expect_eq "saved connections" 2 "$(ls saved | wc -l)"
files=$("$KANALYZE" --format=json saved)
filter='{syscalls: [.syscalls[] | {name, count, time_ns, retries, errors}], total: {count: .total.count, time_ns: .total.time_ns}, processes: (.processes | length)}'
expect_eq "live profile = profile of the saved files" \
	"$(jq -cS "$filter" <<<"$files")" "$(jq -cS "$filter" live.json)"
expect_eq "processes merged" 2 "$(jq '.processes | length' live.json)"
# The C process is deterministic: the same counts as a run into files.
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/filetrace "$BUILD/tests/getppid_loop" 3000 > /dev/null
by_name='[.syscalls[] | {name, count}] | sort_by(.name)'
c_live=$(jq -c '.processes[] | select(.argv[0] | endswith("getppid_loop"))' live.json)
c_file=$(jq -c '.processes[0]' <<<"$(profile_json filetrace)")
expect_eq "C process counts live = file" "$(jq -c "$by_name" <<<"$c_file")" \
	"$(jq -c "$by_name" <<<"$c_live")"
expect_eq "getppid count" 3000 "$(jq '[.syscalls[] | select(.name == "getppid") | .count] | add' <<<"$c_live")"
# Without a listener the shim falls back to a directory with one warning.
mkdir fb && cd fb
LD_PRELOAD=$SHIM KPROF_OUT=unix:$PWD/nobody.sock "$BUILD/tests/getppid_loop" 10 > /dev/null 2> err
expect_eq "fallback warnings" 1 "$(grep -c 'cannot connect' err)"
expect_eq "fallback trace getppid" 10 "$(syscall_field "$(profile_json kprof-trace)" getppid count)"
