# SPDX-License-Identifier: MIT
# Rewrite mode, the ways a process ends: exit() with stdio output still
# buffered (written by exit's own flush, after every destructor: the
# shim's final flush comes after it, at exit_group), _exit, an exit_group
# made with the program's own instruction, and every thread leaving with
# the exit syscall (the last one ends the process). Each is counted before
# it is made; the exit status, the write and the final records are there.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
prog=$BUILD/tests/rewrite_cases
check() { # HOW STATUS OUTPUT END-SYSCALL END-COUNT
	both "$1" "$prog" exit "$1"
	expect_eq "$1: exit status" "$2" "$both_rc"
	expect_eq "$1: output" "$3" "$(cat "$1/out.txt")"
	json=$(profile_json "$1/shim")
	expect_eq "$1: $4 counted" "$5" "$(syscall_field "$json" "$4" count)"
	expect_eq "$1: exit status in the trace" "$2" "$(jq '.processes[0].exit_status' <<<"$json")"
	expect_eq "$1: write counted" 1 "$(syscall_field "$json" write count)"
	exact_coverage "$1"
}
check exit 3 "exit=exit" exit_group 1
check _exit 4 "exit=_exit" exit_group 1
check exit_group 5 "exit=exit_group" exit_group 1
check thread 0 "exit=thread" exit 5
