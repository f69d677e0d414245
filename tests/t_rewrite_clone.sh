# SPDX-License-Identifier: MIT
# Rewrite mode, clone with a child stack: pthread_create (glibc's clone3,
# CLONE_VM|CLONE_THREAD on a new stack) must start each thread after the
# call site on its own stack, the parent untouched; every thread's calls,
# the clone3 and its exit counted exactly as the kernel saw them.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
both run "$BUILD/tests/threads_calls" 8 10000
cat run/out.txt
expect_eq "exit status" 0 "$both_rc"
grep -qx 'getppid=80000' run/out.txt || fail "program output: $(cat run/out.txt)"
json=$(profile_json run/shim)
expect_eq "getppid" 80000 "$(syscall_field "$json" getppid count)"
expect_eq "clone3 (one per thread)" 8 "$(syscall_field "$json" clone3 count)"
expect_eq "exit (one per thread)" 8 "$(syscall_field "$json" exit count)"
expect_eq "threads (8 and main)" 9 "$(jq '.processes[0].threads' <<<"$json")"
exact_coverage run

# the same with flushes every millisecond, and 4,000 threads coming and
# going (joined and detached): every thread's block written once, none lost
LD_PRELOAD=$SHIM KPROF_HOOK=$REWRITE_HOOK KPROF_OUT=$PWD/churn KPROF_INTERVAL_MS=1 \
	"$BUILD/tests/thread_churn" 250 | tee churn.txt
rc=0; json=$(profile_json churn) || rc=$?
expect_eq "churn: kanalyze status" 0 "$rc"
expect_eq "churn: getppid" "$(sed -n 's/.*getppid=//p' churn.txt)" "$(syscall_field "$json" getppid count)"
expect_eq "churn: threads (4,000 + main)" 4001 "$(jq '.processes[0].threads' <<<"$json")"
expect_eq "churn: clone3" 4000 "$(syscall_field "$json" clone3 count)"
expect_eq "churn: exit" 4000 "$(syscall_field "$json" exit count)"
