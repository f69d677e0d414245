# SPDX-License-Identifier: MIT
# kanalyze --coverage: the same program traced by the shim and by
# kbpf-trace; the shim's share of getppid is exactly 1000 of 1500 (500 calls
# are made with a bare syscall instruction that no libc symbol sees).
# Symbol mode: the 500 bare instructions are what it cannot see (rewrite
# mode sees all 1500: t_rewrite_coverage.sh).
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
export KPROF_HOOK=symbols
prog=$BUILD/tests/coverage_mix
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim "$prog"
"$BUILD/kbpf-trace" -o "$PWD/bpf" -- "$prog"
json=$("$KANALYZE" --coverage --format=json shim bpf)
expect_eq "getppid seen by the shim" 1000 "$(jq '.syscalls[] | select(.name == "getppid") | .count_a' <<<"$json")"
expect_eq "getppid seen by kbpf-trace" 1500 "$(jq '.syscalls[] | select(.name == "getppid") | .count_b' <<<"$json")"
expect_eq "getppid share" 0.667 "$(jq '.syscalls[] | select(.name == "getppid") | .share * 1000 | round / 1000' <<<"$json")"
# every call the shim saw, the kernel saw too (the shim's own flush writes
# are the kernel's only extra); totals are consistent with the rows
jq -e '.total.count_a == ([.syscalls[].count_a] | add) and .total.count_b == ([.syscalls[].count_b] | add)' <<<"$json" >/dev/null ||
	fail "totals do not add up"
"$KANALYZE" --coverage shim bpf | tee table.txt
grep -q '^getppid (110) *1000 *1500 *66.7%$' table.txt || fail "table row for getppid wrong"
# usage errors
set +e
"$KANALYZE" --coverage shim 2>err.txt; rc=$?
set -e
expect_eq "one trace only: usage error" 2 "$rc"
grep -q 'exactly two traces' err.txt || fail "no clear message: $(cat err.txt)"
