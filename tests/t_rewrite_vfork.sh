# SPDX-License-Identifier: MIT
# Rewrite mode, vfork made with the program's own `syscall` instruction
# (glibc's way: return address in a register): the child runs on the
# parent's stack, burns it and execs /bin/true; the parent's frame must
# survive (the program checks a canary) and every call after start-up is
# counted exactly as the kernel saw it. Then vfork(), posix_spawn and
# clone(CLONE_VM|CLONE_VFORK) through libc (tests/spawn_kinds.c).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
both run "$BUILD/tests/rewrite_cases" vfork 50
cat run/out.txt
expect_eq "exit status" 0 "$both_rc"
expect_eq "output" "vfork=50 ok" "$(cat run/out.txt)"
json=$(profile_json run/shim)
pid=$(jq '[.processes[] | select(.exe | endswith("rewrite_cases"))][0].pid' <<<"$json")
expect_eq "vfork calls" 50 "$(process_field "$json" "$pid" start vfork count)"
expect_eq "wait4 calls" 50 "$(process_field "$json" "$pid" start wait4 count)"
expect_eq "streams (the program and 50 /bin/true)" 51 "$(jq '.processes | length' <<<"$json")"
expect_eq "children's status" 50 "$(jq '[.processes[] | select(.exe == "/usr/bin/true" and .exit_status == 0)] | length' <<<"$json")"
exact_coverage run

# syscall(SYS_vfork) through libc's syscall(): the shim's syscall() hook
# must not leave a frame on the stack the child shares (in both modes)
for mode in "$REWRITE_HOOK" symbols; do
	rc=0
	KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/sv-$mode \
		"$BUILD/tests/rewrite_cases" syscall_vfork 30 > sv-$mode.txt || rc=$?
	expect_eq "syscall(SYS_vfork), $mode mode: exit status" 0 "$rc"
	expect_eq "syscall(SYS_vfork), $mode mode: output" "syscall_vfork=30 ok" "$(cat sv-$mode.txt)"
	expect_eq "syscall(SYS_vfork), $mode mode: vfork counted" 30 \
		"$(syscall_field "$(profile_json sv-$mode)" vfork count)"
done

# vfork(), posix_spawn, clone(CLONE_VM|CLONE_VFORK) and plain clone
# through libc: same output as without the shim
prog=$BUILD/tests/spawn_kinds
"$prog" > plain.out
both spawn "$prog"
expect_eq "spawn_kinds exit status" 0 "$both_rc"
expect_eq "spawn_kinds output (pids aside)" "$(sed 's/pid=[0-9]*//' plain.out)" "$(sed 's/pid=[0-9]*//' spawn/out.txt)"
json=$(profile_json spawn/shim)
pid=$(sed -n 's/^pid=\([0-9]*\) ok$/\1/p' spawn/out.txt)
stream() {
	jq -r --argjson p "$1" --arg names "$2" '.processes[] | select(.pid == $p) |
		"\(.origin) \(.exit_status) \(.syscalls | map(select(.name as $n | $names | split(",") | index($n))) | map("\(.name)=\(.count)") | sort | join(","))"' <<<"$json"
}
child() { sed -n "s/^child=$1 pid=//p" spawn/out.txt; }
# the parent's lifecycle calls, and its 10 getppid + the 13 of the
# clone(CLONE_VM) child that shares its memory (as in symbol mode)
expect_eq "parent" "start 0 clone3=1,clone=3,exit_group=1,getppid=23,vfork=1,wait4=5" \
	"$(stream "$pid" clone,clone3,vfork,wait4,getppid,exit_group)"
expect_eq "vfork+exec child" "start 11 exit_group=1,getppid=11" "$(stream "$(child vfork)" getppid,exit_group)"
expect_eq "posix_spawn child" "start 12 exit_group=1,getppid=12" "$(stream "$(child posix_spawn)" getppid,exit_group)"
# (its thread ends with the exit syscall, which rewrite mode sees as such)
expect_eq "clone child (own memory)" "fork 14 exit=1,getppid=14" "$(stream "$(child clone)" getppid,exit_group,exit)"
expect_eq "clone(CLONE_VM|CLONE_VFORK)+exec child" "start 15 exit_group=1,getppid=15" "$(stream "$(child clone_vfork)" getppid,exit_group)"
# the kernel counts the CLONE_VM child's 13 getppid (and its exit) under
# its own pid, which has no stream: the shim has them in the parent's
exact_coverage spawn getppid=-13 getpid=-1
