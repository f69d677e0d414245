#!/bin/bash
# SPDX-License-Identifier: MIT
# The README's first command, `make demo`, past its package installation:
# scripts/demo.sh profiles a real Node process and prints the merged
# profile and one per process. Checked: the workload finished, both
# profiles are printed, and they hold the Node parent, its child process
# and its worker thread.
source "$KPROF_ROOT/tests/lib.sh"
KPROF_DEMO_BUILD=$BUILD KPROF_DEMO_OUT=$PWD/trace sh "$KPROF_ROOT/scripts/demo.sh" > out 2> err ||
	fail "demo failed: $(tail -5 err)"
cat out
grep -qx done out || fail "the Node workload did not finish"
expect_eq "profiles printed" 2 "$(grep -c '^=== Syscall Profile ===$' out)"
grep -q '^Merged: 2 processes, 3 streams' out || fail "not the parent and its child (forked, then exec'd: two streams): $(grep '^Merged' out)"
json=$(profile_json trace)
[ "$(jq '[.processes[].threads | length] | add' <<<"$json")" -ge 3 ] ||
	fail "no worker thread in the trace"
for sc in read write openat clone3; do
	[ "$(syscall_field "$json" "$sc" count)" -gt 0 ] || fail "no $sc in the demo's profile"
done
echo "ok: demo"
