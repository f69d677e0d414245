# SPDX-License-Identifier: MIT
# tier: check
# A non-blocking read of an empty pipe, N times: N retries exactly, and the
# program saw EAGAIN every time (it checks and says so).
. "$KPROF_ROOT/tests/lib.sh"
out=$(LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/eagain_pipe" 500)
echo "$out"
grep -qx 'eagain=500' <<<"$out" || fail "program did not see EAGAIN 500 times: $out"
json=$(profile_json trace)
expect_eq "read count" 500 "$(syscall_field "$json" read count)"
expect_eq "read retries" 500 "$(syscall_field "$json" read retries)"
expect_eq "read errors (EAGAIN is a retry, not an error)" 0 "$(syscall_field "$json" read errors)"
expect_eq "read errno EAGAIN" 500 "$(jq '[.syscalls[] | select(.name == "read") | .errno.EAGAIN] | add' <<<"$json")"
expect_eq "total retries" 500 "$(jq .total.retries <<<"$json")"
