# SPDX-License-Identifier: MIT
# gdb running a program under the shim with a cold site cache (tried as a
# new user would): the shim's site helper was a fork-shaped clone without
# CLONE_UNTRACED, so gdb (PTRACE_O_TRACECLONE/TRACEFORK) took it for a new
# thread of the program and its exec of kprof-sites for the program's own:
# the program never ran, in rewrite and patch mode, every try. Now gdb
# -batch runs it to the end with the output of a plain run, both with the
# shim on the command line and through `set environment LD_PRELOAD`, and
# strace -f sees the same processes as without the shim.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
command -v gdb >/dev/null || fail "gdb missing (make deps installs it)"
[ "$(uname -m)" = x86_64 ] || skip "rewrite and patch mode are x86_64 only"
modes=(patch)
REWRITE_HOOK=rewrite rewrite_possible && modes+=(rewrite)
# a script: gdb passes its arguments through a shell
printf 'echo one\n/bin/echo two\nexit 3\n' > prog.sh
shell=$(readlink -f "$(command -v sh)")
prog=("$shell" "$PWD/prog.sh")
"${prog[@]}" > plain.txt || true
# gdb -batch's stdout holds the program's output and gdb's own lines
# ("[...]", "Using host libthread_db ...", env's exec of sh); the latter
# are set aside, with the pids of the inferior and children made N
gdb_out() { # FILE...: the program's lines, then gdb's end-of-program line
	sed -E 's/(process|child process) [0-9]+/\1 N/' "$@" |
		grep -vE '^\[(Thread debugging|Detaching after)|^Using host libthread_db' |
		grep -vxF "process N is executing new program: $shell"
}
gdb -nx -batch -ex run --args "${prog[@]}" > gdb-plain.out 2>/dev/null || true
gdb_out gdb-plain.out > want.txt
expect_eq "plain under gdb: the end" "[Inferior 1 (process N) exited with code 03]" "$(tail -1 want.txt)"
expect_eq "plain under gdb: the program's output" "$(cat plain.txt)" "$(head -n -1 want.txt)"
for m in "${modes[@]}"; do
	for how in args env; do
		rm -rf cache; mkdir cache
		if [ $how = args ]; then
			XDG_CACHE_HOME=$PWD/cache timeout -s KILL 120 gdb -nx -batch -ex run --args \
				env LD_PRELOAD="$SHIM" KPROF_HOOK=$m KPROF_OUT="$PWD/t-$m-$how" "${prog[@]}" \
				> "$m-$how.out" 2> "$m-$how.err" || true
		else
			XDG_CACHE_HOME=$PWD/cache KPROF_HOOK=$m KPROF_OUT="$PWD/t-$m-$how" \
				timeout -s KILL 120 gdb -nx -batch \
				-ex "set environment LD_PRELOAD $SHIM" -ex run --args "${prog[@]}" \
				> "$m-$how.out" 2> "$m-$how.err" || true
		fi
		gdb_out "$m-$how.out" > "$m-$how.txt"
		cmp want.txt "$m-$how.txt" || { diff want.txt "$m-$how.txt" || true
			fail "$m, $how: gdb's run differs from plain"; }
		echo "ok: $m, $how: gdb's run as plain"
		ls cache/kprof/sites | grep >/dev/null . || fail "$m, $how: the site helper never ran (cache empty)"
		expect_eq "$m, $how: hook mode of the shell's trace" "$m" \
			"$("$KANALYZE" --format=json "t-$m-$how/$(basename "$shell")".* | jq -r .hook_mode)"
	done
	# strace -f: the processes it follows are the program's only
	rm -rf cache; mkdir cache
	strace -f -qq -e trace=execve -o strace-plain.out "${prog[@]}" > /dev/null || true
	XDG_CACHE_HOME=$PWD/cache strace -f -qq -e trace=execve -o "strace-$m.out" \
		env LD_PRELOAD="$SHIM" KPROF_HOOK=$m KPROF_OUT="$PWD/s-$m" "${prog[@]}" > /dev/null || true
	count() { grep -c 'execve(.*= 0$' "$1" || true; }
	expect_eq "$m: execve calls strace -f saw (env's one more)" $(($(count strace-plain.out) + 1)) \
		"$(count "strace-$m.out")"
	grep -q kprof-sites "strace-$m.out" && fail "$m: strace -f followed the site helper"
	true
done
