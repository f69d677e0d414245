# SPDX-License-Identifier: MIT
# Rewrite mode and signals: every handled signal ends in rt_sigreturn,
# which must run on the exact stack the kernel set up (and is counted
# before it is made); handlers that make syscalls while their thread is
# inside the hook (blocked in read, or in the shim's bookkeeping, or in a
# flush every millisecond) are counted exactly; reads interrupted without
# SA_RESTART fail EINTR once each, restarted ones count once; threads
# cancelled while blocked in read unwind through the hook.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
both sig "$BUILD/tests/rewrite_cases" sigreturn 500
expect_eq "sigreturn: exit status" 0 "$both_rc"
expect_eq "sigreturn: output" "signals=500 ok" "$(cat sig/out.txt)"
expect_eq "rt_sigreturn counted" 500 "$(shim_count sig rt_sigreturn)"
exact_coverage sig

# handlers calling getppid twice, as fast as another thread can signal,
# then 100 signals while blocked in read (SA_RESTART); 1 ms flushes
both calls env KPROF_INTERVAL_MS=1 "$BUILD/tests/signal_calls" 20000
expect_eq "signal_calls: exit status" 0 "$both_rc"
json=$(profile_json calls/shim)
expect_eq "getppid (loop + 2 per handled signal)" "$(sed -n 's/^getppid=//p' calls/out.txt)" \
	"$(syscall_field "$json" getppid count)"
expect_eq "rt_sigreturn (one per handled signal)" "$(sed -n 's/^signals=//p' calls/out.txt)" \
	"$(syscall_field "$json" rt_sigreturn count)"
# the kernel counts each restart of the read blocked through the signals
# (SA_RESTART) as a call of its own; the program made one
exact_coverage calls read="$(kernel_interrupted calls read)"

# EINTR without SA_RESTART, restarts with it, handlers nested 4 deep
both eintr env KPROF_INTERVAL_MS=1 "$BUILD/tests/signal_eintr"
expect_eq "signal_eintr: exit status" 0 "$both_rc"
json=$(profile_json eintr/shim)
expect_eq "reads failing EINTR" "$(sed -n 's/^read_eintr=//p' eintr/out.txt)" "$(syscall_field "$json" read errors)"
expect_eq "EINTR is not a retry" 0 "$(syscall_field "$json" read retries)"
expect_eq "getppid from handlers" "$(sed -n 's/^getppid=//p' eintr/out.txt)" "$(syscall_field "$json" getppid count)"
# the same for the reads restarted after SIGUSR2 (SA_RESTART); those
# interrupted by SIGUSR1 (no SA_RESTART) failed EINTR: one call each
exact_coverage eintr read="$(( $(kernel_interrupted eintr read) - $(sed -n 's/^read_eintr=//p' eintr/out.txt) ))"

# pthread_cancel of threads blocked in read: glibc unwinds them from the
# signal handler through the hook's frames (its unwind tables)
both cancel "$BUILD/tests/rewrite_cases" cancel 20
expect_eq "cancel: exit status" 0 "$both_rc"
expect_eq "cancel: output" "cancelled=20 ok" "$(cat cancel/out.txt)"
