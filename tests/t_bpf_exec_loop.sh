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
lost=$(jq '.drops.records + .drops.events' <<<"$json")
echo "drops: $(jq -c .drops <<<"$json")"
if [ "$lost" -gt 0 ]; then
	grep -q "lost" loop.err || fail "drops in the trace, not said on stderr"
fi
