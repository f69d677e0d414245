#!/bin/bash
# SPDX-License-Identifier: MIT
# Torture suite: real programs and test suites the project did not write
# (Python's regression tests, git, make+gcc, shells with job control, perl,
# tar, sqlite3, http.server with curl, node), each run plain and then under
# the shim in each hook mode. A run under the shim passes when its stdout
# and exit status are byte for byte those of the plain run, it wrote a trace
# that `kanalyze` reads with exit 0 and whose hook mode is the one asked
# for, the shim said nothing on stderr, and the run left no process behind.
#
# Usage: tests/torture/run.sh [--quick] [--mode=M[,M...]|all|both]
#                             [--plain-twice] [--keep] [CASE...]
#   --quick        only the cases marked "# torture: quick", with
#                  TORTURE_QUICK=1 (the CI-sized subset, tests/t_torture_quick.sh)
#   --mode=M       the hook modes to run: symbols, rewrite, patch, auto, a
#                  comma list of them, all (symbols, rewrite, patch: the
#                  default), every (the four), both (symbols and rewrite).
#                  auto is the shim's default: rewrite where the shim can
#                  map page 0 (root), patch elsewhere; its trace must say
#                  which. Where rewrite mode is unavailable (not root) a
#                  rewrite run is reported as SKIP, not run
#   --plain-twice  run the plain run twice and fail a case whose two plain
#                  runs differ (to find flaky tests before excluding them)
#   --keep         keep every run's directory (traces included), not only
#                  those of failed runs
#   CASE           case names (tests/torture/cases/CASE.sh); default all
# Environment: BUILD (default build/ of the tree) holds libkprof.so and
# kanalyze; TORTURE_TIMEOUT_SCALE multiplies every case's timeout (1);
# TORTURE_LOGS (default $BUILD/torture) receives the logs of failed runs:
# CASE/MODE/ (stdout, stderr, the case's working directory, kanalyze's
# output, hang.txt for a timeout) and results.txt.
# One line per case and mode; exit 1 if any run failed, 2 on usage errors.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "torture: no build directory ${BUILD}" >&2; exit 2; }
SHIM=$BUILD/libkprof.so
KANALYZE=$BUILD/kanalyze
scale=${TORTURE_TIMEOUT_SCALE:-1}

quick=0 modes="symbols rewrite patch" plain_twice=0 keep=0 cases=()
for arg; do
	case $arg in
	--quick) quick=1 ;;
	--mode=both) modes="symbols rewrite" ;;
	--mode=all) modes="symbols rewrite patch" ;;
	--mode=every) modes="symbols rewrite patch auto" ;;
	--mode=*)
		modes=${arg#--mode=}
		modes=${modes//,/ }
		for m in $modes; do
			case $m in
			symbols | rewrite | patch | auto) ;;
			*) echo "torture: unknown hook mode $m (symbols, rewrite, patch, auto)" >&2; exit 2 ;;
			esac
		done ;;
	--plain-twice) plain_twice=1 ;;
	--keep) keep=1 ;;
	-h | --help) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	-*) echo "torture: unknown option $arg" >&2; exit 2 ;;
	*) cases+=("$arg") ;;
	esac
done
for f in "$SHIM" "$KANALYZE"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "torture: $f missing (make all)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "torture: jq missing (scripts/install-deps.sh test)" >&2; exit 2; }

# header CASEFILE KEY: the value of "# torture: KEY=VALUE" (or "yes" for a
# bare "# torture: KEY")
header() {
	sed -n 's/^# torture: *//p' "$1" | tr ' ' '\n' |
		awk -F= -v k="$2" '$1 == k { print (NF > 1 ? $2 : "yes"); exit }'
}

