# SPDX-License-Identifier: MIT
# tier: check
# The output process as process tools see it (docs/SHIM.md): a tool that
# matches the program's name (pgrep, pgrep -x, ps -C) counts exactly the
# processes it counts without the shim; the output process is the
# program's only child, named kprof-out; a signal sent to it by a
# `kill $(pidof PROGRAM)` does nothing to it or to the program; and the
# program ends on its own signal as it does without the shim, its trace
# whole.
. "$KPROF_ROOT/tests/lib.sh"
name=kpn$$
cp "$(command -v sleep)" "$name"
count_name() { # how many processes each name-matching tool finds
	echo "$(pgrep -c -x "$name") $(pgrep -c "$name") $(ps -C "$name" -o pid= | wc -l)"
}
running() { # PID: alive and not a zombie waiting for its reaper
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[ "${st:0:1}" != Z ]
}
run_one() { # label, then the env words for the run
	local label=$1 w=
	shift
	env "$@" "./$name" 30 &
	local pid=$!
	local i=0
	while [ "$(pgrep -c -x "$name")" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	sleep 0.3 # the shim's start-up (its output process) is done
	expect_eq "$label: pgrep -x, pgrep, ps -C" "1 1 1" "$(count_name)"
	local kids
	kids=$( (ps -o comm= --ppid "$pid" || true) | sort | tr "\n" " ")
	if [ "$label" = plain ]; then
		expect_eq "$label: children" "" "$kids"
	else
		expect_eq "$label: children" "kprof-out " "$kids"
		w=$(pgrep -P "$pid")
		kill -TERM "$w"
		kill -USR1 "$w"
		sleep 0.2
		expect_eq "$label: the output process after TERM and USR1" kprof-out "$(ps -o comm= -p "$w")"
		expect_eq "$label: the program after them" "$name" "$(ps -o comm= -p "$pid")"
	fi
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	expect_eq "$label: exit status" 143 "$rc"
	# the output process writes the dead program's last batch after the
	# shell has reaped it: the trace is whole once it has gone too
	i=0
	while [ -n "$w" ] && running "$w" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	[ -z "$w" ] || ! running "$w" || fail "$label: the output process outlived its program by 5 s"
}
run_one plain
modes=(symbols)
[ "$(uname -m)" = x86_64 ] && modes+=(rewrite patch)
for m in "${modes[@]}"; do
	run_one "$m" KPROF_HOOK=$m LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$m"
	# the trace is whole: its output process wrote the batch of a program
	# that died of its signal (the same one TERM and USR1 did not reach)
	json=$(profile_json "$PWD/$m") || fail "$m: kanalyze failed"
	expect_eq "$m: the stream's ending and signal" "after_death 15" \
		"$(jq -r '.processes[0] | "\(.ending) \(.exit_signal)"' <<<"$json")"
done
