#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the compile-cache daemon (tests/go/ccd) plain and under the shim,
# pass after pass, and says whether the daemon crashed. Each pass starts
# the cgo build of the daemon (dynamically linked: LD_PRELOAD loads the
# shim into it) with an empty cache, sends one request per C file at once
# (a cold pass: every request a miss, each a gcc -c), then the same again
# (a warm pass: every request a hit), stops the daemon and compares what
# the clients and the daemon printed with the plain run's output. The
# clients are the static build, never under the shim.
#
# Usage: tests/go/ccd/run_passes.sh [--modes=M,M...] [--passes=N]
#                                   [--files=N] [--interval=MS] [--inline]
#   --modes     hook modes (KPROF_HOOK): symbols, rewrite, patch, auto
#               (default: all four)
#   --passes    passes per mode (default 5)
#   --files     C files per pass (default 40)
#   --interval  KPROF_INTERVAL_MS for the runs under the shim (unset by
#               default: the shim's own default)
#   --inline    the clients send the source bytes instead of the path
# Environment: BUILD (default build/ of the tree) holds libkprof.so;
# CCD_LOGS (default $BUILD/ccd-passes) receives the directories of failed
# passes (daemon stdout and stderr, client outputs, trace file list).
# Prints one line per pass, then one per mode; exit 0 when every pass
# under the shim matched the plain run, 1 otherwise, 2 on usage errors.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
BUILD=${BUILD:-$root/build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "ccd: no build directory ${BUILD}" >&2; exit 2; }
SHIM=$BUILD/libkprof.so
[ -f "$SHIM" ] || { echo "ccd: $SHIM missing (make all)" >&2; exit 2; }

modes="symbols rewrite patch auto" passes=5 files=40 interval= inline=
for arg; do
	case $arg in
	--modes=*) modes=${arg#--modes=}; modes=${modes//,/ } ;;
	--passes=*) passes=${arg#--passes=} ;;
	--files=*) files=${arg#--files=} ;;
	--interval=*) interval=${arg#--interval=} ;;
	--inline) inline=-inline ;;
	-h | --help) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "ccd: unknown argument $arg" >&2; exit 2 ;;
	esac
done
for m in $modes; do
	case $m in
	symbols | rewrite | patch | auto) ;;
	*) echo "ccd: unknown hook mode $m" >&2; exit 2 ;;
	esac
done
command -v go >/dev/null || { echo "ccd: go missing (golang-go)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "ccd: gcc missing" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ccd.XXXXXX")
logs=${CCD_LOGS:-$BUILD/ccd-passes}
rm -rf "$logs"
mkdir -p "$logs"
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill -KILL "$daemon_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

# Both builds, plain (the go command is itself a cgo program). No module
# is fetched: the program uses the standard library only.
export GOFLAGS="-mod=mod -buildvcs=false" GOPROXY=off
(cd "$here" && go build -o "$work/ccd-cgo" . && CGO_ENABLED=0 go build -o "$work/ccd-static" .) ||
	{ echo "ccd: go build failed" >&2; exit 2; }
ldd "$work/ccd-cgo" | grep -q libc.so || { echo "ccd: the cgo build is not linked to libc" >&2; exit 2; }
"$work/ccd-static" gen "$work/src" "$files" || exit 2

