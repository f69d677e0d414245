# SPDX-License-Identifier: MIT
# tier: check
# zlib is the shim's only for a gzip trace: a default trace maps no libz
# into the program; KPROF_GZIP=1 loads it at start-up and gzips; a libz
# without deflate is said on stderr and the trace is written plain, with
# every call in it.
. "$KPROF_ROOT/tests/lib.sh"
command -v cc >/dev/null || fail "no C compiler (gcc) to build the stub library"

# the gzip magic (1f 8b) at the start of the one trace file in a directory
is_gzip() { [ "$(od -An -tx1 -N2 "$1"/* | tr -d ' ')" = 1f8b ]; }

LD_PRELOAD=$SHIM KPROF_OUT=$PWD/plain cat /proc/self/maps > maps.txt
expect_eq "libz mapped with a default trace" 0 "$(grep -c 'libz\.so' maps.txt || true)"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/gz KPROF_GZIP=1 cat /proc/self/maps > maps.txt
[ "$(grep -c 'libz\.so' maps.txt)" -gt 0 ] || fail "no libz mapped for a gzip trace"
echo "ok: libz mapped for a gzip trace"

LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t1 "$BUILD/tests/getppid_loop" 1000 > /dev/null
is_gzip t1 && fail "a default trace is gzipped"
expect_eq "getppid, plain trace" 1000 "$(syscall_field "$(profile_json t1)" getppid count)"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t2 KPROF_GZIP=1 "$BUILD/tests/getppid_loop" 1000 > /dev/null
is_gzip t2 || fail "KPROF_GZIP=1 wrote no gzip trace"
expect_eq "getppid, gzip trace" 1000 "$(syscall_field "$(profile_json t2)" getppid count)"

# a libz.so.1 found first that has no deflate
mkdir stub
echo 'int kprof_not_zlib;' | cc -shared -fPIC -x c -o stub/libz.so.1 - || fail "building the stub"
LD_LIBRARY_PATH=$PWD/stub LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t3 KPROF_GZIP=1 \
	"$BUILD/tests/getppid_loop" 1000 > out.txt 2> err.txt || fail "program failed: $(cat err.txt)"
expect_eq "program output" "getppid=1000" "$(cat out.txt)"
expect_eq "said on stderr" "kprof: libz.so.1 has no deflate: the trace is written without gzip" \
	"$(cat err.txt)"
is_gzip t3 && fail "a gzip trace without deflate"
expect_eq "getppid, trace written plain" 1000 "$(syscall_field "$(profile_json t3)" getppid count)"
