# SPDX-License-Identifier: MIT
# Rewrite mode and code made executable at run time (a JIT's mprotect to
# PROT_EXEC): `mov $nr, %eax; syscall` in pages the program wrote, one in
# a single page, one whose `syscall` straddles two pages made executable
# together, one straddling two pages made executable one after the other;
# and a `syscall` straddling two pages of the executable's own text. Every
# call is seen (the program makes the same calls through libc as well, to
# check the results: twice the count). A NULL function call still faults.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
both jit "$BUILD/tests/rewrite_cases" jit 1000
expect_eq "jit: exit status" 0 "$both_rc"
expect_eq "jit: output" "jit=1000 ok" "$(cat jit/out.txt)"
expect_eq "getppid (one page)" 2000 "$(shim_count jit getppid)"
expect_eq "getuid (straddling, made executable together)" 2000 "$(shim_count jit getuid)"
expect_eq "getgid (straddling, made executable page by page)" 2000 "$(shim_count jit getgid)"
exact_coverage jit

both straddle "$BUILD/tests/rewrite_cases" straddle 1000
expect_eq "straddle: exit status" 0 "$both_rc"
expect_eq "straddle: output" "straddle=1000 ok" "$(cat straddle/out.txt)"
expect_eq "getppid (straddling two pages of the text)" 2000 "$(shim_count straddle getppid)"
exact_coverage straddle

# a call through a NULL function pointer (in the `call *%rax` form of a
# rewritten site) still dies of SIGSEGV with the page at 0 mapped
rc=0; "$BUILD/tests/rewrite_cases" nullcall 2>/dev/null || rc=$?
expect_eq "NULL call, plain: status" 139 "$rc"
rc=0
KPROF_DEBUG=1 KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/null \
	"$BUILD/tests/rewrite_cases" nullcall 2>null.err || rc=$?
expect_eq "NULL call, rewrite mode: status" 139 "$rc"
grep -q '^kprof: rewrite mode: ' null.err || fail "rewrite mode was not on: $(cat null.err)"

# a site the hook has remembered (the thread's last site), unmapped, and
# new code at the same address with `call *%rax` where the syscall was: no
# longer a site, it must fault as without the shim
rc=0; "$BUILD/tests/rewrite_cases" stalesite > stale.out 2>/dev/null || rc=$?
expect_eq "stale site, plain: status" 139 "$rc"
rc=0
KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/stale \
	"$BUILD/tests/rewrite_cases" stalesite > stale.out 2>/dev/null || rc=$?
expect_eq "stale site, rewrite mode: status" 139 "$rc"
expect_eq "stale site, rewrite mode: output" "calling the new code" "$(cat stale.out)"
