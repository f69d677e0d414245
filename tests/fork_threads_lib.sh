# SPDX-License-Identifier: MIT
# fork() 200 times from a process with 16 busy threads (12 calling
# getppid, 4 blocked in read), flushing every millisecond: every child's
# stream is exact, the parent's counts are exact and the whole trace
# decodes without damage. Sourced by t_shim_fork_threads.sh and
# t_rewrite_fork_threads.sh with KPROF_HOOK set and child_calls, the
# exact calls of a child ("name=count,..." sorted).
[ -n "${child_calls:-}" ] || { echo "fork_threads_lib.sh: child_calls not set"; exit 99; }
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace KPROF_INTERVAL_MS=1 "$BUILD/tests/fork_threads" 200 | tee out.txt
want=$(sed -n 's/.*parent_getppid=//p' out.txt)
[ -n "$want" ] || fail "program printed no count"
rc=0; json=$(profile_json trace) || rc=$?
expect_eq "kanalyze status (no damaged record)" 0 "$rc"
expect_eq "streams" 201 "$(jq '.processes | length' <<<"$json")"
parent=$(jq -c '.processes[] | select(.origin == "start")' <<<"$json")
pcalls() { jq -r --arg n "$2" '[.syscalls[] | select(.name == $n) | .count] | add // 0' <<<"$1"; }
expect_eq "parent getppid" "$want" "$(pcalls "$parent" getppid)"
expect_eq "parent clone (fork)" 200 "$(pcalls "$parent" clone)"
expect_eq "parent wait4" 200 "$(pcalls "$parent" wait4)"
expect_eq "parent threads" 17 "$(jq .threads <<<"$parent")"
pid=$(jq .pid <<<"$parent"); stream=$(jq -r .stream <<<"$parent")
# every child: exactly child_calls, status its round % 100,
# linked to the parent
kids=$(jq -c --argjson p "$pid" --arg s "$stream" '[.processes[] | select(.origin == "fork") |
	select(.ppid == $p and .parent_stream == $s) |
	[(.syscalls | map("\(.name)=\(.count)") | sort | join(",")), .exit_status]]' <<<"$json")
expect_eq "children linked to the parent" 200 "$(jq length <<<"$kids")"
expect_eq "children with the exact trace" 200 "$(jq --arg calls "$child_calls" '[.[] | select(.[0] == $calls)] | length' <<<"$kids")"
expect_eq "children's exit statuses (0..99, twice each)" \
	"$(for i in $(seq 0 99); do echo $i; echo $i; done | sort -n | tr '\n' ' ')" \
	"$(jq -r '.[][1]' <<<"$kids" | sort -n | tr '\n' ' ')"