if [ ${#cases[@]} -eq 0 ]; then
	for f in "$here"/cases/*.sh; do
		name=$(basename "$f" .sh)
		[ $quick = 1 ] && [ "$(header "$f" quick)" != yes ] && continue
		cases+=("$name")
	done
fi
for c in "${cases[@]}"; do
	[ -f "$here/cases/$c.sh" ] || { echo "torture: no case $c (tests/torture/cases/$c.sh)" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/torture.XXXXXX")
# A case that runs a server as another user (postgres: nobody) needs to
# reach its directory.
chmod 711 "$work"
logs=${TORTURE_LOGS:-$BUILD/torture}
rm -rf "$logs"
mkdir -p "$logs"
trap 'rm -rf "$work"' EXIT
trap 'rm -rf "$work"; exit 130' INT TERM

# Whether rewrite mode is available to this user (it needs the page at
# address 0: root, or vm.mmap_min_addr=0): a traced /bin/true says. Where
# it is not, a rewrite run is skipped and auto is expected to run patch.
probe=$work/probe
LD_PRELOAD="$SHIM" KPROF_OUT="$probe" KPROF_HOOK=rewrite /bin/true
can_rewrite=0
[ "$("$KANALYZE" --format=json "$probe" 2> /dev/null | jq -r .hook_mode 2> /dev/null)" = rewrite ] && can_rewrite=1
rm -rf "$probe"
auto_mode=patch
[ $can_rewrite = 1 ] && auto_mode=rewrite

# session_pids SID: the processes of session SID
session_pids() { ps -e -o pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'; }

# rundir CASE MODE: the directory of one run. Its name has the same length
# for every mode: programs see their paths (an AF_UNIX socket path's limit
# of 107 bytes made test_socket skip tests when only the mode's name made
# the path longer).
rundir() {
	case $2 in
	plain) echo "$work/$1/p0" ;;
	plain2) echo "$work/$1/p1" ;;
	symbols) echo "$work/$1/sy" ;;
	rewrite) echo "$work/$1/rw" ;;
	patch) echo "$work/$1/pa" ;;
	auto) echo "$work/$1/au" ;;
	esac
}

# run_case CASE MODE DIR: one run of CASE in DIR (plain, plain2, symbols,
# rewrite or patch), in a session of its own so that a timeout or a leftover
# process can be found and ended. Sets run_rc, run_secs, run_hang and
# run_left (the leftover processes, one line each).
run_case() {
	local case=$1 mode=$2 dir=$3 limit
	limit=$(header "$here/cases/$case.sh" timeout)
	limit=$(awk -v t="${limit:-300}" -v s="$scale" 'BEGIN { printf "%d", t * s }')
	mkdir -p "$dir/cwd" "$dir/tmp"
	local env=(TMPDIR="$dir/tmp" TORTURE_QUICK=$quick TORTURE_CASES="$here")
	if [ "$mode" != plain ] && [ "$mode" != plain2 ]; then
		env+=(LD_PRELOAD="$SHIM" KPROF_OUT="$dir/trace" KPROF_HOOK="$mode")
	fi
	local start=$EPOCHREALTIME
	# The case inherits stdin, stdout and stderr only.
	(
		cd "$dir/cwd" || exit 99
		for f in /proc/$BASHPID/fd/*; do
			f=${f##*/}
			[ "$f" -gt 2 ] && eval "exec $f>&-"
		done
		exec setsid env "${env[@]}" bash "$here/cases/$case.sh"
	) \
		> "$dir/stdout" 2> "$dir/stderr" < /dev/null &
	local pid=$! deadline=$((SECONDS + limit))
	run_hang=0
	while kill -0 "$pid" 2> /dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			run_hang=1
			ps -s "$pid" -o pid,ppid,pgid,stat,wchan:32,etime,args > "$dir/hang.txt" 2>&1
			local p
			for p in $(session_pids "$pid"); do
				echo "--- $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)"
				cat /proc/$p/stack 2>/dev/null
				for t in /proc/$p/task/*; do echo "task ${t##*/}: $(cat $t/wchan 2>/dev/null) $(cat $t/syscall 2>/dev/null)"; done
			done >> "$dir/hang.txt" 2>&1
			kill -TERM -- $(session_pids "$pid") 2> /dev/null
			sleep 5
			kill -KILL -- $(session_pids "$pid") 2> /dev/null
			break
		fi
		sleep 0.2
	done
	run_rc=0
	wait "$pid" || run_rc=$?
	run_secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	# A process still in the session was left behind by the run (not a
	# zombie: an orphan the init process has yet to reap is not running).
	local tries
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		run_left=$(ps -s "$pid" -o pid=,stat=,args= 2> /dev/null | awk '$2 !~ /^Z/' || true)
		[ -z "$run_left" ] && break
		sleep 0.2
	done
	if [ -n "$run_left" ]; then
		kill -KILL -- $(session_pids "$pid") 2> /dev/null
	fi
}

