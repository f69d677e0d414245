# SPDX-License-Identifier: MIT
# tier: check
# fork + exec + posix_spawn: one stream per process image, each linked to
# its parent, every count exact (programs/proc_tree: 100, 200, 300, 400).
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/proc_tree" | tee out.txt
grep -q '^children=.* status=3,4$' out.txt || fail "children did not exit 3 and 4"
parent=$(sed -n 's/^role=parent pid=\([0-9]*\).*/\1/p' out.txt)
forked=$(sed -n 's/^role=forked pid=\([0-9]*\).*/\1/p' out.txt)
spawned=$(sed -n 's/^role=spawned pid=\([0-9]*\).*/\1/p' out.txt)
json=$(profile_json trace)
expect_eq "streams" 4 "$(jq '.processes | length' <<<"$json")"
# proc ROLE-PID ORIGIN: that stream's getppid count, ppid and exit status
proc() {
	jq -r --argjson p "$1" --arg o "$2" '.processes[] | select(.pid == $p and .origin == $o) |
		"\([.syscalls[] | select(.name == "getppid") | .count] | add) \(.ppid) \(.exit_status)"' <<<"$json"
}
parent_ppid=$(jq -r --argjson p "$parent" '.processes[] | select(.pid == $p) | .ppid' <<<"$json")
expect_eq "parent stream" "100 $parent_ppid 0" "$(proc "$parent" start)"
expect_eq "fork child stream (before exec, status unknown: it exec'd)" "200 $parent null" "$(proc "$forked" fork)"
expect_eq "fork child replaced itself by exec (of /proc/self/exe)" "/proc/self/exe" "$(jq -r --argjson p "$forked" '.processes[] | select(.pid == $p and .origin == "fork") | .exec_path' <<<"$json")"
expect_eq "exec'd image stream" "300 $parent 3" "$(proc "$forked" exec)"
expect_eq "posix_spawn child stream" "400 $parent 4" "$(proc "$spawned" start)"
expect_eq "getppid over the tree" 1000 "$(syscall_field "$json" getppid count)"
# the links between streams: the fork child names its parent's stream,
# the exec'd image names the image it replaced
pstream=$(jq -r --argjson p "$parent" '.processes[] | select(.pid == $p) | .stream' <<<"$json")
fstream=$(jq -r --argjson p "$forked" '.processes[] | select(.pid == $p and .origin == "fork") | .stream' <<<"$json")
expect_eq "fork child's parent_stream" "$pstream" "$(jq -r --argjson p "$forked" '.processes[] | select(.pid == $p and .origin == "fork") | .parent_stream' <<<"$json")"
expect_eq "exec image's parent_stream" "$fstream" "$(jq -r --argjson p "$forked" '.processes[] | select(.pid == $p and .origin == "exec") | .parent_stream' <<<"$json")"
