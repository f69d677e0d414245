# SPDX-License-Identifier: MIT
# tier: check
# 4,000 threads created and exiting (joined and detached) while the shim
# flushes every millisecond and recycles the blocks of exited threads:
# every call is counted once, every thread appears, the trace is whole.
# Symbol mode: which syscalls appear is symbol mode's (rewrite mode also
# sees thread start and exit: t_rewrite_clone.sh).
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace KPROF_INTERVAL_MS=1 "$BUILD/tests/thread_churn" 250 | tee out.txt
rc=0; json=$(profile_json trace) || rc=$?
expect_eq "kanalyze status" 0 "$rc"
expect_eq "getppid" "$(sed -n 's/.*getppid=//p' out.txt)" "$(syscall_field "$json" getppid count)"
expect_eq "threads (4,000 + main)" 4001 "$(jq '.processes[0].threads' <<<"$json")"
# (sched_yield: the main thread's wait for the last detached threads, any number)
expect_eq "syscalls seen" "exit_group getppid" "$(jq -r '[.syscalls[].name | select(. != "sched_yield")] | sort | join(" ")' <<<"$json")"
