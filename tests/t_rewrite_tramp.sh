# SPDX-License-Identifier: MIT
# tier: check
# The trampolines of the unprivileged mode run: tests/tramp_exec.c patches
# four functions of known bytes (a libc-style wrapper, a RIP-relative load
# before the syscall, an instruction after it, a RIP-relative add after
# it) with a 5-byte jmp to a trampoline from preload/patch/tramp.c and
# calls them. Each must return getpid()'s value through the entry exactly
# once, with its key and original site where the hook will look; the
# trampolines' page and a 1 MiB area near libc are placed within a jmp's
# reach (kp_patch_tramp_area).
source "$KPROF_ROOT/tests/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "the trampolines are x86_64 code"
"$BUILD/tests/tramp_exec" > out.txt || { cat out.txt; fail "tramp_exec failed"; }
cat out.txt
expect_eq "functions run through their trampolines" 4 "$(grep -c '^ok [a-z_]*: getpid' out.txt)"
grep -q "^ok area: 1 MiB" out.txt || fail "no trampoline area placed near libc"
echo "ok: an area within reach of libc"
