#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze --sites names the caller for the syscalls of the shim's
# hand-written hooks too (close, dup2, close_range, closefrom, fork,
# posix_spawn, ioctl, prctl, mremap, renameat2, fclose, closedir, and
# syscall(2), which hands SYS_close on to the close hook), in both hook
# modes (symbols, and rewrite, or patch where rewrite needs a privilege
# this user lacks): every call sites_hand makes from hand_calls() or raw_calls() is
# counted at that function, none under the shim's own code or "unknown";
# a hot site that comes after eleven others is still named. --top=0 lists
# every site, the default five.
source "$KPROF_ROOT/tests/lib.sh"
n=20
mkdir work
full=$(full_mode)
echo "the mode that sees every instruction here: $full"
for mode in symbols "$full"; do
	rm -rf "t$mode"
	# its pid from $!: the children's streams are named sites_hand.PID
	# too, and after the pids wrap one of them can sort first
	KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t$mode \
		"$BUILD/tests/sites_hand" $n "$PWD/work" > out 2> err &
	pid=$!
	wait $pid || fail "$mode: sites_hand failed: $(cat err)"
	ls "t$mode"/sites_hand."$pid".* >/dev/null 2>&1 ||
		fail "$mode: no stream of sites_hand ($pid): $(ls "t$mode")"
	"$KANALYZE" --sites --top=0 --format=json --pid="$pid" "t$mode" > "$mode.json"
	at() { # at FUNCTION SYSCALL: calls of SYSCALL counted at FUNCTION
		jq --arg f "$1 (sites_hand)" --arg n "$2" \
			'[.syscalls[] | select(.name == $n) | .sites[] | select(.site == $f) | .count] | add // 0' \
			"$mode.json"
	}
	# symbol mode sees the hooked calls; rewrite and patch mode also the
	# close inside fclose and closedir, made for the program's call of them
	closes=$n; [ "$mode" != symbols ] && closes=$((3 * n))
	for pair in openat:$n fcntl:$n ioctl:$n dup2:$n dup3:$n close_range:$((2 * n)) \
		close:$closes renameat:$n prctl:$n mremap:$n clone:$n clone3:$n wait4:$((2 * n)); do
		expect_eq "$mode: ${pair%%:*} at hand_calls" "${pair#*:}" "$(at hand_calls "${pair%%:*}")"
	done
	expect_eq "$mode: getppid at raw_calls" $((2 * n)) "$(at raw_calls getppid)"
	expect_eq "$mode: syscall(SYS_close) at raw_calls" $n "$(at raw_calls close)"
	expect_eq "$mode: getpid at hot_calls (its 12th site)" $n "$(at hot_calls getpid)"
	shim=$(jq '[.syscalls[].sites[] | select(.site | test("libkprof"))] | length' "$mode.json")
	expect_eq "$mode: sites inside the shim" 0 "$shim"
	echo "ok: $mode"
done

"$KANALYZE" --sites --top=0 --pid="$pid" "t$full" > all.txt
"$KANALYZE" --sites --pid="$pid" "t$full" > default.txt
getpid_sites=$(jq '.syscalls[] | select(.name == "getpid") | .sites | length' "$full.json")
[ "$getpid_sites" -ge 12 ] || fail "only $getpid_sites getpid sites in $full.json"
listed() { awk '/^getpid /{on = 1; next} /^[a-z_0-9]+ \(/{on = 0} on && / calls /' "$1" | wc -l; }
expect_eq "--top=0: every getpid site listed" "$getpid_sites" "$(listed all.txt)"
expect_eq "default: 5 getpid sites listed" 5 "$(listed default.txt)"
grep -q "^  ($((getpid_sites - 5)) more sites)" default.txt || fail "no '(N more sites)' line"
