# SPDX-License-Identifier: MIT
# The accounting identity of kanalyze --coverage --after-start, on programs
# nobody here wrote (cat, python3, node) traced by the shim and kbpf-trace
# at once, in both hook modes: every call the kernel saw in a process image
# the shim traced is before the shim's start-up (the loader), in its
# start-up, one of the shim's own calls after it, a call of the program's
# the shim counted, or one it did not see; minus what the shim counted
# beyond the kernel's calls. The categories must add up to the kernel's
# total as its aggregates give it (not the events the accounting was made
# from); in rewrite mode nothing is unseen and nothing over-counted; in
# symbol mode nothing is over-counted (no row above 100%: the shim's raw
# wrappers once counted each program call as one of its own too).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
cat > getppid.py <<'EOF'
import os
for _ in range(10000):
    os.getppid()
EOF
check() { # MODE NAME CMD...
	local mode=$1 name=$2 dir=$1-$2
	shift 2
	local lost
	# (a run in which kbpf-trace reported a loss is made again: both)
	REWRITE_HOOK=$mode both "$PWD/$dir" "$@"
	expect_eq "$dir: exit status" 0 "$both_rc"
	lost=$("$KANALYZE" --format=json "$dir/bpf" | jq '.drops.events + .drops.records')
	expect_eq "$dir: kbpf-trace lost nothing" 0 "$lost"
	"$KANALYZE" --coverage --after-start "$dir/shim" "$dir/bpf" > "$dir/table.txt"
	local json acc b_total
	json=$("$KANALYZE" --coverage --after-start --format=json "$dir/shim" "$dir/bpf")
	acc=$(jq -c .accounting <<<"$json")
	echo "$dir: $acc"
	b_total=$("$KANALYZE" --format=json "$dir/bpf" | jq .total.count)
	expect_eq "$dir: B's calls, events and aggregates" "$b_total" "$(jq .b_total <<<"$acc")"
	expect_eq "$dir: categories add up to B's calls in the traced images" \
		"$(jq '.b_total - .untraced' <<<"$acc")" \
		"$(jq '.before_startup + .startup + .own + .counted + .in_progress + .unseen - .over' <<<"$acc")"
	expect_eq "$dir: nothing counted beyond the kernel's calls" 0 "$(jq .over <<<"$acc")"
	expect_eq "$dir: no syscall above 100%" "" \
		"$(jq -r '.syscalls[] | select(.count_a > .count_b) | .name' <<<"$json")"
	jq -e '.startup_counted_by_a <= .startup and .startup > 0 and .own > 0 and
		.before_startup > 0' <<<"$acc" > /dev/null ||
		fail "$dir: start-up categories implausible: $acc"
	grep -q "^ *$(jq .unseen <<<"$acc")  the program's, not seen by A$" "$dir/table.txt" ||
		fail "$dir: the table does not show the accounting"
	if [ "$mode" = rewrite ]; then
		expect_eq "$dir: rewrite mode, nothing unseen" 0 "$(jq .unseen <<<"$acc")"
	fi
}
for mode in symbols rewrite; do
	[ "$mode" = rewrite ] && ! rewrite_possible && { echo "rewrite mode not possible here"; continue; }
	check "$mode" cat cat /dev/null
	check "$mode" python3 /usr/bin/python3 getppid.py
	check "$mode" node node "$KPROF_ROOT/programs/node/host.js"
done
# symbol mode: python's 10,000 getppid() are the program's, counted once
json=$("$KANALYZE" --coverage --after-start --format=json symbols-python3/shim symbols-python3/bpf)
expect_eq "python3 getppid, shim" 10000 "$(jq '.syscalls[] | select(.name == "getppid") | .count_a' <<<"$json")"
expect_eq "python3 getppid, kernel" 10000 "$(jq '.syscalls[] | select(.name == "getppid") | .count_b' <<<"$json")"
