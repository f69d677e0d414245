#!/bin/bash
# SPDX-License-Identifier: MIT
# serial: a progress line due after a second of reading
# tier: check
# kanalyze on a terminal says how far reading got, a second in, on one
# stderr line rewritten in place and cleared at the end; never when stderr
# is not a terminal, and never within the first second.
source "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_EVENTS=1 KPROF_GZIP=0 KPROF_OUT=$PWD/one \
	"$BUILD/programs/overhead" --workload=getppid --calls=1000000 > /dev/null
mkdir many
for i in $(seq 1 40); do ln one/*.msgpack "many/t$i.msgpack"; done
start=$(date +%s%N)
script -qec "$KANALYZE --html=r.html many > /dev/null" /dev/null > tty.out
took=$(( ($(date +%s%N) - start) / 1000000 ))
lines=$(grep -c 'kanalyze: reading: ' tty.out || true)
echo "read in $took ms on a terminal: $lines progress lines"
if [ "$took" -ge 1500 ]; then
	grep -q $'\rkanalyze: reading: [0-9.]* s, [0-9]* files, [0-9.]* MB, [0-9]* records\e\[K' \
		tty.out || fail "no progress line: $(cat -v tty.out | head -c 300)"
	grep -q $'\r\e\[K' tty.out || fail "the progress line is not cleared at the end"
	first=$(grep -ao 'reading: [0-9.]* s' tty.out | head -1 | grep -o '[0-9.]*')
	awk -v f="$first" 'BEGIN { exit !(f >= 1.0) }' || fail "progress said at $first s"
	echo "ok: progress said from $first s on, cleared at the end"
else
	[ "$lines" = 0 ] || fail "progress said within the first second"
	echo "ok: read within a second: no progress line"
fi
"$KANALYZE" --html=r2.html many 2> plain.err > /dev/null
[ ! -s plain.err ] || fail "progress on a stderr that is no terminal: $(cat -v plain.err | head -c 200)"
echo "ok: nothing on a stderr that is no terminal"
