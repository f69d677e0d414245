# Hooked calls from signal handlers, also while the thread is inside a
# hooked call or inside the shim's own bookkeeping: counts stay exact.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/signal_calls" 200000 | tee out.txt
want=$(sed -n 's/^getppid=//p' out.txt)
[ -n "$want" ] || fail "program printed no count"
json=$(profile_json trace)
expect_eq "getppid count (main loop + 2 per handled signal)" "$want" "$(syscall_field "$json" getppid count)"
expect_eq "blocked read counted once" 1 "$(syscall_field "$json" read count)"
