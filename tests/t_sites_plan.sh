# SPDX-License-Identifier: MIT
# tier: check
# `kprof-sites --plan`: for each syscall site, the window of whole
# instructions that a 5-byte jmp to a trampoline can replace (the
# unprivileged hook mode's patches), or why there is none. Checked exactly
# on tests/plan_cases.c, whose functions are written instruction by
# instruction: a wrapper (mov + syscall: 7 bytes), a retry loop that jumps
# back to the syscall (the window must start at it: syscall + cmp, 6), a
# site boxed in by relative jumps and a jump target (none), and a
# RIP-relative load inside the window (its disp32 named); two functions
# with no FDE but a sized symbol (hand-written assembly, Go): bounded by
# the symbol table, the window of one that another falls into starts at
# its entry (syscall + cmp, 8), not at the mov before it; a syscall that a
# rel32 jmp from a far function lands on, and one a rel8 jmp lands on from
# just before its function, after 70,000 bytes nothing describes: both
# windows start at the syscall (the branch targets are found without
# decoding the whole section). On libc, every
# site the rewrite sweep finds gets exactly one line, and --plan-bin (the
# binary form for the shim) holds the same windows.
source "$KPROF_ROOT/tests/lib.sh"
SITES=$BUILD/kprof-sites
CASES=$BUILD/tests/plan_cases
[ "$(uname -m)" = x86_64 ] || skip "kprof-sites decodes x86_64 only"
"$SITES" --plan "$CASES" > plan.txt
cat plan.txt
addr() { printf '0x%x' $(( 16#$(nm "$CASES" | awk -v s="$1" '$3 == s { print $1 }') + $2 )); }
line() { grep "^$(addr "$1" "$2") " plan.txt || echo "(no line for $1+$2)"; }
expect_eq "wrapper" "$(addr plan_wrapper 5) patch $(addr plan_wrapper 0) 7 insns=5,2" \
	"$(line plan_wrapper 5)"
expect_eq "jump target at the syscall" \
	"$(addr plan_target 5) patch $(addr plan_target 5) 6 insns=2,4" "$(line plan_target 5)"
expect_eq "boxed in" \
	"$(addr plan_none 2) nopatch no 5-byte window of movable whole instructions" \
	"$(line plan_none 2)"
expect_eq "RIP-relative" "$(addr plan_rip 6) patch $(addr plan_rip 0) 8 insns=6,2 rip=2" \
	"$(line plan_rip 6)"
expect_eq "symbol only" "$(addr plan_sym 5) patch $(addr plan_sym 0) 7 insns=5,2" \
	"$(line plan_sym 5)"
expect_eq "symbol only, entered by a fall-through" \
	"$(addr plan_sym_entry 0) patch $(addr plan_sym_entry 0) 8 insns=2,6" \
	"$(line plan_sym_entry 0)"
expect_eq "jumped into from a far function" \
	"$(addr plan_far 5) patch $(addr plan_far 5) 8 insns=2,6" "$(line plan_far 5)"
expect_eq "jumped into by a rel8 jmp before the function" \
	"$(addr plan_rel8 5) patch $(addr plan_rel8 5) 8 insns=2,6" "$(line plan_rel8 5)"
expect_eq "lines for the cases" 8 "$(wc -l < plan.txt)"

LIBC=$(ldd /bin/true | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -r "$LIBC" ] || fail "no libc found through ldd /bin/true"
"$SITES" --plan "$LIBC" > libc.txt
"$SITES" "$LIBC" > libc.bin
sites=$(od -An -t u8 -j 8 -N 8 libc.bin | tr -d ' ')
expect_eq "libc: one line per site" "$sites" "$(wc -l < libc.txt)"
bad=$(grep -cvE '^0x[0-9a-f]+ (patch 0x[0-9a-f]+ [0-9]+ insns=[0-9,]+( rip=[0-9,]+)?|nopatch .+)$' libc.txt || true)
expect_eq "libc: lines that are neither a window nor a reason" 0 "$bad"
echo "libc: $(grep -c ' patch ' libc.txt) of $sites sites patchable"
# --plan-bin, what the shim will read, holds the same windows
"$SITES" --plan-bin "$LIBC" > libc.plan
expect_eq "--plan-bin magic" KPRFPLN1 "$(head -c 8 libc.plan)"
expect_eq "--plan-bin windows" "$(grep -c ' patch ' libc.txt)" \
	"$(od -An -t u8 -j 8 -N 8 libc.plan | tr -d ' ')"
expect_eq "--plan-bin size" $(( 24 + 24 * $(grep -c ' patch ' libc.txt) )) "$(stat -c %s libc.plan)"
last=0
while read -r site word start len _; do
	if [ "$word" = patch ] && [ $((site + 2)) -eq $((start + len)) ]; then
		last=$((last + 1))
	fi
done < libc.txt
echo "libc: $last windows end with their syscall"
