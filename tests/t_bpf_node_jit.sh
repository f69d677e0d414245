# SPDX-License-Identifier: MIT
# JavaScript frames in kbpf-trace's stacks: node --perf-basic-prof
# --interpreted-frames-native-stack writes /tmp/perf-PID.map, and kanalyze
# names the JIT code of the stacks from it. The 10,000 fs.readSync reads
# of readLoop() stand under a frame named JS:...readLoop r.js:2 (library
# perf-PID.map), in --folded and --pprof: all but the odd call V8 makes
# while it swaps readLoop's code for a faster tier (1 in 3 runs here lost
# 1 call); at least 9,990. The map found with
# --perf-map-dir elsewhere names them too; a map older than the process
# (another process's, same pid) is not used; no stack starts at a frame
# in no code.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
command -v node >/dev/null || fail "no node (Debian's nodejs; make test installs it)"
cat > r.js <<'JS'
const fs = require('fs');
function readLoop(n) {
	const fd = fs.openSync('/dev/zero', 'r');
	const b = Buffer.alloc(16);
	for (let i = 0; i < n; i++)
		fs.readSync(fd, b, 0, 16, null);
	fs.closeSync(fd);
}
for (let k = 0; k < 50; k++)
	readLoop(200);
JS
"$KBPF" --stacks -o t -- node --perf-basic-prof --interpreted-frames-native-stack r.js ||
	fail "node failed under kbpf-trace"
pid=$(profile_json t | jq -r '[.processes[] | select(.exe | test("node")) | .pid] | first')
map=/tmp/perf-$pid.map
[ -s "$map" ] || fail "node wrote no $map"
trap 'rm -f "$map"' EXIT
# reads_in FOLDED: the reads whose stack has readLoop, named from the map
reads_in() {
	awk -v f="perf-$pid.map\`JS:" '/;read [0-9]+$/ && index($0, f) && /readLoop_/ { n += $NF }
		END { print n + 0 }' "$1"
}
"$KANALYZE" --folded t > folded.txt || fail "kanalyze --folded"
n=$(reads_in folded.txt)
[ "$n" -ge 9990 ] && [ "$n" -le 10000 ] || fail "reads under JS readLoop: $n of 10000"
echo "ok: $n of 10000 reads under JS readLoop"
grep -o "perf-$pid.map\`JS:[^;]*readLoop[^;]*" folded.txt | sort -u | head -n 3
grep -q "perf-$pid.map\`JS:[^;]*readLoop_$PWD/r.js:2:" folded.txt ||
	fail "no frame JS:...readLoop $PWD/r.js:2: $(grep -m1 readLoop folded.txt)"
# no stack's root is a frame in no code
roots=$(awk '{ split($1, f, ";"); print f[1] }' folded.txt | grep -c '^0x' || true)
expect_eq "stacks rooted at a frame in no code" 0 "$roots"
# pprof carries the JS frames
"$KANALYZE" --pprof=p.pb.gz -e read t 2>/dev/null || fail "kanalyze --pprof"
expect_eq "pprof: the calls of samples through JS readLoop" "$n" \
	"$(HOME=$PWD go tool pprof -top -sample_index=calls -focus='JS:.*readLoop' \
		p.pb.gz 2>/dev/null |
		sed -n 's/^Showing nodes accounting for \([0-9]*\),.*/\1/p')"
# the map elsewhere
mkdir maps
cp -p "$map" maps/
mv "$map" "$map.away"
"$KANALYZE" --folded t > no-map.txt
expect_eq "without the map: reads under JS readLoop" 0 "$(reads_in no-map.txt)"
"$KANALYZE" --folded --perf-map-dir="$PWD/maps" t > dir.txt
expect_eq "--perf-map-dir: reads under JS readLoop" "$n" "$(reads_in dir.txt)"
mv "$map.away" "$map"
# a map written before the process started is another process's
touch -d '2000-01-01' "$map"
"$KANALYZE" --folded t > stale.txt
expect_eq "a map older than the process: reads under JS readLoop" 0 "$(reads_in stale.txt)"
