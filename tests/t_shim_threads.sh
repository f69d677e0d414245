# SPDX-License-Identifier: MIT
# tier: check
# 8 threads x 10,000 getppid calls: exactly 80,000, although every thread
# exits before the process's final flush.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/threads_calls" 8 10000
json=$(profile_json trace)
expect_eq "getppid count" 80000 "$(syscall_field "$json" getppid count)"
jq -e '.processes[0].threads >= 8' <<<"$json" >/dev/null || fail "expected >= 8 threads, got $(jq '.processes[0].threads' <<<"$json")"
echo "ok: $(jq '.processes[0].threads' <<<"$json") threads"
