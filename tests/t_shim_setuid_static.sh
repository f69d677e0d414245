# SPDX-License-Identifier: MIT
# Programs the shim must leave alone. A static binary under LD_PRELOAD runs
# as without it (no loader, nothing preloaded, no trace). A setuid binary:
# with LD_PRELOAD=/path the loader ignores the shim; preloaded by name from
# a system directory (a setuid-mode copy, as ld.so requires in secure
# mode) the shim is loaded but sees AT_SECURE and stays passive: the
# program's output is unchanged and no trace file is created. A normal
# copy preloaded the same way does trace (the control).
. "$KPROF_ROOT/tests/lib.sh"
static=$BUILD/tests/static_getppid
[ -x "$static" ] || fail "static_getppid not built"
"$static" > static.plain; rc_plain=$?
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/static-trace "$static" > static.shim || rc=$?
expect_eq "static: status" "$rc_plain" "$rc"
expect_eq "static: output" "$(cat static.plain)" "$(cat static.shim)"
[ ! -e static-trace ] || fail "static: a trace appeared: $(ls -R static-trace)"

[ "$(id -u)" = 0 ] || skip "setuid part needs root (chown, a library in the system directory)"
libdir=$(dirname "$(ldd /bin/true | awk '/libc.so/ { print $3 }')")
chmod 0755 .
cp "$BUILD/tests/getppid_loop" suid; chown 65534:65534 suid; chmod 4755 suid
cp "$BUILD/tests/getppid_loop" plain
case $(findmnt -no OPTIONS --target .) in *nosuid*) skip "test directory is mounted nosuid";; esac
name=libkprof-test-$$.so
trap 'rm -f "$libdir/$name" "$libdir/plain-$name"' EXIT
cp "$SHIM" "$libdir/$name"; chmod 4755 "$libdir/$name"
cp "$SHIM" "$libdir/plain-$name"

./suid 100 > suid.plain
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t1 KPROF_DEBUG=1 ./suid 100 > suid.path 2> suid.path.err || rc=$?
expect_eq "setuid, LD_PRELOAD by path: status" 0 "$rc"
expect_eq "setuid, LD_PRELOAD by path: output" "$(cat suid.plain)" "$(cat suid.path)"
[ ! -e t1 ] || fail "setuid, by path: a trace appeared"

rc=0; LD_PRELOAD=$name KPROF_OUT=$PWD/t2 KPROF_DEBUG=1 ./suid 100 > suid.name 2> suid.name.err || rc=$?
expect_eq "setuid, shim loaded (by name): status" 0 "$rc"
expect_eq "setuid, shim loaded (by name): output" "$(cat suid.plain)" "$(cat suid.name)"
grep -q '^kprof: secure-execution mode' suid.name.err || fail "shim did not say it stayed passive: $(cat suid.name.err)"
[ ! -e t2 ] || fail "setuid, by name: a trace appeared: $(ls -R t2)"

LD_PRELOAD=plain-$name KPROF_OUT=$PWD/t3 ./plain 100 > /dev/null
expect_eq "control: the same preload traces a normal program" 100 "$(syscall_field "$(profile_json t3)" getppid count)"
