# SPDX-License-Identifier: MIT
# Rewrite mode and code mapped executable after start: a library
# dlopen()ed by the running program makes reads with its own `syscall`
# instruction; the shim rescans the library when the loader maps it, so
# the reads are seen, at read_zero in that library.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
command -v cc >/dev/null || skip "no C compiler (gcc) to build the test library"
cc -shared -fPIC -O2 -o libdl_read.so "$KPROF_ROOT/tests/rewrite/dl_read.c" || fail "building the library"
both run "$BUILD/tests/rewrite_cases" dlopen "$PWD/libdl_read.so" 1000
expect_eq "exit status" 0 "$both_rc"
expect_eq "output" "dlopen_reads=1000 ok" "$(cat run/out.txt)"
"$KANALYZE" --sites --top=10 --format=json run/shim > sites.json
expect_eq "reads at read_zero (libdl_read.so)" 1000 \
	"$(jq '[.syscalls[] | select(.name == "read") | .sites[] | select(.site == "read_zero (libdl_read.so)") | .count] | add' sites.json)"
exact_coverage run
# dlclose()d before the exit: the final maps record no longer lists the
# library, but the shim wrote one at dlclose and kanalyze keeps what a
# later record does not overlap, so the reads are still named.
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/closed "$BUILD/tests/rewrite_cases" dlclose "$PWD/libdl_read.so" 1000 \
	> closed.out || fail "dlclose case failed"
expect_eq "dlclose output" "dlopen_reads=1000 ok" "$(cat closed.out)"
"$KANALYZE" --sites --top=10 --format=json closed > closed.json
expect_eq "reads at read_zero (libdl_read.so) after dlclose" 1000 \
	"$(jq '[.syscalls[] | select(.name == "read") | .sites[] | select(.site == "read_zero (libdl_read.so)") | .count] | add' closed.json)"
