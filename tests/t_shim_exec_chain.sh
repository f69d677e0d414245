# SPDX-License-Identifier: MIT
# tier: check
# A process that execs itself 50 times: 51 streams in one pid, each image
# with its exact calls (image k makes 50-k getppid), each linked to the
# image it replaced, the last one with the exit status.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/spawn_kinds" chain 50
json=$(profile_json trace)
expect_eq "streams" 51 "$(jq '.processes | length' <<<"$json")"
expect_eq "one pid" 1 "$(jq '[.processes[].pid] | unique | length' <<<"$json")"
expect_eq "getppid over the chain" 1275 "$(syscall_field "$json" getppid count)"
expect_eq "execve over the chain" 50 "$(syscall_field "$json" execve count)"
# walk the chain from the first image through parent_stream links
chain=$(jq -r '
	(.processes | map({key: .parent_stream, value: .}) | from_entries) as $next |
	[.processes[] | select(.origin == "start")][0] as $first |
	[$first | recurse($next[.stream]; . != null)] |
	map("\(.argv[2]):\([.syscalls[] | select(.name == "getppid") | .count] | add // 0):\(.exit_status)") | join(" ")' <<<"$json")
want=$(for k in $(seq 50 -1 1); do printf '%d:%d:null ' $k $k; done; echo "0:0:0")
expect_eq "chain (argv:getppid:status)" "$want" "$chain"

# ppids across forks and execs: a fork child that forks before its first
# batch (a subshell in a subshell), and an exec'd image whose ppid comes
# from the image it replaced; each the pid of the process that made it
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/tree bash -c '( ( /bin/true; exit 3 ); exit 0 ); exec /bin/true' ||
	fail "bash exited $?"
tjson=$(profile_json tree)
expect_eq "processes with ppid 0" "" "$(jq -r '.processes[] | select(.ppid == 0) | .pid' <<<"$tjson")"
# each ppid is a pid of the trace or the bash's own parent (this shell)
bad=$(jq -r --argjson me $$ '[.processes[].pid] as $pids | .processes[] |
	select((.ppid as $p | $pids | index($p)) == null and .ppid != $me) | "\(.pid):\(.ppid)"' <<<"$tjson")
expect_eq "ppids that are no pid of the run" "" "$bad"
