#!/bin/bash
# SPDX-License-Identifier: MIT
# How true the shim's time of a short call is: in one process, hook_cost
# alternates blocks of getppid() (or 1-byte reads of /dev/zero) through
# the hooked path with blocks through an unhooked copy of libc's wrapper,
# so the bare cost per call (direct_ns: the plain loop, call and return
# included) is measured in the same run as the calls the shim times. The
# shim's reported average and median for the hooked calls are then set
# beside it, per hook mode. A blocking call too: python3 sleeps 1 ms 200
# times and times each sleep itself (perf_counter_ns around time.sleep);
# the shim's clock_nanosleep average is set beside that mean.
# Usage: scripts/timing-accuracy.sh [ROUNDS] (default 3), from the tree,
# after make. Prints one line per mode, call and round.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${BUILD:-build}")
rounds=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-8s %-8s %5s %10s %12s %12s %8s\n' mode call round bare_ns reported_avg reported_p50 avg/bare
for round in $(seq "$rounds"); do
	for mode in symbols rewrite; do
		for call in getppid read; do
			nr=$([ "$call" = read ] && echo read || echo getppid)
			rm -rf "$work/t"
			out=$(KPROF_HOOK=$mode LD_PRELOAD=$build/libkprof.so KPROF_OUT=$work/t \
				"$build/programs/hook_cost" --against=copy --call="$call" \
				--pairs=400 --block=500 --warm-ms=300)
			bare=$(sed -n 's/^direct_ns=//p' <<<"$out")
			got=$("$build/kanalyze" --format=json "$work/t" |
				jq -r --arg n "$nr" '.hook_mode + " " + ([.syscalls[] | select(.name == $n)] | max_by(.count) | "\(.avg_ns) \(.p50_ns)")')
			read -r ran avg p50 <<<"$got"
			printf '%-8s %-8s %5s %10s %12s %12s %8.3f\n' "$ran" "$call" "$round" "$bare" \
				"$avg" "$p50" "$(echo "$avg / $bare" | bc -l)"
		done
		rm -rf "$work/t"
		bare=$(KPROF_HOOK=$mode LD_PRELOAD=$build/libkprof.so KPROF_OUT=$work/t python3 -c '
import time
t = time.perf_counter_ns
d = []
for _ in range(200):
    a = t(); time.sleep(0.001); d.append(t() - a)
print(sum(d) // len(d))')
		got=$("$build/kanalyze" --format=json "$work/t" |
			jq -r '.hook_mode + " " + ([.syscalls[] | select(.name == "clock_nanosleep")] | max_by(.count) | "\(.avg_ns) \(.p50_ns)")')
		read -r ran avg p50 <<<"$got"
		printf '%-8s %-8s %5s %10s %12s %12s %8.4f\n' "$ran" "sleep1ms" "$round" "$bare" \
			"$avg" "$p50" "$(echo "$avg / $bare" | bc -l)"
	done
done
