# SPDX-License-Identifier: MIT
# Nothing of the shim's is visible among the program's descriptors, in
# either hook mode: a scanner (tests/fd_scan.c: /proc/self/fd, fcntl and
# fstat over the whole soft RLIMIT_NOFILE, F_DUPFD from a high floor,
# close_range, a fork child and an exec'd child) prints the same plain and
# traced, under the soft limit of 20000 that made the old trace descriptor
# 19968; so does test_subprocess's pass_fds case (a child listing its
# /proc/self/fd). The trace is still complete: the descriptor lives in the
# output process (a child named kprof-out), which ends with the program.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/fd_scan
ulimit -n 20000
"$prog" > plain.out
cat plain.out
pass_fds='import os, subprocess, sys
r, w = os.pipe()
out = subprocess.check_output([sys.executable, "-c",
	"import os; print(sorted(int(x) for x in os.listdir(\"/proc/self/fd\")))"],
	pass_fds=[w])
print("child fds:", out.decode().strip(), "pass_fds:", [w])'
/usr/bin/python3 -c "$pass_fds" > py-plain.out
modes="symbols"
[ "$(id -u)" = 0 ] && modes="symbols rewrite"
for mode in $modes; do
	rc=0
	KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace-$mode "$prog" > "$mode.out" || rc=$?
	expect_eq "$mode: exit status" 0 "$rc"
	if ! diff -u plain.out "$mode.out"; then
		fail "$mode: the program sees something of the shim's"
	fi
	echo "ok: $mode: the scans are the same as plain"
	json=$(profile_json "trace-$mode")
	expect_eq "$mode: streams (parent, fork child, exec'd child)" 3 \
		"$(jq '.processes | length' <<<"$json")"
	# the fork child's image ends in its exec, the other two in exit(0)
	expect_eq "$mode: exit statuses" "0 0 null" \
		"$(jq -r '[.processes[].exit_status] | sort_by(. == null) | map(tostring) | join(" ")' <<<"$json")"
	# close_range(3, ~0) in the child was counted, and the trace goes on after it
	expect_eq "$mode: close_range counted" 1 "$(syscall_field "$json" close_range count)"
	KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/py-$mode /usr/bin/python3 -c "$pass_fds" \
		> "py-$mode.out"
	expect_eq "$mode: test_subprocess's pass_fds child" "$(cat py-plain.out)" "$(cat "py-$mode.out")"
done
# The output processes ended with their programs (none left behind).
sleep 0.2
left=$(ps -eo ppid=,comm= | awk -v me=$$ '$2 == "kprof-out" && $1 == me' | wc -l)
expect_eq "output processes left as children of the test" 0 "$left"
