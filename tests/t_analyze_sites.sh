#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze --sites names the program's own functions that called read()
# and write() (the shim records the return address of the libc function,
# kanalyze resolves it with the trace's `maps` record and libelf);
# --folded gives the same as flame graph input.
# Symbol mode: the counts are of the libc functions the program called
# (rewrite mode also sees stdio's write at exit: t_rewrite_coverage.sh).
source "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
prog=$BUILD/tests/sites_calls
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" 100 > /dev/null
"$KANALYZE" --sites trace > sites.txt
cat sites.txt
grep -A1 '^read (0): 100 calls' sites.txt | grep >/dev/null '^ *100 calls .* reader_function (sites_calls)$' ||
	fail "read not attributed to reader_function"
grep -A1 '^write (1): 200 calls' sites.txt | grep >/dev/null '^ *200 calls .* writer_function (sites_calls)$' ||
	fail "write not attributed to writer_function"
"$KANALYZE" --folded trace > folded.txt
grep -qx 'sites_calls`reader_function;read 100' folded.txt || fail "folded read: $(cat folded.txt)"
grep -qx 'sites_calls`writer_function;write 200' folded.txt || fail "folded write"
"$KANALYZE" --sites --format=json trace > sites.json
expect_eq "json site of write" '"writer_function (sites_calls)"' \
	"$(jq -c '.syscalls[] | select(.name == "write") | .sites[0].site' sites.json)"
# A stripped copy has no .symtab: its own static functions cannot be
# named, and the site says file+offset instead of guessing.
cp "$prog" stripped && strip stripped
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/strace ./stripped 10 > /dev/null
"$KANALYZE" --sites strace > stripped.txt
grep -A1 '^read (0)' stripped.txt | grep >/dev/null 'stripped+0x' || fail "stripped site: $(cat stripped.txt)"
# Its debug file, split off by build-id the way Debian's -dbgsym packages
# install it, names them again (looked up under --debug-dir).
id=$(readelf -n "$prog" | sed -n 's/^ *Build ID: *//p')
[ ${#id} -gt 2 ] || fail "no build-id in $prog"
mkdir -p "dbg/.build-id/${id:0:2}"
objcopy --only-keep-debug "$prog" "dbg/.build-id/${id:0:2}/${id:2}.debug"
"$KANALYZE" --sites --debug-dir=$PWD/nothing --debug-dir=$PWD/dbg strace > debug.txt
grep -A1 '^read (0): 10 calls' debug.txt | grep >/dev/null '^ *10 calls .* reader_function (stripped)$' ||
	fail "debug file not used: $(cat debug.txt)"
echo "ok: sites resolved"
