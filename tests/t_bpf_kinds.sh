#!/bin/bash
# SPDX-License-Identifier: MIT
# Descriptor kinds read in the kernel (task->files->fdt->fd[fd]->f_inode
# at sys_enter): a program makes N calls on pipes, a socketpair, a regular
# file, /dev/null, an eventfd, a closed descriptor and an epoll set.
# kbpf-trace's `kinds` counters, minus those of the same program with
# N = 0 (the dynamic loader's reads and closes of libc), are exactly the
# program's own calls, equal the shim's, also with --raw-tp; events carry
# the fd and kind (rebuilt views agree); calls without a descriptor argument
# have no kind.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
prog=$BUILD/tests/bpf_kinds
n=100

# kinds TRACE [KANALYZE OPTIONS]: "kind syscall count/retries/errors" lines
kinds() {
	local trace=$1; shift
	"$KANALYZE" --by=kind --format=json "$@" "$trace" | jq -r '.kind_profiles | to_entries[] |
		select(.key != "none" and .key != "unknown") | .key as $k | .value.syscalls[] |
		"\($k) \(.name) \(.count) \(.retries) \(.errors)"' | sort
}
# minus A B: the lines of A less the counters of B's same (kind, syscall)
minus() {
	join -a 1 -e 0 -o 0,1.2,1.3,1.4,2.2,2.3,2.4 \
		<(awk '{ print $1 "/" $2, $3, $4, $5 }' "$1" | sort) \
		<(awk '{ print $1 "/" $2, $3, $4, $5 }' "$2" | sort) |
		awk '{ c = $2 - $5; r = $3 - $6; e = $4 - $7; if (c) { sub("/", " ", $1); print $1, c, r, e } }' | sort
}

"$KBPF" -o base -- "$prog" 0 || fail "program failed (N = 0)"
"$KBPF" -o full -- "$prog" $n || fail "program failed"
kinds base > base.txt
kinds full > full.txt
minus full.txt base.txt > own.txt
cat > want.txt <<EOT
file lseek $n 0 0
file pread64 $n 0 0
file read $n 0 0
file write $n 0 0
other epoll_wait $n 0 0
other read $((2 * n)) 0 $n
pipe read $((2 * n)) $n 0
pipe write $n 0 0
socket read $n 0 0
socket recvfrom $n 0 0
socket sendto $n 0 0
EOT
sort -o want.txt want.txt
echo "kbpf-trace, the program's own calls by kind:"; cat own.txt
expect_eq "kinds (count retries errors) = the program's" "$(cat want.txt)" "$(cat own.txt)"
echo "set-up calls by kind (N = 0): $(tr '\n' ';' < base.txt)"
json=$(profile_json full)
expect_eq "getppid has no kind" "" "$(grep ' getppid ' full.txt || true)"
expect_eq "getppid under none" $n \
	"$("$KANALYZE" --by=kind --format=json full | jq '[.kind_profiles.none.syscalls[] | select(.name == "getppid") | .count] | add')"
expect_eq "sections add up to the total" "$(jq .total.count <<<"$json")" \
	"$("$KANALYZE" --by=kind --format=json full | jq '[.kind_profiles[] | .total.count] | add')"

# raw_tp programs and event records: the same counts; the events carry
# fd and kind, so a view rebuilt from them (--succeeded) has the kinds too
"$KBPF" --raw-tp -E -o raw -- "$prog" $n || fail "program failed (--raw-tp -E)"
kinds raw > raw.txt
expect_eq "--raw-tp kinds = tp_btf kinds" "$(cat full.txt)" "$(cat raw.txt)"
"$BUILD/tests/format_plain" raw/* || fail "events with fd and kind do not conform to FORMAT.md"
kinds raw --succeeded > succeeded.txt
expect_eq "pipe reads from events (--succeeded)" "pipe read $n 0 0" "$(grep '^pipe read ' succeeded.txt)"
expect_eq "other reads from events (--succeeded)" "other read $n 0 0" "$(grep '^other read ' succeeded.txt)"
expect_eq "socket sends from events" "socket sendto $n 0 0" "$(grep '^socket sendto ' succeeded.txt)"

# the shim counts the same (it sees no set-up call with a descriptor)
if [ -f "$SHIM" ]; then
	LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim "$prog" $n || fail "program failed under the shim"
	kinds shim > shim.txt
	expect_eq "shim kinds = kbpf-trace kinds (less the loader's)" "$(cat shim.txt)" "$(cat own.txt)"
else
	echo "shim not built: no comparison with it"
fi
