# SPDX-License-Identifier: MIT
# tier: check
# A program that closes every descriptor 0-1023 (one by one, close_range,
# closefrom) and dup2()s over the high descriptors where the shim keeps
# its trace: it behaves as without the shim, and the trace is complete,
# with the same counts the kernel saw (strace, on the plain program).
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/fd_abuse
"$prog" 1100 > plain.out 2>&1; plain_rc=$?
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" 1100 > shim.out 2>&1; shim_rc=$?
expect_eq "exit status" "$plain_rc" "$shim_rc"
cmp plain.out shim.out || fail "output differs: $(cat shim.out)"
grep -qx 'fds=ok' shim.out || fail "program's own descriptors misbehaved: $(cat shim.out)"
strace -f -qq -c -e trace=dup2,close,close_range,getppid,pipe2 -o strace.txt "$prog" 1100 >/dev/null 2>&1
json=$(profile_json trace)
for sc in dup2 getppid close_range pipe2; do
	want=$(awk -v s="$sc" '$NF == s { print $4 }' strace.txt)
	expect_eq "$sc count (strace: $want)" "$want" "$(syscall_field "$json" "$sc" count)"
done
# close: the loader's own closes happen before the shim starts; the
# failed closes (EBADF on descriptors that were not open) are all the
# program's
want=$(awk '$NF == "close" { print $5 }' strace.txt)
expect_eq "close errors (strace: $want)" "$want" "$(syscall_field "$json" close errors)"
expect_eq "final exit record" 0 "$(jq '.processes[0].exit_status' <<<"$json")"
