# SPDX-License-Identifier: MIT
# A static binary making 1000 raw getppid syscalls: kbpf-trace sees exactly
# 1000 from the kernel side; the shim, correctly, sees nothing (no dynamic
# loader, no LD_PRELOAD) and writes no trace.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/static_getppid
file -L "$prog" | grep >/dev/null 'statically linked' || fail "$prog is not static"

out=$("$KBPF" -o trace -- "$prog" 1000)
expect_eq "program output" "getppid 1000" "$out"
json=$(profile_json trace)
expect_eq "getppid count" 1000 "$(syscall_field "$json" getppid count)"
expect_eq "getppid errors" 0 "$(syscall_field "$json" getppid errors)"
expect_eq "execve counted in CMD's stream" 1 "$(syscall_field "$json" execve count)"
expect_eq "one stream" 1 "$(jq '.processes | length' <<<"$json")"
expect_eq "origin" start "$(jq -r '.processes[0].origin' <<<"$json")"
expect_eq "producer" bpf "$(jq -r '.producer' <<<"$json")"
expect_eq "exit status" 0 "$(jq '.processes[0].exit_status' <<<"$json")"
jq -e '.syscalls[] | select(.name == "getppid") |
	.time_ns > 0 and .min_ns > 0 and .min_ns <= .avg_ns and .avg_ns <= .max_ns and
	.p50_ns >= .min_ns and .p99_ns <= .max_ns' <<<"$json" >/dev/null ||
	fail "getppid times not sane"
echo "ok: times sane"

# the same under the shim: nothing to see, nothing written
[ -f "$SHIM" ] || skip "shim not built; the kbpf-trace half passed"
out=$(LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim-trace "$prog" 1000)
expect_eq "program output under the shim" "getppid 1000" "$out"
if [ -e shim-trace ] && [ -n "$(ls -A shim-trace 2>/dev/null)" ]; then
	fail "the shim wrote a trace for a static binary: $(ls shim-trace)"
fi
echo "ok: the shim wrote no trace"
