# SPDX-License-Identifier: MIT
# serial: a fixed port
# kanalyze --listen --metrics: the merged profile of a fleet's producers
# as a Prometheus target, collected by Debian's own prometheus server
# started here on 127.0.0.1. After a known workload (1000 getppid under
# the shim and, as root, 500 more under kbpf-trace, both into the one
# listener), the scrape text passes promtool's check, holds exactly 1500
# calls of getppid for process getppid_loop, and a PromQL query through
# Prometheus's HTTP API returns exactly 1500, and exactly the sum over
# the histogram's +Inf buckets. Without --listen, --metrics is refused.
. "$KPROF_ROOT/tests/lib.sh"
for tool in prometheus promtool curl; do
	command -v $tool >/dev/null || fail "no $tool (Debian's prometheus and curl; make test installs them)"
done
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

"$KANALYZE" --listen="unix:$PWD/k.sock" --metrics=127.0.0.1:0 --refresh=0 > final.txt 2> listen.err &
pids+=($!)
for _ in $(seq 100); do grep -q "metrics on" listen.err && break; sleep 0.05; done
target=$(sed -n 's#^kanalyze: metrics on http://\(127\.0\.0\.1:[0-9]*\)/metrics$#\1#p' listen.err)
[ -n "$target" ] || fail "no metrics address: $(cat listen.err)"
want=1000
KPROF_OUT="unix:$PWD/k.sock" LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" 1000 > /dev/null
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$BUILD/kbpf-trace" -o "unix:$PWD/k.sock" -- "$BUILD/tests/getppid_loop" 500 > /dev/null ||
		fail "kbpf-trace into the listener"
	want=1500
fi
# every producer is done when the listener has seen them close
for _ in $(seq 100); do
	curl -s "http://$target/metrics" > scrape.txt || true # tried again, as the loop says
	grep -q '^kprof_producers_connected 0$' scrape.txt &&
		grep -q "^kprof_syscalls_total{process=\"getppid_loop\",syscall=\"getppid\"} $want\$" scrape.txt && break
	sleep 0.1
done
promtool check metrics < scrape.txt || fail "promtool rejects the scrape text"
expect_eq "scrape: getppid of getppid_loop" "$want" \
	"$(sed -n 's/^kprof_syscalls_total{process="getppid_loop",syscall="getppid"} //p' scrape.txt)"
expect_eq "404 elsewhere" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://$target/other")"

# Prometheus, scraping every second
port=$(free_port)
cat > prometheus.yml <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kprof
    static_configs:
      - targets: ['$target']
YML
prometheus --config.file="$PWD/prometheus.yml" --storage.tsdb.path="$PWD/tsdb" \
	--web.listen-address="127.0.0.1:$port" > prometheus.log 2>&1 &
pids+=($!)
query() {
	curl -s "http://127.0.0.1:$port/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
got=
for _ in $(seq 300); do
	got=$(query 'kprof_syscalls_total{job="kprof",process="getppid_loop",syscall="getppid"}' 2>/dev/null || true)
	[ -n "$got" ] && break
	sleep 0.1
done
[ -n "$got" ] || fail "Prometheus has no sample after 30 s: $(tail -n 5 prometheus.log)"
expect_eq "PromQL: getppid of getppid_loop" "$want" "$got"
expect_eq "PromQL: the histogram's count" "$want" \
	"$(query 'sum(kprof_syscall_seconds_bucket{process="getppid_loop",syscall="getppid",le="+Inf"})')"
echo "ok: $(prometheus --version 2>&1 | head -n 1)"

rc=0
"$KANALYZE" --metrics=127.0.0.1:0 final.txt 2> bad.err || rc=$?
expect_eq "--metrics without --listen: exit" 2 "$rc"
grep -q "^kanalyze: --metrics serves what --listen merges" bad.err || fail "message: $(cat bad.err)"
