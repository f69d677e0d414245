#!/bin/bash
# SPDX-License-Identifier: MIT
# kbpf-trace --stacks: the user stacks of a program built with frame
# pointers name its own functions that called read() and write() (the
# caller of libc's frameless wrapper is recovered from .eh_frame, at each
# call: four callers whose chains are alike each keep their calls), in
# kanalyze --sites and, whole and root first, in --folded; the counts of
# the stacks add up exactly; a fork()ed child resolves with the mappings it
# inherited; the raw_tp programs give the same; a process attached with -p
# (mapped before tracing began: /proc) resolves too.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/bpf_stacks
n=100

# check_sites TRACE READS: the read and write sites of bpf_stacks
check_sites() {
	local trace=$1 reads=$2
	"$KANALYZE" --sites "$trace" > sites.txt
	grep -A3 "^read (0): " sites.txt | grep -Eq "^ +$reads calls .* reader_function \(bpf_stacks\)$" ||
		fail "read not attributed to reader_function: $(grep -A3 '^read ' sites.txt)"
	grep -A3 "^write (1): " sites.txt | grep -Eq "^ +$((2 * reads)) calls .* writer_function \(bpf_stacks\)$" ||
		fail "write not attributed to writer_function: $(grep -A3 '^write ' sites.txt)"
	"$KANALYZE" --folded "$trace" > folded.txt
	grep -Eq "(^|;)bpf_stacks\`main;bpf_stacks\`run_reads;bpf_stacks\`reader_function;libc\.so\.6\`[^;]+;read $reads\$" folded.txt ||
		fail "folded read stack: $(grep ';read ' folded.txt)"
	grep -Eq "(^|;)bpf_stacks\`main;bpf_stacks\`writer_function;libc\.so\.6\`[^;]+;write $((2 * reads))\$" folded.txt ||
		fail "folded write stack: $(grep ';write ' folded.txt)"
	# every call is in exactly one stack: the folded counts add up
	expect_eq "folded calls = profile calls" "$(jq .total.count <<<"$(profile_json "$trace")")" \
		"$(awk '{ n += $NF } END { print n }' folded.txt)"
}

"$KBPF" -s -o t -- "$prog" $n > out.txt || fail "program failed"
expect_eq "program output" "reads=$n writes=$((2 * n))" "$(cat out.txt)"
for f in t/*; do "$BUILD/tests/format_plain" "$f" || fail "$f does not conform to FORMAT.md"; done
check_sites t $n
grep ';read ' folded.txt
grep ';write ' folded.txt
"$KANALYZE" --sites --format=json t > sites.json
# (sites are sorted by time: ld.so's one cold read of the ELF header may
# outweigh the program's reads, so look the site up by name)
expect_eq "json calls of read from reader_function" $n \
	"$(jq '[.syscalls[] | select(.name == "read") | .sites[] |
		select(.site == "reader_function (bpf_stacks)") | .count] | add' sites.json)"

# one libc wrapper called from four functions without frame pointers:
# their frame-pointer chains are the same, and only the return address
# that .eh_frame locates tells them apart, so it is read at every call
# (bpf_find_vma); it used to be read once per chain, and every call went
# to the first caller seen
for how in "" --raw-tp; do
	"$KBPF" $how -s -o "callers$how" -- "$BUILD/tests/mangled_callers" 100 > callers.out ||
		fail "mangled_callers failed ($how)"
	"$KANALYZE" --sites --top=0 -e getppid "callers$how" > callers.txt
	for want in "100 kprof_test::Caller::call(int)" "200 demo::caller" "300 demo::caller_v0" \
		"400 kprof_test::xxx"; do
		awk -v n="${want%% *}" -v f="  ${want#* }" '$1 == n && $2 == "calls" && index($0, f)' \
			callers.txt | grep >/dev/null . || fail "$how: not $want: $(cat callers.txt)"
	done
	echo "ok: ${how:-tp_btf}: each of four callers of getppid has its own calls"
done

# a fork()ed child: its stream has the parent's mappings
"$KBPF" -s -o fork -- "$prog" $n fork > /dev/null || fail "program failed (fork)"
expect_eq "streams" 2 "$(jq '.processes | length' <<<"$(profile_json fork)")"
check_sites fork $n

# the raw_tp programs, per thread
"$KBPF" --raw-tp -t -s -o raw -- "$prog" $n > /dev/null || fail "program failed (--raw-tp -t)"
check_sites raw $n

# attached to a running process: its mappings come from /proc; the
# program (no frame pointers) calls getppid() from main directly
mkfifo go
exec 3<>go
"$BUILD/tests/bpf_phases" 10 500 < go > phases.out 3>&- &
phases=$!
for _ in $(seq 100); do grep -q ready phases.out && break; sleep 0.1; done
"$KBPF" -s -p $phases -o attached 3>&- 2> kbpf.err &
kbpf=$!
for _ in $(seq 100); do ls attached/* > /dev/null 2>&1 && break; sleep 0.1; done
ls attached/* > /dev/null 2>&1 || fail "kbpf-trace did not attach: $(cat kbpf.err)"
exec 3>&-
wait $phases
rc=0; wait $kbpf || rc=$?
expect_eq "kbpf-trace -p exit" 0 "$rc"
"$KANALYZE" --sites attached > sites.txt
grep -A2 '^getppid (110): 500 calls' sites.txt | grep -Eq '^ +500 calls .* main \(bpf_phases\)$' ||
	fail "getppid of the attached process not attributed to main: $(cat sites.txt)"
echo "ok: stacks resolved"
