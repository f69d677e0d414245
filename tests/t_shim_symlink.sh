# SPDX-License-Identifier: MIT
# Trace files in a shared sticky directory (like /tmp) where another user
# plants symlinks: the shim never writes through them. A symlink at the
# exact file name the %p template gives is skipped (O_EXCL|O_NOFOLLOW: the
# next free name is used); a symlinked or foreign-owned trace directory is
# refused with one message; the victim file is untouched and the program
# runs as without the shim. Files are 0600, directories 0700.
. "$KPROF_ROOT/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to act as two users"
command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
as_other() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
chmod 0755 .
mkdir -m 1777 shared
mkdir -m 0700 private
echo precious > private/victim
prog=$BUILD/tests/getppid_loop

# 1. the template's file name, planted before the program starts
cat > run.sh <<SH
as_other() { setpriv --reuid=65534 --regid=65534 --clear-groups "\$@"; }
as_other ln -s "$PWD/private/victim" "$PWD/shared/t.\$\$.msgpack" || exit 99
exec env LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/shared/t.%p.msgpack" "$prog" 100
SH
bash run.sh > out1.txt
expect_eq "program output" getppid=100 "$(cat out1.txt)"
expect_eq "victim untouched" precious "$(cat private/victim)"
link=$(find shared -maxdepth 1 -type l -name 't.*.msgpack')
[ -n "$link" ] || fail "planted symlink gone"
trace=${link%.msgpack}.1.msgpack
[ -f "$trace" ] && [ ! -L "$trace" ] || fail "no trace next to the planted link: $(ls -l shared)"
expect_eq "trace file owner and mode" "0 600" "$(stat -c '%u %a' "$trace")"
expect_eq "trace counts" 100 "$(syscall_field "$(profile_json "$trace")" getppid count)"

# 2. the trace directory is a symlink another user planted
as_other ln -s "$PWD/private" shared/kprof-dir
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shared/kprof-dir "$prog" 100 > out2.txt 2> err2.txt
expect_eq "program output (symlinked dir)" getppid=100 "$(cat out2.txt)"
expect_eq "one message" "kprof: not tracing into $PWD/shared/kprof-dir: a symlink another user owns" "$(cat err2.txt)"
expect_eq "nothing written into the link's target" "victim" "$(ls private)"

# 3. the trace directory exists and belongs to another user
as_other mkdir -m 0777 shared/theirs
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shared/theirs "$prog" 100 > out3.txt 2> err3.txt
expect_eq "program output (foreign dir)" getppid=100 "$(cat out3.txt)"
expect_eq "one message (foreign dir)" "kprof: not tracing into $PWD/shared/theirs: a directory another user owns" "$(cat err3.txt)"
expect_eq "nothing written into the foreign dir" "" "$(ls shared/theirs)"

# 4. our own directory, made by the shim: 0700, file 0600
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shared/mine/sub "$prog" 100 > /dev/null
expect_eq "directory modes" "700 700" "$(stat -c %a shared/mine shared/mine/sub | tr '\n' ' ' | sed 's/ $//')"
expect_eq "file mode" 600 "$(stat -c %a shared/mine/sub/*.msgpack)"
