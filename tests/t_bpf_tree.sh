# SPDX-License-Identifier: MIT
# A fork/exec tree under `kbpf-trace --`: one stream per process image,
# linked to its parent, with the exact counts each image printed.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
"$KBPF" -o trace -- "$BUILD/tests/bpf_tree" 3 > tree.out
cat tree.out
expect_eq "images that reported" 6 "$(wc -l < tree.out)"
json=$(profile_json trace)
expect_eq "streams" 6 "$(jq '.processes | length' <<<"$json")"
while read -r pid origin sc count; do
	expect_eq "pid $pid ($origin) $sc" "$count" "$(process_field "$json" "$pid" "$origin" "$sc" count)"
done < tree.out
expect_eq "getppid in total" $((100 + 10 + 20 + 30 + 5 + 77)) "$(syscall_field "$json" getppid count)"

root=$(awk '$2 == "start" {print $1}' tree.out)
expect_eq "children of the root" 4 \
	"$(jq --argjson r "$root" '[.processes[] | select(.ppid == $r and .origin == "fork")] | length' <<<"$json")"
# the fork streams point at the root's stream, the exec'd image at its
# pre-exec stream
jq -e '(.processes | map({key: .stream, value: .}) | from_entries) as $by |
	[.processes[] | select(.origin == "fork" or .origin == "exec") |
	 $by[.parent_stream] != null] | all' <<<"$json" >/dev/null ||
	fail "a fork/exec stream does not link to its parent stream"
echo "ok: parent streams linked"
expect_eq "exec'd image's exe" "$BUILD/tests/bpf_tree" \
	"$(jq -r '.processes[] | select(.origin == "exec") | .exe' <<<"$json")"
# every image ended with exit status 0 but the one that exec'd, which
# ended with its exec instead
expect_eq "images with exit status 0" 5 \
	"$(jq '[.processes[] | select(.exit_status == 0)] | length' <<<"$json")"
# clone/fork records: the root forked 4 times
expect_eq "fork calls of the root" 4 "$(process_field "$json" "$root" start clone count)"
