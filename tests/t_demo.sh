#!/bin/bash
# SPDX-License-Identifier: MIT
# The README's first command, `make demo`, past its package installation:
# scripts/demo.sh profiles a real Node process with kprof and prints its
# summary and the profile of each process. Checked: the workload finished, both
# profiles are printed, and they hold the Node parent, its child process
# and its worker thread.
source "$KPROF_ROOT/tests/lib.sh"
KPROF_DEMO_BUILD=$BUILD KPROF_DEMO_OUT=$PWD/trace sh "$KPROF_ROOT/scripts/demo.sh" > out 2> err ||
	fail "demo failed: $(tail -5 err)"
cat out
grep -qx done out || fail "the Node workload did not finish"
grep -q '^kprof: node exited with status 0 after [0-9.]* s (wall clock) on [0-9]* CPUs$' out ||
	fail "no kprof header"
grep -q '^% time     seconds  usecs/call     calls    errors   retries syscall$' out ||
	fail "no summary table"
grep -q '^Calls that wait by nature' out || fail "no block of the waits"
expect_eq "per-process profile printed" 1 "$(grep -c '^=== Syscall Profile ===$' out)"
grep -q '^Merged: 2 processes, 3 streams' out || fail "not the parent and its child (forked, then exec'd: two streams): $(grep '^Merged' out)"
json=$(profile_json trace)
[ "$(jq '[.processes[].threads | length] | add' <<<"$json")" -ge 3 ] ||
	fail "no worker thread in the trace"
for sc in read write openat clone3; do
	[ "$(syscall_field "$json" "$sc" count)" -gt 0 ] || fail "no $sc in the demo's profile"
done
echo "ok: demo"