# describe_rc RC: an exit status in words
describe_rc() {
	if [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
		echo "$1 (SIG$(kill -l $(($1 - 128)) 2>/dev/null))"
	else
		echo "$1"
	fi
}

# save_logs CASE MODE DIR: keep what a failed run left (not the trace,
# which can be large: only its file list)
save_logs() {
	local dest=$logs/$1/$2
	mkdir -p "$dest"
	cp -a "$3/stdout" "$3/stderr" "$dest/" 2> /dev/null
	[ -f "$3/hang.txt" ] && cp "$3/hang.txt" "$dest/"
	[ -d "$3/cwd" ] && cp -a "$3/cwd" "$dest/cwd" 2> /dev/null
	for f in kanalyze.out kanalyze.err profile.json; do
		[ -f "$3/$f" ] && cp "$3/$f" "$dest/"
	done
	[ -d "$3/trace" ] && ls -l "$3/trace" > "$dest/trace.list" 2>&1
	[ $keep = 1 ] && [ -d "$3/trace" ] && cp -a "$3/trace" "$dest/trace"
}

pass=0 fail=0
results=()
suite_start=$SECONDS
printf '%-5s %-34s %-8s %7s  %s\n' "" CASE MODE SECONDS DETAIL
for case in "${cases[@]}"; do
	dir=$work/$case
	run_case "$case" plain "$(rundir "$case" plain)"
	plain_rc=$run_rc plain_secs=$run_secs plain=$(rundir "$case" plain)
	problem=
	if [ $run_hang = 1 ]; then
		problem="plain run hung (timeout): the case is broken"
	elif [ -n "$run_left" ]; then
		problem="plain run left processes: $(echo "$run_left" | head -n 3 | tr '\n' ';')"
	elif [ $plain_twice = 1 ]; then
		run_case "$case" plain2 "$(rundir "$case" plain2)"
		if [ "$run_rc" != "$plain_rc" ] || ! cmp -s "$plain/stdout" "$(rundir "$case" plain2)/stdout"; then
			problem="two plain runs differ (exit $plain_rc, $run_rc): flaky"
			diff "$plain/stdout" "$(rundir "$case" plain2)/stdout" | head -n 20 | sed 's/^/      | /'
		fi
	fi
	if [ -n "$problem" ]; then
		fail=$((fail + 1)); results+=("$case plain FAIL")
		printf 'FAIL  %-34s %-8s %7s  %s\n' "$case" plain "$plain_secs" "$problem"
		save_logs "$case" plain "$plain"
		rm -rf "$dir"
		continue
	fi
	printf '%-5s %-34s %-8s %7s  %s\n' "" "$case" plain "$plain_secs" "exit $(describe_rc "$plain_rc"), $(wc -l < "$plain/stdout") lines"
	for mode in $modes; do
		if [ "$mode" = rewrite ] && [ $can_rewrite = 0 ]; then
			printf 'SKIP  %-34s %-8s %7s  %s\n' "$case" "$mode" - "rewrite mode unavailable to uid $(id -u) (needs page 0: root or vm.mmap_min_addr=0)"
			results+=("$case $mode SKIP")
			continue
		fi
		expect=$mode
		[ "$mode" = auto ] && expect=$auto_mode
		d=$(rundir "$case" "$mode")
		run_case "$case" "$mode" "$d"
		why=()
		[ $run_hang = 1 ] && why+=("hang: killed after the timeout (hang.txt)")
		[ "$run_rc" != "$plain_rc" ] &&
			why+=("exit status $(describe_rc "$plain_rc") plain, $(describe_rc "$run_rc") under the shim")
		cmp -s "$plain/stdout" "$d/stdout" || why+=("stdout differs")
		[ -n "$run_left" ] && why+=("left processes: $(echo "$run_left" | head -n 3 | tr '\n' ';')")
		leak=$(grep -i 'kprof' "$d/stderr" | grep -vxFf <(grep -i kprof "$plain/stderr") | head -n 3)
		[ -n "$leak" ] && why+=("shim message on stderr: $(echo "$leak" | tr '\n' ';')")
		if ! find "$d/trace" -name '*.msgpack*' 2> /dev/null | grep -q .; then
			why+=("no trace written")
		else
			krc=0
			"$KANALYZE" "$d/trace" > "$d/kanalyze.out" 2> "$d/kanalyze.err" || krc=$?
			# A test that kills its own children (test_subprocess's
			# kill and terminate cases, a killpg) leaves losses that
			# kanalyze reports: an image killed before its header
			# (empty file), a stream cut with its output process (a
			# killed process group), a fork child killed before its
			# first batch. Those, and only those, are the workload's;
			# any other message or exit status is a failure.
			losses=$(grep -cE "empty trace file: the process wrote nothing|ended without exit: killed or lost|fork child pid [0-9]+ of pid [0-9]+ has no stream" "$d/kanalyze.err" || true)
			others=$(grep -vcE "empty trace file: the process wrote nothing|ended without exit: killed or lost|fork child pid [0-9]+ of pid [0-9]+ has no stream" "$d/kanalyze.err" || true)
			if [ $krc != 0 ] && ! { [ $krc = 5 ] && [ "$others" = 0 ] && [ "$losses" -gt 0 ]; }; then
				why+=("kanalyze exit $krc: $(head -n 2 "$d/kanalyze.err" | tr '\n' ';')")
			elif [ "$losses" -gt 0 ]; then
				echo "      note: $case $mode: kanalyze reported $losses losses of processes the workload killed, e.g. $(head -n 1 "$d/kanalyze.err" | sed 's#.*/##')"
			fi
			hook=$("$KANALYZE" --format=json "$d/trace" 2> /dev/null | tee "$d/profile.json" | jq -r .hook_mode 2> /dev/null)
			[ "$hook" = "$expect" ] || why+=("trace hook mode ${hook:-unreadable}, not $expect")
		fi
		if [ ${#why[@]} -eq 0 ]; then
			pass=$((pass + 1)); results+=("$case $mode PASS")
			printf 'PASS  %-34s %-8s %7s\n' "$case" "$mode" "$run_secs"
			[ $keep = 1 ] && save_logs "$case" "$mode" "$d"
		else
			fail=$((fail + 1)); results+=("$case $mode FAIL")
			detail=$(printf '%s; ' "${why[@]}")
			printf 'FAIL  %-34s %-8s %7s  %s\n' "$case" "$mode" "$run_secs" "${detail%; }"
			diff "$plain/stdout" "$d/stdout" | head -n 12 | sed 's/^/      | /'
			[ $run_hang = 1 ] && head -n 8 "$d/hang.txt" | sed 's/^/      | /'
			save_logs "$case" "$mode" "$d"
			[ -s "$d/stderr" ] && tail -n 5 "$d/stderr" | sed 's/^/      | stderr: /'
		fi
		rm -rf "$d"
	done
	[ $keep = 1 ] && save_logs "$case" plain "$plain"
	rm -rf "$dir"
done
printf '%s\n' "${results[@]}" > "$logs/results.txt"
echo
echo "torture: ${#cases[@]} cases, modes: $modes, $((SECONDS - suite_start)) s; logs of failed runs in $logs"
echo "torture: $pass passed, $fail failed"
[ $fail -eq 0 ]
