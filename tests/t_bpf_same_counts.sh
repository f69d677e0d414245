# SPDX-License-Identifier: MIT
# One deterministic C program, run twice: under the shim and under
# kbpf-trace. For every syscall the shim intercepted, both count exactly
# the same calls, errors and retries.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
[ -f "$SHIM" ] || skip "shim not built"
prog=$BUILD/tests/bpf_same_calls
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim "$prog" || fail "program failed under the shim"
"$KBPF" -o bpf -- "$prog" || fail "program failed under kbpf-trace"
shim=$(profile_json shim)
bpf=$(profile_json bpf)
n=$(jq '.syscalls | length' <<<"$shim")
[ "$n" -ge 10 ] || fail "the shim saw too few syscalls ($n)"
# one line per syscall the shim saw: name, then count/errors/retries of each
jq -r --argjson b "$bpf" '.syscalls[] as $s |
	($b.syscalls | map(select(.name == $s.name)) | first // {count: 0, errors: 0, retries: 0}) as $k |
	"\($s.name) \($s.count)/\($s.errors)/\($s.retries) \($k.count)/\($k.errors)/\($k.retries)"' \
	<<<"$shim" > compare.txt
while read -r sc by_shim by_bpf; do
	expect_eq "$sc count/errors/retries" "$by_shim" "$by_bpf"
done < compare.txt
# and the numbers are the program's own
expect_eq "getppid" 300 "$(syscall_field "$bpf" getppid count)"
expect_eq "readv retries (EAGAIN)" 25 "$(syscall_field "$bpf" readv retries)"
expect_eq "unlink errors (ENOENT)" 30 "$(syscall_field "$bpf" unlink errors)"
expect_eq "lseek errors (ESPIPE)" 20 "$(syscall_field "$bpf" lseek errors)"
