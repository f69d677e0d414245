# SPDX-License-Identifier: MIT
# Symbol mode makes the syscall itself for libc's plain wrappers (RAW_DIRECT
# in hooks.def): results, errno and error counts are libc's; and when
# another interposer follows libkprof.so in LD_PRELOAD, its function is
# still called (the shim then calls the next function as before).
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
prog=$BUILD/tests/direct_calls
"$prog" > plain.out || fail "program failed"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" > shim.out || fail "program failed under the shim"
expect_eq "output (results and errno) unchanged" "$(cat plain.out)" "$(cat shim.out)"
cat shim.out
json=$(profile_json trace)
expect_eq "lseek calls" 2 "$(syscall_field "$json" lseek count)"
expect_eq "lseek errors (EBADF, ESPIPE)" 2 "$(syscall_field "$json" lseek errors)"
expect_eq "dup errors" 1 "$(syscall_field "$json" dup errors)"
expect_eq "unlink errors" 1 "$(syscall_field "$json" unlink errors)"
expect_eq "pipe2 calls" 1 "$(syscall_field "$json" pipe2 count)"
expect_eq "getppid calls" 1 "$(syscall_field "$json" getppid count)"

# a second interposer after kprof sees every call
command -v cc >/dev/null || fail "no C compiler (gcc) to build the interposer"
cc -shared -fPIC -O2 -o libcount.so "$KPROF_ROOT/tests/interposer/count_getppid.c" -ldl ||
	fail "building the interposer"
LD_PRELOAD="$SHIM $PWD/libcount.so" KPROF_OUT=$PWD/trace2 "$BUILD/tests/getppid_loop" 1000 \
	> out.txt 2> err.txt || fail "program failed with two interposers: $(cat err.txt)"
expect_eq "calls that reached the second interposer" "interposer_getppid=1000" \
	"$(grep interposer_getppid err.txt)"
expect_eq "calls kprof counted" 1000 "$(syscall_field "$(profile_json trace2)" getppid count)"
