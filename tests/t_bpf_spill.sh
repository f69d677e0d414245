#!/bin/bash
# SPDX-License-Identifier: MIT
# Calls whose per-CPU aggregation entry cannot be made (map full, or no
# memory in a burst of new images) go to the spill maps and are counted
# exactly; beyond those they are lost, in a drop record and on stderr.
# --map-entries=N-4 leaves room for all but 4 of the program's N syscalls
# (35; 36 in a sanitized build) and for N/16 of its 4 errno keys: the
# rest in the spill maps of 4. 4 leaves 8.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/bpf_same_calls
rows='[.syscalls[] | {name, count, errors, retries, errno}] | sort_by(.name)'
"$KBPF" -o full -- "$prog" > /dev/null || fail "the program failed under kbpf-trace"
full=$(profile_json full)
n=$(jq '.syscalls | length' <<<"$full")
keys=$(jq '[.syscalls[].errno // {} | keys | length] | add' <<<"$full")
echo "the program: $n syscalls, $keys errno keys"
[ "$n" -ge 30 ] && [ "$n" -le 60 ] || fail "$n syscalls: not the program's 35"
expect_eq "errno keys of the program" 4 "$keys"
entries=$((n - 4))
[ $((entries / 16)) -lt "$keys" ] || fail "--map-entries=$entries would not spill errno keys"

"$KBPF" --map-entries=$entries -o spill -- "$prog" > /dev/null 2> spill.err ||
	fail "the program failed under kbpf-trace --map-entries=$entries"
spill=$(profile_json spill)
expect_eq "every call, error and errno with full maps" \
	"$(jq -c "$rows" <<<"$full")" "$(jq -c "$rows" <<<"$spill")"
expect_eq "drops" 0 "$(jq '.drops.events + .drops.records' <<<"$spill")"
[ ! -s spill.err ] || fail "kbpf-trace said something: $(cat spill.err)"

"$KBPF" --map-entries=4 -o lost -- "$prog" > /dev/null 2> lost.err ||
	fail "the program failed under kbpf-trace --map-entries=4"
cat lost.err
lost=$(profile_json lost)
expect_eq "syscalls kept" 8 "$(jq '.syscalls | length' <<<"$lost")"
dropped=$(jq '.drops.events' <<<"$lost")
expect_eq "calls kept + calls lost" "$(jq '.total.count' <<<"$full")" \
	$(( $(jq '.total.count' <<<"$lost") + dropped ))
# a syscall kept is kept whole: its entry was made at its first call
expect_eq "the kept syscalls' counts" \
	"$(jq -c --argjson l "$lost" "[.syscalls[] | select(.name as \$n | \$l.syscalls | any(.name == \$n)) | {name, count}] | sort_by(.name)" <<<"$full")" \
	"$(jq -c '[.syscalls[] | {name, count}] | sort_by(.name)' <<<"$lost")"
expect_eq "said on stderr" \
	"kbpf-trace: the trace is incomplete: lost $dropped calls, 0 records in 1 process image: calls not counted: aggregation maps full, or task storage refused" \
	"$(cat lost.err)"

"$KBPF" --map-entries=0 -- true 2> bad.err && fail "--map-entries=0 accepted"
grep -q "invalid --map-entries" bad.err || fail "no message for --map-entries=0: $(cat bad.err)"
echo "ok: --map-entries=0 refused"
