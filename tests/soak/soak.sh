#!/bin/bash
# SPDX-License-Identifier: MIT
# Soak (make soak; not in CI): a Node HTTP server on 127.0.0.1 under the
# shim for SOAK_MINUTES (default 30), driven by a bounded load generator
# (tests/soak/client.js: SOAK_CONCURRENCY keep-alive connections, each
# waiting for its answer). Every SOAK_SAMPLE_S seconds the server's RSS
# and the trace's size are sampled into $BUILD/soak/samples.tsv.
# Pass: the server answers every request, exits 0, its trace decodes, and
# RSS stays flat: the highest RSS of the second half is at most 10% + 4 MiB
# above the highest of the first half (after the first sample, which is
# start-up).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-$PWD/build}
minutes=${SOAK_MINUTES:-30}
every=${SOAK_SAMPLE_S:-10}
conc=${SOAK_CONCURRENCY:-8}
out=$BUILD/soak
rm -rf "$out"; mkdir -p "$out"
command -v node >/dev/null || { echo "soak: node missing (apt-get install nodejs)" >&2; exit 1; }
LD_PRELOAD=$BUILD/libkprof.so KPROF_OUT=$out/trace node tests/soak/server.js > "$out/server.out" &
server=$!
for _ in $(seq 100); do grep -q '^port=' "$out/server.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^port=//p' "$out/server.out")
[ -n "$port" ] || { echo "soak: server did not start" >&2; kill $server; exit 1; }
secs=$((minutes * 60))
node tests/soak/client.js "$port" "$secs" "$conc" > "$out/client.out" &
client=$!
printf 'seconds\trss_kib\ttrace_bytes\n' > "$out/samples.tsv"
start=$SECONDS
while kill -0 $client 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$server/status)
	size=$(du -sb "$out/trace" 2>/dev/null | cut -f1)
	printf '%d\t%s\t%s\n' $((SECONDS - start)) "$rss" "${size:-0}" >> "$out/samples.tsv"
	sleep "$every"
done
wait $client
kill -TERM $server; rc=0; wait $server || rc=$?
cat "$out/client.out" "$out/server.out"
build_kanalyze=$BUILD/kanalyze
"$build_kanalyze" --format=json "$out/trace" > "$out/profile.json"
verdict=$(awk -F'\t' 'NR > 2 { rss[n++] = $2; size = $3; t = $1 }
	END {
		half = int(n / 2); a = 0; b = 0
		for (i = 0; i < half; i++) if (rss[i] > a) a = rss[i]
		for (i = half; i < n; i++) if (rss[i] > b) b = rss[i]
		flat = b <= a * 1.10 + 4096
		printf "samples=%d rss_first_half_max_kib=%d rss_second_half_max_kib=%d trace_bytes=%d trace_bytes_per_min=%d %s\n",
			n, a, b, size, (t > 0 ? size * 60 / t : 0), flat ? "flat" : "GROWING"
	}' "$out/samples.tsv")
echo "soak: $minutes min, $(jq .total.count "$out/profile.json") calls traced; $verdict"
errors=$(sed -n 's/.*errors=//p' "$out/client.out")
[ "$rc" = 0 ] && [ "${errors:-1}" = 0 ] && [[ $verdict == *" flat" ]]
