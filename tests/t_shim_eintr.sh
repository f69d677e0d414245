# SPDX-License-Identifier: MIT
# tier: check
# Hooked calls interrupted by signals: without SA_RESTART each interrupted
# read() is one call failing EINTR (an error, not a retry); with SA_RESTART
# the kernel restarts it and it is one call; handlers nested 4 deep
# (SA_NODEFER) make hooked calls. Flushes every millisecond, so flushes
# also start inside handlers. Counts equal the program's own.
# Symbol mode: the program counts its own read() calls, not stdio's reads
# of /proc (rewrite mode sees those too: t_rewrite_signals.sh).
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace KPROF_INTERVAL_MS=1 "$BUILD/tests/signal_eintr" | tee out.txt
val() { sed -n "s/^$1=//p" out.txt; }
expect_eq "every SIGUSR1 interrupted a read" 50 "$(val read_eintr)"
json=$(profile_json trace)
expect_eq "read calls" "$(val read_calls)" "$(syscall_field "$json" read count)"
expect_eq "read errors (EINTR)" "$(val read_eintr)" "$(syscall_field "$json" read errors)"
expect_eq "read retries" 0 "$(syscall_field "$json" read retries)"
expect_eq "errno of the failed reads" "{\"EINTR\":$(val read_eintr)}" \
	"$(jq -c '[.syscalls[] | select(.name == "read") | .errno][0]' <<<"$json")"
expect_eq "getppid from handlers (50 + 50 + 50 x 4 nested)" 300 "$(val getppid)"
expect_eq "getppid counted" "$(val getppid)" "$(syscall_field "$json" getppid count)"
