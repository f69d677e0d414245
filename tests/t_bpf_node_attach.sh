# SPDX-License-Identifier: MIT
# `kbpf-trace -p` on a Node process that is already running: its syscalls
# appear, it keeps running undisturbed while and after kbpf-trace runs,
# and it later exits normally on its own. Two processes of one -p run are
# one run, and the footer says they were still running.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
command -v node >/dev/null || skip "node not installed"
cat > app.js <<'JS'
const fs = require('fs');
let ticks = 0;
const t = setInterval(() => {
	fs.statSync('/');
	fs.writeFileSync('tick.txt', String(ticks));
	if (fs.readFileSync('tick.txt', 'utf8') !== String(ticks)) process.exit(3);
	ticks++;
}, 10);
setTimeout(() => { clearInterval(t); console.log('ticks ' + (ticks > 100 ? 'ok' : ticks)); }, 5000);
JS
node app.js > node.out &
pid=$!
sleep 0.5
kill -0 "$pid" || fail "node did not start"
"$KBPF" -p "$pid" --duration=2 -o trace || fail "kbpf-trace failed: $?"
kill -0 "$pid" || fail "node is gone after kbpf-trace detached"
echo "ok: node still running after detach"
wait "$pid"
expect_eq "node exit status" 0 "$?"
expect_eq "node output" "ticks ok" "$(cat node.out)"

json=$(profile_json trace)
expect_eq "streams" 1 "$(jq '.processes | length' <<<"$json")"
expect_eq "origin" attach "$(jq -r '.processes[0].origin' <<<"$json")"
expect_eq "pid" "$pid" "$(jq -r '.processes[0].pid' <<<"$json")"
expect_eq "exe" "$(readlink -f "$(command -v node)")" "$(jq -r '.processes[0].exe' <<<"$json")"
for sc in openat write read; do
	n=$(syscall_field "$json" "$sc" count)
	# ~100 ticks/s for 2 s, each opening, writing, reading tick.txt
	[ "$n" -ge 50 ] || fail "$sc count $n, expected >= 50"
	echo "ok: $sc count $n"
done
stat=$(jq '[.syscalls[] | select(.name == "statx" or .name == "newfstatat") | .count] | add // 0' <<<"$json")
[ "$stat" -ge 100 ] || fail "stat calls $stat, expected >= 100"
echo "ok: stat calls $stat"
# the stream ended with tracing, not with the process: detached exit record
expect_eq "exit status unknown (still running)" -1 "$(jq '.processes[0].exit_status' <<<"$json")"
jq -e '.processes[0].fds_at_exit | .file + .pipe + .socket + .other > 3' <<<"$json" >/dev/null ||
	fail "no descriptors seen at detach"
echo "ok: descriptors at detach $(jq -c '.processes[0].fds_at_exit' <<<"$json")"

# Two processes of one `-p A,B`: one run (no "merged runs" warning), and
# the footer says they were still running, not that they exited.
sleep 30 & s1=$!
sleep 30 & s2=$!
"$KBPF" -p "$s1,$s2" --duration=1 -o two || fail "kbpf-trace -p A,B failed: $?"
out=$("$KANALYZE" two 2>&1)
kill "$s1" "$s2"
if grep -q "runs (" <<<"$out"; then fail "one -p run reported as several: $(grep runs <<<"$out")"; fi
echo "ok: one run for -p $s1,$s2"
grep -q "(2 of 2 streams ended: 0 exited, 2 still running when tracing ended)" <<<"$out" ||
	fail "footer: $(grep 'Open at' <<<"$out")"
echo "ok: footer says still running"
