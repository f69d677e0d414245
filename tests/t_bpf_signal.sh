# SPDX-License-Identifier: MIT
# SIGTERM to `kbpf-trace -- CMD`: passed on to CMD, whose end is still
# recorded; kbpf-trace exits with CMD's status (128+15). A CMD that
# ignores it is detached after a grace period and waited for.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
# wait_exec PARENT NAME: until a child NAME of PARENT runs (CMD is held
# before its exec until the probes are attached, so this means attached)
wait_exec() {
	for _ in $(seq 200); do
		c=$(pgrep -P "$1" -x "$2" | head -n 1) && [ -n "$c" ] && { echo "$c"; return 0; }
		sleep 0.1
	done
	fail "$2 did not start under kbpf-trace"
}
"$KBPF" -o t1 -- sleep 30 &
pid=$!
wait_exec "$pid" sleep >/dev/null
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
expect_eq "exit status" 143 "$rc"
json=$(profile_json t1)
expect_eq "signal recorded" 15 "$(jq '.processes[0].exit_signal' <<<"$json")"
# the sleep that the signal interrupted returned (to die): counted once
expect_eq "clock_nanosleep" 1 "$(syscall_field "$json" clock_nanosleep count)"

"$KBPF" -o t2 -- sh -c 'trap "" TERM; sleep 2; exit 4' &
pid=$!
sh_pid=$(wait_exec "$pid" "sh|dash")
wait_exec "$sh_pid" sleep >/dev/null  # the trap is set before sleep starts
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
expect_eq "exit status of the CMD that ignored SIGTERM" 4 "$rc"
json=$(profile_json t2)
expect_eq "streams ended (detached)" 3 "$(jq '[.processes[] | select(.exit_status == -1 or .exit_status == null)] | length' <<<"$json")"
