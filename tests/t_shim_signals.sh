# SPDX-License-Identifier: MIT
# tier: check
# Hooked calls from signal handlers, also while the thread is inside a
# hooked call or inside the shim's own bookkeeping: counts stay exact.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/signal_calls" 200000 | tee out.txt
want=$(sed -n 's/^getppid=//p' out.txt)
[ -n "$want" ] || fail "program printed no count"
json=$(profile_json trace)
expect_eq "getppid count (main loop + 2 per handled signal)" "$want" "$(syscall_field "$json" getppid count)"
expect_eq "blocked read counted once" 1 "$(syscall_field "$json" read count)"
# again with a flush every millisecond: flushes start inside handlers and
# handlers interrupt flushes in progress
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace1ms KPROF_INTERVAL_MS=1 "$BUILD/tests/signal_calls" 50000 | tee out1ms.txt
want=$(sed -n 's/^getppid=//p' out1ms.txt)
json=$(profile_json trace1ms)
expect_eq "getppid count, 1 ms flushes" "$want" "$(syscall_field "$json" getppid count)"
expect_eq "blocked read counted once, 1 ms flushes" 1 "$(syscall_field "$json" read count)"
