# SPDX-License-Identifier: MIT
# tier: check
# vfork+exec, posix_spawn, clone(CLONE_VM) on its own stack, plain clone
# on its own stack, clone(CLONE_VM|CLONE_VFORK)+exec: every child runs and
# exits as without the shim; each process of its own has an exact stream;
# the parent's stream keeps its own exit status and exec state.
# Symbol mode: the parent's exact set of calls is symbol mode's (rewrite
# mode also sees posix_spawn's and stdio's own: t_rewrite_vfork.sh).
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
prog=$BUILD/tests/spawn_kinds
"$prog" > plain.out; plain_rc=$?
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" > shim.out || rc=$?
cat shim.out
expect_eq "exit status" "$plain_rc" "$rc"
expect_eq "output (pids aside)" "$(sed 's/pid=[0-9]*//' plain.out)" "$(sed 's/pid=[0-9]*//' shim.out)"
json=$(profile_json trace)
pid=$(sed -n 's/^pid=\([0-9]*\) ok$/\1/p' shim.out)
child() { sed -n "s/^child=$1 pid=//p" shim.out; }
# stream PID: "origin ppid exit_status name=count,..." (sorted)
stream() {
	jq -r --argjson p "$1" '.processes[] | select(.pid == $p) |
		"\(.origin) \(.ppid) \(.exit_status) \(.syscalls | map("\(.name)=\(.count)") | sort | join(","))"' <<<"$json"
}
# the parent: 10 getppid of its own + the 13 of the clone(CLONE_VM)
# child, which shares its memory (TLS included) and so its counters
expect_eq "parent" "start $(jq --argjson p "$pid" '.processes[] | select(.pid == $p) | .ppid' <<<"$json") 0 clone3=1,clone=3,exit_group=1,getpid=1,getppid=23,vfork=1,wait4=5" "$(stream "$pid")"
expect_eq "parent did not exec" null "$(jq --argjson p "$pid" '.processes[] | select(.pid == $p) | .exec_path' <<<"$json")"
expect_eq "vfork+exec child" "start $pid 11 exit_group=1,getppid=11" "$(stream "$(child vfork)")"
expect_eq "posix_spawn child" "start $pid 12 exit_group=1,getppid=12" "$(stream "$(child posix_spawn)")"
expect_eq "clone(CLONE_VM) child: no stream of its own" "" "$(stream "$(child clone_vm)")"
expect_eq "clone child (own memory)" "fork $pid 14 exit_group=1,getppid=14" "$(stream "$(child clone)")"
expect_eq "clone(CLONE_VM|CLONE_VFORK)+exec child" "start $pid 15 exit_group=1,getppid=15" "$(stream "$(child clone_vfork)")"
expect_eq "streams" 5 "$(jq '.processes | length' <<<"$json")"
