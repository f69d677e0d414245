# SPDX-License-Identifier: MIT
# Symbol mode makes the syscall itself for libc's plain wrappers (RAW_DIRECT
# in hooks.def): results, errno and error counts are libc's; and when
# another interposer follows libkprof.so in LD_PRELOAD, its function is
# still called (the shim then calls the next function as before).
# Rewrite and patch mode count these calls in the symbol hook too (its
# syscall instruction is never rewritten): once each, with the same sites.
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
prog=$BUILD/tests/direct_calls
"$prog" > plain.out || fail "program failed"
modes="symbols rewrite patch"
if [ "$(full_mode)" != rewrite ]; then
	modes="symbols patch"
	echo "rewrite mode unavailable here (needs root or vm.mmap_min_addr=0): symbols and patch mode"
fi
for mode in $modes; do
	LD_PRELOAD=$SHIM KPROF_HOOK=$mode KPROF_OUT=$PWD/trace-$mode "$prog" > shim.out ||
		fail "program failed under the shim ($mode mode)"
	expect_eq "$mode: output (results and errno) unchanged" "$(cat plain.out)" "$(cat shim.out)"
	json=$(profile_json trace-$mode)
	expect_eq "$mode: hook mode" "$mode" "$(jq -r .hook_mode <<<"$json")"
	expect_eq "$mode: lseek calls" 2 "$(syscall_field "$json" lseek count)"
	expect_eq "$mode: lseek errors (EBADF, ESPIPE)" 2 "$(syscall_field "$json" lseek errors)"
	expect_eq "$mode: dup errors" 1 "$(syscall_field "$json" dup errors)"
	expect_eq "$mode: unlink errors" 1 "$(syscall_field "$json" unlink errors)"
	expect_eq "$mode: pipe2 calls" 1 "$(syscall_field "$json" pipe2 count)"
	expect_eq "$mode: getppid calls" 1 "$(syscall_field "$json" getppid count)"
	expect_eq "$mode: kill calls" 1 "$(syscall_field "$json" kill count)"
done
cat shim.out

# a second interposer after kprof sees every call
command -v cc >/dev/null || fail "no C compiler (gcc) to build the interposer"
cc -shared -fPIC -O2 -o libcount.so "$KPROF_ROOT/tests/interposer/count_getppid.c" -ldl ||
	fail "building the interposer"
LD_PRELOAD="$SHIM $PWD/libcount.so" KPROF_OUT=$PWD/trace2 "$BUILD/tests/getppid_loop" 1000 \
	> out.txt 2> err.txt || fail "program failed with two interposers: $(cat err.txt)"
expect_eq "calls that reached the second interposer" "interposer_getppid=1000" \
	"$(grep interposer_getppid err.txt)"
expect_eq "calls kprof counted" 1000 "$(syscall_field "$(profile_json trace2)" getppid count)"
