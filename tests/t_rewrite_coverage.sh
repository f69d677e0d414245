# SPDX-License-Identifier: MIT
# Rewrite mode sees what symbol mode cannot: tests/coverage_mix.c makes
# 1000 getppid() through libc and 500 with its own `syscall` instruction;
# the shim sees all 1500, as the kernel does (t_coverage.sh: symbol mode
# sees 1000). Call sites still name the program's functions: a symbol hook
# leaves its caller's address for the syscall hook (reads and writes of
# tests/sites_calls.c), and a call with no symbol hook is placed at the
# libc function that made it (stdio's write at exit).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
both mix "$BUILD/tests/coverage_mix"
expect_eq "coverage_mix: exit status" 0 "$both_rc"
# --after-start: a sanitizer runtime (make test SAN=1) makes raw syscalls,
# getppid among them, before the shim's constructor has run
json=$("$KANALYZE" --coverage --after-start --format=json mix/shim mix/bpf)
expect_eq "getppid seen by the shim" 1500 "$(jq '.syscalls[] | select(.name == "getppid") | .count_a' <<<"$json")"
expect_eq "getppid seen by the kernel" 1500 "$(jq '.syscalls[] | select(.name == "getppid") | .count_b' <<<"$json")"
exact_coverage mix

KPROF_HOOK=$REWRITE_HOOK LD_PRELOAD=$SHIM KPROF_OUT=$PWD/sites "$BUILD/tests/sites_calls" 100 > /dev/null
"$KANALYZE" --sites --format=json sites > sites.json
site() { jq -r --arg n "$1" --arg s "$2" '[.syscalls[] | select(.name == $n) | .sites[] | select(.site == $s) | .count] | add // 0' sites.json; }
expect_eq "reads at reader_function" 100 "$(site read "reader_function (sites_calls)")"
expect_eq "writes at writer_function" 200 "$(site write "writer_function (sites_calls)")"
expect_eq "stdio's write at exit, at libc's write" 1 "$(site write "write (libc.so.6)")"
