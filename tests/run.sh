#!/bin/bash
# SPDX-License-Identifier: MIT
# Test harness, strace's way: every tests/t_*.sh is one test. It runs real
# programs under the tools and checks exact counts. Exit status of a test:
# 0 pass, 77 skipped (it must print why), 99 the harness broke, else fail.
#
# Usage: tests/run.sh [-j N] [--tier=check] [NAME-PATTERN]
#   -j N          run N tests at once (default 1); a test with a line
#                 `# serial: WHY` (it measures time, or traces by name
#                 every process of the machine) runs alone, after the
#                 others; those with a line `# slow: WHY` start first
#   --tier=check  only the tests with a line `# tier: check`: no root, no
#                 package beyond the build's and jq, minutes (make check)
# A test's time limit is 600 s, times the load per CPU when that is above
# 1 at its start: a busy machine slows a test, it does not fail it.
set -u
cd "$(dirname "$0")/.."
export KPROF_ROOT=$PWD
export BUILD=${BUILD:-$PWD/build}
jobs=1 tier="" pattern=""
while [ $# -gt 0 ]; do
	case $1 in
	-j) jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	--tier=*) tier=${1#--tier=} ;;
	-*) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
	*) pattern=$1 ;;
	esac
	shift
done
case $jobs in ''|*[!0-9]*|0) echo "run.sh: -j wants a number, not '$jobs'" >&2; exit 2 ;; esac
case $tier in ''|check) ;; *) echo "run.sh: unknown tier '$tier' (check)" >&2; exit 2 ;; esac
pass=0 fail=0 skip=0
logdir=$BUILD/test-logs
rm -rf "$logdir"; mkdir -p "$logdir"
ncpu=$(nproc)

# the time limit for a test starting now (TEST_LIMIT=S: S seconds)
limit() {
	[ -n "${TEST_LIMIT:-}" ] && { echo "$TEST_LIMIT"; return; }
	awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$ncpu" \
		'BEGIN { f = l / n; if (f < 1) f = 1; if (f > 8) f = 8; printf "%d", 600 * f }'
}

# stuck DIR: the processes working in DIR (a test's), what each waits in
stuck() {
	local p pids=()
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/cwd" 2>/dev/null) == "$1"* ]] && pids+=("${p#/proc/}")
	done
	echo "run.sh: near its time limit; its processes:"
	[ ${#pids[@]} -gt 0 ] || return 0
	ps -o pid,ppid,stat,wchan:24,etimes,pcpu,args -p "$(IFS=,; echo "${pids[*]}")" | cut -c1-160
}

# run_one NAME: runs tests/NAME.sh; its log, status and seconds in $logdir
run_one() {
	local name=$1 work start rc
	if ! work=$(mktemp -d "${TMPDIR:-/tmp}/kprof-test.XXXXXX"); then
		echo "run.sh: cannot make a directory in ${TMPDIR:-/tmp} (set TMPDIR)" \
			>"$logdir/$name.log"
		echo 99 > "$logdir/$name.rc"
		echo 0 > "$logdir/$name.secs"
		return
	fi
	start=$(date +%s.%N)
	local lim test_pid watch_pid
	lim=$(limit)
	( cd "$work" && TMPDIR=$work timeout "$lim" bash "$KPROF_ROOT/tests/$name.sh" ) \
		>"$logdir/$name.log" 2>&1 &
	test_pid=$!
	# 10 s before the limit: what the test's processes wait in, into its log
	( trap 'kill "$s" 2>/dev/null; exit 0' TERM
	  sleep $((lim - 10)) & s=$!
	  wait "$s"
	  stuck "$work" >>"$logdir/$name.log" 2>&1 ) &
	watch_pid=$!
	wait "$test_pid"
	rc=$?
	kill "$watch_pid" 2>/dev/null
	wait "$watch_pid" 2>/dev/null
	printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)" > "$logdir/$name.secs"
	rm -rf "$work"
	echo "$rc" > "$logdir/$name.rc"
}

# report NAME: its line, and its log's end when it failed
report() {
	local name=$1 rc secs
	rc=$(cat "$logdir/$name.rc") secs=$(cat "$logdir/$name.secs")
	rm -f "$logdir/$name.rc" "$logdir/$name.secs"
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$logdir/$name.log")" ;;
	*) fail=$((fail + 1)) failed+=("$name"); echo "FAIL  $name (exit $rc, ${secs}s)"
	   # why first (a CI page that shortens the log keeps it), then the end
	   grep -m 1 '^FAIL: ' "$logdir/$name.log" | sed 's/^/      why: /'
	   sed 's/^/      | /' "$logdir/$name.log" | tail -n 30 ;;
	esac
}

parallel=() serial=()
for t in $(grep -l '^# slow: ' tests/t_*.sh) $(grep -L '^# slow: ' tests/t_*.sh); do
	name=$(basename "$t" .sh)
	[ -n "$pattern" ] && [[ $name != *$pattern* ]] && continue
	[ -n "$tier" ] && ! grep -q "^# tier: $tier\$" "$t" && continue
	if [ "$jobs" -gt 1 ] && grep -q '^# serial: ' "$t"; then
		serial+=("$name")
	else
		parallel+=("$name")
	fi
done

failed=()
declare -A running=()
for name in "${parallel[@]}"; do
	while [ "${#running[@]}" -ge "$jobs" ]; do
		wait -n
		for pid in "${!running[@]}"; do
			kill -0 "$pid" 2>/dev/null && continue
			wait "$pid"
			report "${running[$pid]}"
			unset "running[$pid]"
		done
	done
	run_one "$name" &
	running[$!]=$name
done
for pid in "${!running[@]}"; do
	wait "$pid"
	report "${running[$pid]}"
done
for name in "${serial[@]}"; do
	run_one "$name"
	report "$name"
done
echo
# the failures again, where the end of a long log is read
for name in "${failed[@]}"; do
	why=$(grep -m 1 '^FAIL: ' "$logdir/$name.log" | cut -c7- || true)
	grep -q '^run.sh: near its time limit' "$logdir/$name.log" &&
		why="${why:+$why; }it did not end within its time limit"
	echo "failed: $name: $why"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
