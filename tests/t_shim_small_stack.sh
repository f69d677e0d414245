# SPDX-License-Identifier: MIT
# tier: check
# The hooks run on the shim's own stack (preload/core/stack.h), in every
# mode: a program making syscalls from an 8 KiB stack above a guard page,
# as a goroutine or a coroutine does, with a flush every millisecond, and
# running /bin/true through vfork and execl from that stack (the exec
# hook's 40 KiB of environment arrays), runs as plain and leaves that
# stack as deep as plain did (the hook adds nothing below the deepest
# frame of the program's own); every call is counted exactly. Then signals whose handlers make calls while the
# thread is inside one, on the shim's stack and on a sigaltstack, one in
# 16 leaving by siglongjmp: exact counts, three runs a mode.
source "$KPROF_ROOT/tests/lib.sh"
source "$KPROF_ROOT/tests/rewrite_lib.sh"
N=20000 V=20
modes=(symbols)
[ "$(uname -m)" = x86_64 ] && modes+=(patch)
REWRITE_HOOK=rewrite rewrite_possible && modes+=(rewrite)
echo "modes: ${modes[*]}"

plain=$("$BUILD/tests/small_stack" $N 8192 0 $V)
echo "plain: $plain"
expect_eq "plain counts" "getppid=$((N + V)) write=$N raw_getppid=$N vfork=$V" "${plain% stack_used=*}"
for m in "${modes[@]}"; do
	rc=0
	out=$(KPROF_HOOK=$m KPROF_INTERVAL_MS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/small.$m \
		"$BUILD/tests/small_stack" $N 8192 0 $V) || rc=$?
	expect_eq "$m: exit status" 0 "$rc"
	expect_eq "$m: output (counts and stack depth as plain)" "$plain" "$out"
	json=$(profile_json "small.$m")
	expect_eq "$m: hook mode" "$m" "$(jq -r .hook_mode <<<"$json")"
	# symbol mode sees the libc wrapper's getppid, not the raw one; it
	# does not see printf's write either
	want_getppid=$((2 * N + V)) want_write=$((N + 1))
	[ "$m" = symbols ] && want_getppid=$((N + V)) want_write=$N
	expect_eq "$m: getppid counted" "$want_getppid" "$(syscall_field "$json" getppid count)"
	expect_eq "$m: write counted" "$want_write" "$(syscall_field "$json" write count)"
	streams=$(ls small.$m/*.msgpack | wc -l)
	expect_eq "$m: streams (the program and its /bin/true children)" $((V + 1)) "$streams"
	expect_eq "$m: vfork counted" "$V" "$(syscall_field "$json" vfork count)"
done

for m in "${modes[@]}"; do
	for run in 1 2 3; do
		rc=0
		out=$(KPROF_HOOK=$m KPROF_INTERVAL_MS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/nest.$m.$run \
			timeout 120 "$BUILD/tests/signal_nest" 3000) || rc=$?
		expect_eq "$m run $run: exit status" 0 "$rc"
		made=$(sed -n 's/^getppid=\([0-9]*\) .*/\1/p' <<<"$out")
		jumps=$(sed -n 's/.* longjmp=\([0-9]*\)$/\1/p' <<<"$out")
		[ "${jumps:-0}" -gt 0 ] || fail "$m run $run: no handler left by siglongjmp ($out)"
		json=$(profile_json "nest.$m.$run")
		expect_eq "$m run $run: getppid counted ($jumps jumps out of handlers)" "$made" \
			"$(syscall_field "$json" getppid count)"
	done
done
