# SPDX-License-Identifier: MIT
# tier: check
# A program that waits for any child with __WALL or __WCLONE (strace, some
# init systems) would also wait for the shim's output process, a clone
# child that lives as long as the program: strace, which ends its loop
# only when wait4 says ECHILD, hung for ever under the shim in every hook
# mode. With no other child left, such waits now fail with ECHILD as
# without the shim (tests/wait_all.c), and strace -f runs to its end.
. "$KPROF_ROOT/tests/lib.sh"
command -v strace >/dev/null || fail "strace missing (make deps installs it)"
prog=$BUILD/tests/wait_all
"$prog" > plain.txt
grep -qx 'reaped_child 1 status 3' plain.txt || fail "plain run: $(cat plain.txt)"
modes=(symbols)
[ "$(uname -m)" = x86_64 ] && modes+=(rewrite patch)
for m in "${modes[@]}"; do
	rc=0
	timeout -s KILL 20 env KPROF_HOOK=$m LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$m" "$prog" > "$m.txt" || rc=$?
	expect_eq "$m: exit status" 0 "$rc"
	cmp plain.txt "$m.txt" || { diff plain.txt "$m.txt"; fail "$m: the waits differ"; }
	rc=0
	timeout -s KILL 30 env KPROF_HOOK=$m LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/strace-$m" \
		strace -f -o "$PWD/strace-$m.out" sh -c 'echo traced; exit 4' > "strace-$m.txt" || rc=$?
	expect_eq "$m: strace -f sh: exit status (sh's)" 4 "$rc"
	expect_eq "$m: strace -f sh: output" traced "$(cat "strace-$m.txt")"
	grep -q 'exit_group(4)' "strace-$m.out" || fail "$m: strace's log lacks the exit: $(tail -3 "strace-$m.out")"
done
