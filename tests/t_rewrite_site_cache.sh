# SPDX-License-Identifier: MIT
# Rewrite mode's site cache reaches children whose environment names no
# home: posix_spawn with {A: 1} (no HOME, no XDG_CACHE_HOME) used to sweep
# every library of the child anew with the helper (25 ms a spawn instead of
# 2). The parent hands its cache down (KPROF_EXEC_SITES), the child's
# start-up removes it: once the cache is warm, 10 such children run the
# helper 0 times (KPROF_DEBUG=1 says each image's runs), and none of them
# sees the variable.
source "$KPROF_ROOT/tests/lib.sh"
source "$KPROF_ROOT/tests/rewrite_lib.sh"
need_rewrite
# Debian's python3 itself: one earlier in PATH may be a shell wrapper
# (pyenv) that starts more images
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (apt-get install python3)"
export HOME=$PWD/home XDG_CACHE_HOME=
mkdir -m 700 home
cat >spawn.py <<'PY'
import os, sys
for i in range(int(sys.argv[1])):
    pid = os.posix_spawn("/usr/bin/env", ["env"], {"A": "1"})
    os.waitpid(pid, 0)
PY
# warm the cache: python's images and one child
KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/warm /usr/bin/python3 spawn.py 1 >/dev/null
[ -n "$(ls home/.cache/kprof/sites)" ] || fail "no site cache written under HOME"
KPROF_HOOK=rewrite KPROF_DEBUG=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t \
	/usr/bin/python3 spawn.py 10 >env.txt 2>debug.txt
expect_eq "children run" 10 "$(grep -c '^A=1$' env.txt)"
expect_eq "images in rewrite mode (python, 10 children)" 11 \
	"$(grep -c 'rewrite mode: .* helper runs' debug.txt)"
expect_eq "images that ran the helper" 0 \
	"$(grep 'rewrite mode: .* helper runs' debug.txt | grep -vc ' 0 helper runs')"
expect_eq "children that see KPROF_EXEC_SITES" 0 "$(grep -c KPROF_EXEC_SITES env.txt)"
expect_eq "env children traced" 10 "$(ls t | grep -c '^env\.')"
