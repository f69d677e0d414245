# SPDX-License-Identifier: MIT
# Every counted call is in --sites and --folded: calls the shim counted
# without a site (exec and exit, calls accounted in the process totals) and
# kbpf-trace's calls without a stack stand under "[unknown site]", so that
# the sites and the folded stacks of a real Node program add up exactly to
# the profile's count, in symbol mode, rewrite mode and under kbpf-trace
# --stacks (sites once had no row for such calls: --folded summed to
# 3,017 of 3,234 calls).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
app=$KPROF_ROOT/programs/node/host.js
sums() { # TRACE: the profile's count, the sites' and the folded lines'
	local total sites folded
	total=$("$KANALYZE" --format=json "$1" | jq .total.count)
	sites=$("$KANALYZE" --sites --top=0 --format=json "$1" | jq '[.syscalls[].sites[].count] | add')
	folded=$("$KANALYZE" --folded "$1" | awk '{ s += $NF } END { print s + 0 }')
	expect_eq "$1: calls at sites" "$total" "$sites"
	expect_eq "$1: calls in folded stacks" "$total" "$folded"
}
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/symbols node "$app" > /dev/null
sums symbols
if rewrite_possible; then
	KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/rewrite node "$app" > /dev/null
	sums rewrite
else
	echo "rewrite mode not possible here: its part is left out"
fi
"$KBPF" --stacks -o "$PWD/bpf" -- node "$app" > /dev/null
sums bpf
# exact: the one exit_group of a small program has no site, and says so
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/small "$BUILD/tests/sites_calls" 10 > /dev/null
"$KANALYZE" --sites small > small.txt
grep -A1 '^exit_group (231): 1 calls' small.txt | grep >/dev/null '^ *1 calls .* \[unknown site\]$' ||
	fail "exit_group not under [unknown site]: $(cat small.txt)"
"$KANALYZE" --folded small > small.folded
grep -qx '\[unknown_site\];exit_group 1' small.folded || fail "folded: $(cat small.folded)"
