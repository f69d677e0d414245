# SPDX-License-Identifier: MIT
# tier: check
# The shim reads the program's memory after some calls (the cmsgs of
# recvmsg and recvmmsg, what pipe2, socketpair, fstat, statx and clone
# wrote, clone3's arguments, exec's path and environment, new executable
# mappings) and must stay inside what the caller passed and the kernel
# wrote: where the program gets EFAULT, or nothing at all, the shim must
# not fault. tests/guard_walks.c puts each buffer so that it ends where a
# PROT_NONE page begins and passes bad pointers; the issue's case first
# (an SCM_RIGHTS cmsg of 20 bytes in a 20-byte control buffer, whose step
# to a next header went past the end). Its output, every call's result,
# and its exit status must be the same plain, in symbol mode and in
# rewrite mode, and the trace must count every call it made.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/guard_walks

# run NAME CMD...: CMD's output in NAME.txt, its exit status in $run_rc
run() {
	local name=$1
	shift
	run_rc=0
	"$@" > "$name.txt" 2> "$name.err" || run_rc=$?
}
# count KEY FILE: one of the counts the program printed
count() { sed -n "s/^count .*\<$1=\([0-9]*\).*/\1/p" "$2"; }

# check MODE REF [ARGS...]: the program under the shim in hook mode MODE
# against the plain run REF (same ARGS)
check() {
	local mode=$1 ref=$2
	shift 2
	run "$mode" env KPROF_HOOK="$mode" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$mode" \
		KPROF_INTERVAL_MS=0 "$prog" "$@"
	cat "$mode.err" >&2
	expect_eq "$mode: exit status (a fault is 139, SIGBUS 135)" "$ref_rc" "$run_rc"
	diff "$ref.txt" "$mode.txt" > "$mode.diff" ||
		fail "$mode: results differ from the plain run: $(head -n 4 "$mode.diff")"
	echo "ok: $mode: $(grep -c . "$mode.txt") results as plain"
	local json
	json=$(profile_json "$mode" 2> "$mode.kanalyze.err") || fail "$mode: kanalyze failed"
	expect_eq "$mode: hook mode" "$mode" "$(jq -r .hook_mode <<<"$json")"
	for name in recvmsg recvmmsg sendmsg pipe2 socketpair statx clone execve; do
		expect_eq "$mode: $name calls" "$(count "$name" "$mode.txt")" \
			"$(syscall_field "$json" "$name" count)"
	done
	# posix_spawn's clone3 in both modes; the program's own instruction
	# only in rewrite mode
	local clone3=$(($(count clone3 "$mode.txt") + $(count posix_spawn "$mode.txt")))
	[ "$mode" = rewrite ] && clone3=$((clone3 + $(count clone3_raw "$mode.txt")))
	expect_eq "$mode: clone3 calls" "$clone3" "$(syscall_field "$json" clone3 count)"
}

run plain "$prog"
ref_rc=$run_rc
cat plain.txt
expect_eq "plain: exit status" 0 "$ref_rc"
grep -q '^recvmsg rights 20 in 20: ok controllen=20 ctrunc=0 .* fds=1$' plain.txt ||
	fail "plain: the issue's case did not go as the kernel does it here"

check symbols plain

# rewrite mode: where the CPU has no protection keys, the page at address
# 0 it maps is readable, so a call whose pointer is NULL gets what the
# kernel reads there instead of EFAULT (-n leaves those two calls out)
mkdir probe
KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/probe /bin/true
if [ "$(uname -m)" != x86_64 ] ||
	[ "$(profile_json probe | jq -r .hook_mode)" != rewrite ]; then
	echo "rewrite mode unavailable here (x86_64 and root only): checked symbol mode only"
	exit 0
fi
null=
grep -qw ospke /proc/cpuinfo || null=-n
run plain-n "$prog" $null
ref_rc=$run_rc
check rewrite plain-n $null
exit 0
