# SPDX-License-Identifier: MIT
# serial: traces every process of a name, with a fixed port
# kbpf-trace --comm: an exporter's daemon mode, tracing every process of a
# name for as long as it runs. A process of that name already running is
# attached; each one exec'd later (by us, by a shell's child) is traced
# from its exec with its exact calls; a process of another name is not;
# with --metrics the counts reach a Prometheus scrape through kbpf-trace's
# own kanalyze exporter, which ends with kbpf-trace.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
cp "$BUILD/tests/getppid_loop" kp-getter
cp "$BUILD/tests/getppid_loop" kp-other
cp "$(command -v sleep)" kp-sleeper
./kp-sleeper 2 &
sleeper=$!
"$KBPF" --comm=kp-getter,kp-sleeper -o "$PWD/t" -d 3 > kb.out 2> kb.err &
kb=$!
# ready: its line says so once the running ones are attached
for _ in $(seq 200); do grep -q "^kbpf-trace: tracing processes named" kb.err && break; sleep 0.05; done
expect_eq "the ready line" \
	"kbpf-trace: tracing processes named kp-getter,kp-sleeper: 1 running attached, each one exec'd later from its exec; until --duration ends" \
	"$(cat kb.err)"
./kp-getter 700 > /dev/null
sh -c './kp-getter 300 > /dev/null'
./kp-other 50 > /dev/null
wait $sleeper
wait $kb || fail "kbpf-trace --comm: $(cat kb.err)"
json=$(profile_json t)
# (an exec'd one starts a stream of its own: origin start; each is a run)
expect_eq "traced images (comm origin getppid)" "kp-getter start 300
kp-getter start 700
kp-sleeper attach 0" "$(jq -r '.processes[] | "\(.comm) \(.origin) \([.syscalls[] |
	select(.name == "getppid") | .count] | add // 0)"' <<<"$json" | sort)"
[ "$(jq '[.processes[] | select(.comm == "kp-other")] | length' <<<"$json")" = 0 ] ||
	fail "kp-other was traced"
expect_eq "the attached sleeper ended with exit 0" 0 \
	"$(jq '.processes[] | select(.comm == "kp-sleeper") | .exit_status' <<<"$json")"

# --metrics: the exporter kbpf-trace starts
command -v curl > /dev/null || fail "no curl (make test installs it)"
"$KBPF" --comm=kp-getter --metrics=127.0.0.1:0 -d 4 > m.out 2> m.err &
kb=$!
# (the exporter's address comes first, then kbpf-trace's ready line)
for _ in $(seq 200); do grep -q "^kbpf-trace: tracing processes named" m.err && break; sleep 0.05; done
target=$(sed -n 's#^kanalyze: metrics on http://\(127\.0\.0\.1:[0-9]*\)/metrics$#\1#p' m.err)
[ -n "$target" ] || fail "no exporter address: $(cat m.err)"
./kp-getter 1000 > /dev/null
got=
# (a refused or failed scrape is tried again: under set -e and pipefail
# curl's status would end the test at the first one)
for _ in $(seq 50); do
	got=$(curl -s "http://$target/metrics" |
		sed -n 's/^kprof_syscalls_total{process="kp-getter",syscall="getppid"} //p' || true)
	[ "$got" = 1000 ] && break
	sleep 0.1
done
expect_eq "scrape: kp-getter's getppid" 1000 "$got"
wait $kb || fail "kbpf-trace --metrics: $(cat m.err)"
! kill -0 "$(pgrep -f "kbpf-trace-metrics.$kb.sock" | head -n 1)" 2>/dev/null ||
	fail "the exporter outlived kbpf-trace"
echo "ok: the exporter ended with kbpf-trace"
rc=0
"$KBPF" --comm=kp-getter -p 1 2> bad.err || rc=$?
expect_eq "--comm with -p: exit" 2 "$rc"
