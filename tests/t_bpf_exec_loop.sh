#!/bin/bash
# SPDX-License-Identifier: MIT
# kbpf-trace -- CMD where CMD forks and execs /bin/true 2,000 times: it
# ends when CMD ends, with CMD's status, and every image has a stream.
# It used to read and delete an image's counters by scanning the whole
# aggregation maps at the image's end: with a backlog the maps filled
# with the counters of ended images (65,536 entries), every end scanned
# them, its 1 MB notes ring overflowed, exit notes were lost, and when the
# lost one was CMD's own, kbpf-trace waited for it for ever (30 minutes
# before it was killed, on a 2-vCPU guest). Images now list the entries
# they created (in their exit or exec note), and the `--` child's end is
# also learned from the kernel (waitid) when its note is lost. The
# periodic write no longer makes images from the map before their notes
# (720 of 4,401 were nameless, `unknown.PID.N.msgpack`).
# Each call is counted: a burst of new images made the per-CPU aggregation
# map refuse new entries (-ENOMEM, 11-73 calls lost per run, not said on
# stderr); such calls now go to a preallocated spill map.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
n=2000
timeout 600 "$KBPF" -o trace -- "$BUILD/programs/overhead" --workload=exec --calls=$n \
	> loop.out 2> loop.err || fail "kbpf-trace ended with $? ($(tail -3 loop.err))"
cat loop.out
json=$(profile_json trace)
# a fork image and a true image per exec, the warm-up's before the n
images=$(jq '.processes | length' <<<"$json")
[ "$images" -ge $((2 * n)) ] || fail "$images images in the trace, want at least $((2 * n))"
echo "ok: $images images, kbpf-trace ended with CMD"
# each named: an image noted late was once made nameless from the
# aggregation map by the periodic write, and its note then left it so
nameless=$(jq '[.processes[] | select((.exe // "") == "")] | length' <<<"$json")
expect_eq "images without a name" 0 "$nameless"
trues=$(jq '[.processes[] | select(.exe | endswith("/true"))] | length' <<<"$json")
[ "$trues" -ge "$n" ] || fail "$trues images of true, want at least $n"
echo "ok: $trues images of true"
# exactly: n + n/10 rounds of fork, exec, wait; CMD's own exec and exit
rounds=$((n + n / 10))
expect_eq "clone calls" $rounds "$(syscall_field "$json" clone count)"
expect_eq "wait4 calls" $rounds "$(syscall_field "$json" wait4 count)"
expect_eq "execve calls" $((rounds + 1)) "$(syscall_field "$json" execve count)"
expect_eq "exit_group calls" $((rounds + 1)) "$(syscall_field "$json" exit_group count)"
lost=$(jq '.drops.records + .drops.events' <<<"$json")
echo "drops: $(jq -c .drops <<<"$json")"
if [ "$lost" -gt 0 ]; then
	said=$(sed -n 's/.*incomplete: lost \([0-9]*\) calls, \([0-9]*\) records.*/\1 \2/p' loop.err |
		awk '{ c += $1; r += $2 } END { print c + r }')
	expect_eq "losses said on stderr" "$lost" "${said:-0}"
fi
