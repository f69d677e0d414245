# SPDX-License-Identifier: MIT
# With a cold site cache, rewrite mode runs the kprof-sites helper at
# start-up and drops the helper's SIGCHLD; when a child of the program's
# is already waiting to be reaped (a zombie inherited across the exec),
# it sends SIGCHLD anew. That path wrote a debugging line to the
# program's stderr, once per helper run. Here the program must see its
# zombie, print exactly what it prints without the shim, and write
# nothing at all to stderr.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_rewrite
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (apt-get install python3)"
cat >zombie.py <<'PY'
import os, sys, time
# a child that has exited before the exec: a zombie of the next image
if os.fork() == 0:
    os._exit(7)
time.sleep(0.2)
if sys.argv[1]:
    os.environ["LD_PRELOAD"] = sys.argv[1]
os.execv("/usr/bin/python3", ["/usr/bin/python3", "-c",
    "import os; pid, st = os.waitpid(-1, os.WNOHANG); "
    "print('reaped', 'exit', os.WEXITSTATUS(st) if pid > 0 else None)"])
PY
export XDG_CACHE_HOME=
for mode in plain "$REWRITE_HOOK"; do
	rm -rf "home-$mode"
	mkdir -m 700 "home-$mode"   # a cold site cache: the helper runs
	shim=$SHIM
	[ "$mode" = plain ] && shim=
	rc=0
	HOME=$PWD/home-$mode KPROF_HOOK=$mode KPROF_OUT=$PWD/t-$mode KPROF_DEBUG= \
		/usr/bin/python3 zombie.py "$shim" >"out-$mode.txt" 2>"err-$mode.txt" || rc=$?
	expect_eq "$mode: exit status" 0 "$rc"
	expect_eq "$mode: the zombie reaped" "reaped exit 7" "$(cat "out-$mode.txt")"
	expect_eq "$mode: stderr" "" "$(cat "err-$mode.txt")"
done
[ -n "$(ls "home-$REWRITE_HOOK/.cache/kprof/sites" 2>/dev/null)" ] ||
	fail "the helper wrote no site cache: the path under test did not run"
