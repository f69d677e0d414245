# SPDX-License-Identifier: MIT
# tier: check
# A program that stops or kills all its children (a supervisor cleaning
# up, `pkill -P $$`) also reaches the shim's output process. It must see
# nothing of that: no hang waiting for a stopped writer, nothing on its
# stderr, the same output and status as plain. The trace goes on from the
# program's own process from where the output process left the file, so
# the trace is complete (a stopped one is killed after 200 ms).
. "$KPROF_ROOT/tests/lib.sh"
script='for c in $(cat /proc/$$/task/*/children); do kill -'"'"'$1'"'"' $c 2>/dev/null; done
i=0; while [ $i -lt 200 ]; do i=$((i + 1)); : > f; done; echo "done $1"'
bash_openat() {
	local pid
	pid=$(profile_json "$1" 2> /dev/null | jq '[.processes[] | select(.exe == "/usr/bin/bash")][0].pid')
	"$KANALYZE" --format=json --pid="$pid" "$1" | jq '[.syscalls[] | select(.name == "openat") | .count] | add'
}
for sig in STOP KILL; do
	sh -c "$script" _ $sig > plain-$sig.out 2> plain-$sig.err
	for mode in symbols rewrite; do
		[ $mode = rewrite ] && [ "$(id -u)" != 0 ] && continue
		rc=0
		timeout 60 env KPROF_HOOK=$mode KPROF_INTERVAL_MS=20 LD_PRELOAD=$SHIM \
			KPROF_OUT=$PWD/t-$sig-$mode bash -c "$script" _ $sig \
			> $mode-$sig.out 2> $mode-$sig.err || rc=$?
		expect_eq "$sig $mode: exit status (124: a hang)" 0 "$rc"
		expect_eq "$sig $mode: output" "$(cat plain-$sig.out)" "$(cat $mode-$sig.out)"
		expect_eq "$sig $mode: stderr" "" "$(cat $mode-$sig.err)"
		json=$(profile_json t-$sig-$mode 2> /dev/null)
		# the file goes on from the program's process exactly where the
		# output process left it: complete, nothing lost, the end there
		expect_eq "$sig $mode: drops" 0 "$(jq '.drops.records + .drops.events' <<<"$json")"
		expect_eq "$sig $mode: how the shell's stream ended" "exit 0" \
			"$(jq -r '[.processes[] | select(.exe == "/usr/bin/bash")][0] | "\(.ending) \(.exit_status)"' <<<"$json")"
		# the same shell with `kill -0` (its children untouched): the
		# same openat count (its 200 truncating opens and its own)
		KPROF_HOOK=$mode KPROF_INTERVAL_MS=20 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/c-$sig-$mode \
			bash -c "$script" _ 0 > /dev/null
		expect_eq "$sig $mode: the shell's openat, as with its children untouched" \
			"$(bash_openat c-$sig-$mode)" "$(bash_openat t-$sig-$mode)"
		"$KANALYZE" --strict t-$sig-$mode > /dev/null || fail "$sig $mode: kanalyze --strict failed"
	done
done
