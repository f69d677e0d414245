#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs every libFuzzer target in $BUILD/fuzz for FUZZ_SECONDS each (two at a
# time, one per core), on a seed corpus made here from real traces: the
# shim's traces of the test programs (plain, gzip, with events, a process
# tree, threads, signals) and the writer's fixture. The corpus grows in
# $BUILD/fuzz/corpus-NAME across runs. Crashes land in $BUILD/fuzz/crashes/;
# copy a crash input to tests/fuzz/regressions/NAME/ to keep it as a test.
# Prints one line per target: "NAME: N runs in S s, corpus C inputs, ok".
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-$PWD/build}
SECONDS_EACH=${FUZZ_SECONDS:-60}
SHIM=$BUILD/libkprof.so
out=$BUILD/fuzz
seeds=$out/seeds
rm -rf "$seeds"; mkdir -p "$seeds" "$out/crashes"

# seed NAME ENV... -- PROGRAM ARGS: the traces of one run as seeds
seed() {
	local name=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	local dir; dir=$(mktemp -d "$seeds/run.XXXXXX")
	env LD_PRELOAD="$SHIM" KPROF_OUT="$dir" "${envs[@]}" "$@" >/dev/null 2>&1 || true
	local i=0
	for f in $(find "$dir" -type f | sort); do
		# cap each seed (16 KiB): libFuzzer's -max_len follows the corpus
		head -c 16384 "$f" > "$seeds/$name.$i"; i=$((i + 1))
	done
	rm -rf "$dir"
}
T=$BUILD/tests
[ -x "$SHIM" ] && [ -x "$T/getppid_loop" ] || { echo "fuzz: build the shim and test programs first (make all)" >&2; exit 99; }
seed getppid -- "$T/getppid_loop" 300
seed getppid-gz KPROF_GZIP=1 -- "$T/getppid_loop" 300
seed events KPROF_EVENTS=1 -- "$T/getppid_loop" 50
seed tree -- "$T/proc_tree"
seed tree-gz KPROF_GZIP=1 -- "$T/proc_tree"
seed eintr KPROF_INTERVAL_MS=1 -- "$T/signal_eintr"
seed churn -- "$T/thread_churn" 2
seed eagain -- "$T/eagain_pipe"
[ -x "$T/gen_trace" ] && "$T/gen_trace" "$seeds/fixture" >/dev/null 2>&1
[ -x "$T/gen_trace" ] && "$T/gen_trace" --gzip "$seeds/fixture-gz" >/dev/null 2>&1
rmdir "$seeds"/run.* 2>/dev/null
echo "fuzz: $(ls "$seeds" | wc -l) seed traces, $SECONDS_EACH s per target"

# run_one NAME: fuzz for SECONDS_EACH; the gzip target gets the seeds
# with a mode byte in front (0: compress them, 1: as they are)
run_one() {
	local name=$1 bin=$out/$1 corpus=$out/corpus-$1 log=$out/$1.log
	mkdir -p "$corpus"
	for f in "$seeds"/*; do
		case $name in
		fuzz_gzip) { printf '\0'; cat "$f"; } > "$corpus/seed-0-$(basename "$f")"
			   { printf '\1'; tail -c +11 "$f"; } > "$corpus/seed-1-$(basename "$f")" ;;
		*) { printf '\0'; cat "$f"; } > "$corpus/seed-$(basename "$f")" ;;
		esac
	done
	(cd "$out/crashes" && ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$SECONDS_EACH" \
		-rss_limit_mb=2048 -timeout=20 -print_final_stats=1 "$corpus" > "$log" 2>&1)
	local rc=$?
	local runs; runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	local secs; secs=$(sed -n 's/^stat::.*total_time.*: *//p' "$log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "$name: ${runs:-?} runs in $SECONDS_EACH s, corpus $(ls "$corpus" | wc -l) inputs, ok"
	else
		echo "$name: FAILED (exit $rc) after ${runs:-?} runs; see $log and $out/crashes"
		grep -m 5 -e 'ERROR:' -e 'SUMMARY' -e 'runtime error' "$log"
	fi
	return $rc
}
rc=0
pids=()
for bin in "$out"/fuzz_*; do
	[ -x "$bin" ] && [ -f "$bin" ] || continue
	run_one "$(basename "$bin")" > "$out/$(basename "$bin").result" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$out"/*.result
exit $rc
