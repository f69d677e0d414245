# SPDX-License-Identifier: MIT
# tier: check
# Exact counts: a C program calling getppid() 1000 times shows 1000.
. "$KPROF_ROOT/tests/lib.sh"
out=$(LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/getppid_loop" 1000)
plain=$("$BUILD/tests/getppid_loop" 1000)
expect_eq "program output unchanged" "$plain" "$out"
json=$(profile_json trace)
expect_eq "getppid count" 1000 "$(syscall_field "$json" getppid count)"
expect_eq "getppid errors" 0 "$(syscall_field "$json" getppid errors)"
expect_eq "getppid retries" 0 "$(syscall_field "$json" getppid retries)"
expect_eq "processes" 1 "$(jq '.processes | length' <<<"$json")"
expect_eq "exit status recorded" 0 "$(jq '.processes[0].exit_status' <<<"$json")"
# time is sane, never checked for value: positive, min <= avg <= max
jq -e '.syscalls[] | select(.name == "getppid") |
	.time_ns > 0 and .min_ns > 0 and .min_ns <= .avg_ns and .avg_ns <= .max_ns and
	.p50_ns >= .min_ns and .p99_ns <= .max_ns' <<<"$json" >/dev/null ||
	fail "getppid times not sane: $(jq -c '.syscalls[] | select(.name == "getppid")' <<<"$json")"
echo "ok: times sane"
