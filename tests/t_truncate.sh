#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze on a trace cut at every byte offset, plain and gzip: it never
# crashes (no signal, no sanitizer report), always prints a profile, and
# its exit status is exactly
#   plain: 0 when the cut falls on a record boundary, else 5 (damaged);
#   gzip:  0 only for the whole file, else 5 (a gzip stream cut anywhere
#          else is truncated, even between records);
#   both:  5 for the empty file (a process whose trace never arrived).
# Uses a real shim trace of tests/getppid_loop when both are built, else
# the fixture of tests/gen_trace.c.
source "$KPROF_ROOT/tests/lib.sh"
FORMAT_PLAIN=$BUILD/tests/format_plain
[ -x "$KANALYZE" ] && [ -x "$FORMAT_PLAIN" ] || fail "kanalyze or format_plain not built"

if [ -x "$SHIM" ] && [ -x "$BUILD/tests/getppid_loop" ]; then
	mkdir real
	KPROF_OUT=$PWD/real/ LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" >/dev/null
	src=$(find real -name '*.msgpack' | sort | head -n 1)
	[ -n "$src" ] || fail "the shim wrote no *.msgpack file under real/"
	cp "$src" t.msgpack
	gzip -c -n t.msgpack > t.msgpack.gz
	echo "trace: real shim trace of getppid_loop"
else
	"$BUILD/tests/gen_trace" t.msgpack
	"$BUILD/tests/gen_trace" --gzip t.msgpack.gz # Z_SYNC_FLUSH per record
	echo "trace: fixture (shim or getppid_loop not built)"
fi
"$FORMAT_PLAIN" --offsets t.msgpack > boundaries || fail "trace does not decode"
"$KANALYZE" --format=json t.msgpack > whole.json || fail "whole trace: exit $?"
whole_total=$(jq .total.count whole.json)

# prefixes FILE KIND: writes KIND/in/N = the first N bytes of FILE, for
# every N, in one process (perl is essential on Debian): spawning a
# cutter per offset would double the run time.
prefixes() {
	mkdir -p "$2/in"
	perl -e 'local $/; my $d = <STDIN>; for my $i (0 .. length $d) {
		open(my $f, ">", "$ARGV[0]/$i") or die; print $f substr($d, 0, $i); }' \
		"$2/in" < "$1"
}

# Every offset. A sanitized kanalyze (make SAN=1) starts ~20 times slower,
# so there every 5th offset and each boundary with its neighbours is tried
# instead; KPROF_TRUNCATE_STEP overrides.
step=${KPROF_TRUNCATE_STEP:-1}
if [ -z "${KPROF_TRUNCATE_STEP:-}" ] && ldd "$KANALYZE" 2>/dev/null | grep >/dev/null libasan; then
	step=5
	echo "note: sanitized kanalyze: every ${step}th offset plus the record boundaries"
fi

# run_cuts KIND LIST: kanalyze on the prefixes listed in the file LIST,
# writing "offset expected-status status" lines to LIST.results
run_cuts() {
	local kind=$1 list=$2 size cut rc expect
	size=$(($(ls "$kind/in" | wc -l) - 1))
	declare -A boundary=([$size]=1)
	if [ "$kind" = plain ]; then
		while read -r b; do boundary[$b]=1; done < boundaries
	fi
	while read -r cut; do
		rc=0
		"$KANALYZE" --format=json "$kind/in/$cut" > "$kind/$cut.json" 2> "$kind/$cut.err" || rc=$?
		expect=5
		[ -n "${boundary[$cut]:-}" ] && expect=0
		echo "$cut $expect $rc"
	done < "$list" > "$list.results"
}

start=$SECONDS
prefixes t.msgpack plain
prefixes t.msgpack.gz gzip
for kind in plain gzip; do
	size=$(($(ls "$kind/in" | wc -l) - 1))
	{
		seq 0 "$step" "$size"
		echo "$size"
		if [ "$kind" = plain ]; then
			awk -v s="$size" '{ print $1 - 1; print $1; if ($1 < s) print $1 + 1 }' boundaries
		fi
	} | sort -n -u > $kind.offsets
	# two workers, for two cores
	awk 'NR % 2' $kind.offsets > $kind.list1
	awk '!(NR % 2)' $kind.offsets > $kind.list2
	run_cuts $kind $kind.list1 &
	run_cuts $kind $kind.list2 &
done
wait
for kind in plain gzip; do sort -n $kind.list*.results > $kind.results; done

for kind in plain gzip; do
	n=$(wc -l < $kind.results)
	crashes=$(awk '$3 >= 128' $kind.results | head -n 3)
	[ -z "$crashes" ] || fail "$kind: kanalyze died (offset expected rc): $crashes"
	if grep -l -e 'AddressSanitizer' -e 'runtime error' -e 'LeakSanitizer' $kind/*.err >/dev/null 2>&1; then
		fail "$kind: sanitizer report: $(grep -l -e Sanitizer -e 'runtime error' $kind/*.err | head -n 1)"
	fi
	wrong=$(awk '$2 != $3' $kind.results | head -n 5)
	[ -z "$wrong" ] || fail "$kind: wrong exit status (offset expected got): $wrong"
	zeros=$(awk '$3 == 0' $kind.results | wc -l)
	echo "ok: $kind: $n cuts, $zeros at boundaries exit 0, the rest exit 5"
	# every damaged cut names the file and a byte offset
	silent=$(awk -v k=$kind '$3 == 5 { print k "/" $1 ".err" }' $kind.results |
		xargs -r grep -L -e "^kanalyze: $kind/in/[0-9]*: .* at byte [0-9]" \
			-e "^kanalyze: $kind/in/0: empty trace file: " | head -n 3)
	[ -z "$silent" ] || fail "$kind: exit 5 without a damage message: $silent: $(cat ${silent%% *})"
	# every cut still printed a profile
	valid=$(cd $kind && jq -r 'if (.syscalls | type) == "array" and (.total.count | type) == "number" then "ok" else "bad" end' *.json | grep -c '^ok$')
	expect_eq "$kind: profiles printed" "$n" "$valid"
	last=$(tail -n 1 $kind.offsets)
	expect_eq "$kind: whole file total" "$whole_total" "$(jq .total.count $kind/$last.json)"
done
echo "ok: done in $((SECONDS - start)) s"