# pass DIR [ENV...]: one pass in DIR with the daemon run under ENV.
# Sets pass_rc (the daemon's exit status, 124 when it had to be killed).
pass() {
	local dir=$1
	shift
	mkdir -p "$dir"
	local sock=$dir/s
	env "$@" "$work/ccd-cgo" daemon "$sock" "$dir/cache" > "$dir/daemon.out" 2> "$dir/daemon.err" &
	daemon_pid=$!
	local i
	for i in $(seq 100); do
		[ -S "$sock" ] && break
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	timeout 120 "$work/ccd-static" client $inline "$sock" "$work"/src/*.c > "$dir/cold.out" 2>&1
	echo "client: exit $?" >> "$dir/cold.out"
	timeout 60 "$work/ccd-static" client $inline "$sock" "$work"/src/*.c > "$dir/warm.out" 2>&1
	echo "client: exit $?" >> "$dir/warm.out"
	timeout 20 "$work/ccd-static" stop "$sock" > "$dir/stop.out" 2>&1
	echo "stop: exit $?" >> "$dir/stop.out"
	for i in $(seq 100); do
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$daemon_pid" 2>/dev/null; then
		kill -KILL "$daemon_pid"
		wait "$daemon_pid"
		pass_rc=124
	else
		pass_rc=0
		wait "$daemon_pid" || pass_rc=$?
	fi
	daemon_pid=
	echo "daemon: exit $pass_rc" >> "$dir/daemon.out"
}

# crash_line DIR: the first line of the Go runtime's crash report, if any
crash_line() {
	grep -m 1 -E 'fatal error|unexpected return pc|^panic|^SIG[A-Z]+:|runtime: |corrupted' "$1/daemon.err"
}

# The reference: a plain pass of the cgo build.
pass "$work/plain"
ref=$work/plain
if [ "$pass_rc" != 0 ] || grep -q '^[^ ]* error ' "$ref/cold.out" "$ref/warm.out"; then
	echo "ccd: the plain pass failed (daemon exit $pass_rc):" >&2
	cat "$ref/daemon.err" "$ref/cold.out" | head -n 20 >&2
	exit 2
fi
echo "plain: cold $(tail -n 2 "$ref/cold.out" | head -n 1)"
echo "plain: warm $(tail -n 2 "$ref/warm.out" | head -n 1)"
echo "plain: $(head -n 1 "$ref/daemon.out")"

bad=0
summary=()
for mode in $modes; do
	crashes=0 cold_crashes=0 warm_crashes=0 diffs=0 msgs=
	for k in $(seq "$passes"); do
		d=$work/$mode.$k
		env=(LD_PRELOAD="$SHIM" KPROF_HOOK="$mode" KPROF_OUT="$d/trace")
		[ -n "$interval" ] && env+=(KPROF_INTERVAL_MS="$interval")
		start=$EPOCHREALTIME
		pass "$d" "${env[@]}"
		secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
		what=()
		crash=$(crash_line "$d")
		if [ "$pass_rc" != 0 ] || [ -n "$crash" ]; then
			crashes=$((crashes + 1))
			# Which pass it died in: the cold one when its client
			# already saw errors.
			if grep -q '^[^ ]* error ' "$d/cold.out"; then
				cold_crashes=$((cold_crashes + 1)); when=cold
			else
				warm_crashes=$((warm_crashes + 1)); when=warm
			fi
			what+=("DAEMON CRASHED ($when pass or later): exit $pass_rc: ${crash:-no runtime message}")
			[ -n "$crash" ] && msgs+="$crash"$'\n'
		fi
		for f in cold warm; do
			cmp -s "$ref/$f.out" "$d/$f.out" || what+=("$f output differs")
		done
		cmp -s "$ref/daemon.out" "$d/daemon.out" || what+=("daemon totals differ")
		if [ ${#what[@]} -eq 0 ]; then
			printf 'PASS  %-8s pass %2d  %5ss\n' "$mode" "$k" "$secs"
		else
			diffs=$((diffs + 1))
			printf 'FAIL  %-8s pass %2d  %5ss  %s\n' "$mode" "$k" "$secs" "$(printf '%s; ' "${what[@]}")"
			mkdir -p "$logs/$mode.$k"
			cp "$d"/*.out "$d"/daemon.err "$logs/$mode.$k/"
			[ -d "$d/trace" ] && ls -l "$d/trace" > "$logs/$mode.$k/trace.list"
			bad=1
		fi
		rm -rf "$d"
	done
	line="$mode: $passes passes, $crashes daemon crashes ($cold_crashes in the cold pass, $warm_crashes later), $diffs passes failed"
	[ -n "$msgs" ] && line+="; messages: $(printf '%s' "$msgs" | sed 's/0x[0-9a-f]*/0x?/g' | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)"
	summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
[ $bad = 1 ] && echo "logs of failed passes: $logs"
exit $bad
