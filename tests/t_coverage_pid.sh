# SPDX-License-Identifier: MIT
# kanalyze --coverage --pid: two processes of one run, traced by the shim
# and by kbpf-trace at once (tests/getppid_loop 300 and 700, children of
# one shell); --pid keeps the named processes in both traces, so the
# counts are exactly those of that process; a pid that is not in both
# traces is said (exit 1), not answered with the whole run.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/getppid_loop
"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/bpf" -- env KPROF_HOOK=symbols LD_PRELOAD="$SHIM" \
	KPROF_OUT="$PWD/shim" sh -c "$prog 300 & $prog 700 & wait" > out.txt
expect_eq "both ran" "getppid=300 getppid=700" "$(sort out.txt | tr '\n' ' ' | sed 's/ $//')"
shim_json=$(profile_json shim)
pid_of() { jq -r --arg n "$1" '.processes[] | select(.argv[1] == $n) | .pid' <<<"$shim_json"; }
p300=$(pid_of 300)
p700=$(pid_of 700)
[ -n "$p300" ] && [ -n "$p700" ] && [ "$p300" != "$p700" ] || fail "pids of the two loops: '$p300' '$p700'"
echo "ok: getppid_loop 300 is pid $p300, 700 is pid $p700"

# coverage [ARGS...]: "getppid count_a count_b, total count_a count_b"
coverage() {
	"$KANALYZE" --coverage --format=json "$@" shim bpf |
		jq -r '"\([.syscalls[] | select(.name == "getppid") | .count_a] | add // 0) \([.syscalls[] | select(.name == "getppid") | .count_b] | add // 0), \(.total.count_a) \(.total.count_b)"'
}
total() { "$KANALYZE" --format=json --pid="$1" "$2" | jq .total.count; }
for p in "$p300:300" "$p700:700"; do
	pid=${p%%:*} n=${p#*:}
	expect_eq "--pid=$pid: getppid A B, totals A B" \
		"$n $n, $(total "$pid" shim) $(total "$pid" bpf)" "$(coverage --pid="$pid")"
done
expect_eq "--pid=both: getppid" "1000 1000" "$(coverage --pid="$p300,$p700" | cut -d, -f1)"
# without --pid: the whole run (the shell and the shim's helpers call getppid too)
whole="$(syscall_field "$shim_json" getppid count) $(syscall_field "$(profile_json bpf)" getppid count)"
expect_eq "no --pid: getppid (the whole run)" "$whole" "$(coverage | cut -d, -f1)"
"$KANALYZE" --coverage --pid="$p300" shim bpf > table.txt
grep -q '^getppid (110) *300 *300 *100.0%$' table.txt || fail "table row for getppid: $(grep getppid table.txt)"
# -e too applies to both: one row
expect_eq "--pid with -e getppid: rows" 1 \
	"$("$KANALYZE" --coverage --format=json --pid="$p300" -e getppid shim bpf | jq '.syscalls | length')"

# --after-start (rewrite mode: the shim sees every call after its start):
# in the one process, A and B agree on every row
if [ "$(uname -m)" = x86_64 ]; then
	"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/rw/bpf" -- env KPROF_HOOK=rewrite LD_PRELOAD="$SHIM" \
		KPROF_OUT="$PWD/rw/shim" sh -c "$prog 300 & $prog 700 & wait" > /dev/null
	rw_json=$(profile_json rw/shim)
	if [ "$(jq -r .hook_mode <<<"$rw_json")" = rewrite ]; then
		pid=$(jq -r '.processes[] | select(.argv[1] == "700") | .pid' <<<"$rw_json")
		json=$("$KANALYZE" --coverage --after-start --format=json --pid="$pid" rw/shim rw/bpf)
		expect_eq "--after-start --pid=$pid: getppid A B" "700 700" \
			"$(jq -r '.syscalls[] | select(.name == "getppid") | "\(.count_a) \(.count_b)"' <<<"$json")"
		expect_eq "--after-start --pid=$pid: rows where A and B differ" "" \
			"$(jq -r '.syscalls[] | select(.count_a != .count_b) | .name' <<<"$json")"
		expect_eq "--after-start --pid=$pid: total A = the shim's profile of pid $pid" \
			"$(total "$pid" rw/shim)" "$(jq .total.count_a <<<"$json")"
	else
		echo "note: rewrite mode unavailable here: --after-start --pid not tried"
	fi
fi

# a pid in neither trace, or in one only: said, exit 1, no table
rc=0; "$KANALYZE" --coverage --pid=999999999 shim bpf > none.txt 2> none.err || rc=$?
expect_eq "absent pid: exit" 1 "$rc"
expect_eq "absent pid: message" \
	"kanalyze: --pid: no process of these pids in A and B: give pids that both traces hold (two traces of one run: the shim under kbpf-trace)" \
	"$(cat none.err)"
[ ! -s none.txt ] || fail "absent pid: something printed: $(head -n 3 none.txt)"
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/other "$prog" 300 > /dev/null
rc=0; "$KANALYZE" --coverage --pid="$p300" other bpf > /dev/null 2> one.err || rc=$?
expect_eq "pid only in B: exit" 1 "$rc"
expect_eq "pid only in B: message" \
	"kanalyze: --pid: no process of these pids in A (other): give pids that both traces hold (two traces of one run: the shim under kbpf-trace)" \
	"$(cat one.err)"
