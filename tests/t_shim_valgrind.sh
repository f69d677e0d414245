# SPDX-License-Identifier: MIT
# valgrind running a program under the shim (tried as a new user would):
# `LD_PRELOAD=libkprof.so valgrind --tool=none /bin/echo hi` exited 1 with
# "Unsupported clone() flags: 0x800500", the output process's clone
# (CLONE_VM|CLONE_FILES|CLONE_UNTRACED), which valgrind cannot emulate.
# Under valgrind the shim now keeps the trace descriptor in the program's
# table (the fallback of docs/SHIM.md) and runs symbol mode whatever
# KPROF_HOOK asks (valgrind translates the code and emulates the
# syscalls, so rewritten code and Syscall User Dispatch are not for it);
# the header's coverage says why. In every mode: the output and exit
# status of plain valgrind, and a trace of the program.
. "$KPROF_ROOT/tests/lib.sh"
command -v valgrind >/dev/null || fail "valgrind missing (make deps installs it)"
modes=(symbols)
[ "$(uname -m)" = x86_64 ] && modes+=(rewrite patch auto)
printf 'echo one\n/bin/echo two\nexit 5\n' > prog.sh
# a copy of the shell: /usr/bin/valgrind is a shell script whose traces must not mix in
cp "$(readlink -f "$(command -v sh)")" guest-sh
shell=$PWD/guest-sh
# each with the exit_group calls of its traces (wait_all's fork child exits too)
progs=("/bin/echo hi" "$BUILD/tests/wait_all" "$shell $PWD/prog.sh")
exits=(1 2 1)
i=0
for p in "${progs[@]}"; do
	i=$((i + 1))
	read -ra cmd <<<"$p"
	rc=0
	timeout -s KILL 120 valgrind -q --tool=none "${cmd[@]}" > "plain-$i.txt" 2> "plain-$i.err" || rc=$?
	want_rc=$rc
	[ -s "plain-$i.txt" ] || fail "plain valgrind ${cmd[0]}: no output ($(tail -2 "plain-$i.err"))"
	for m in "${modes[@]}"; do
		rm -rf cache; mkdir cache
		rc=0
		XDG_CACHE_HOME=$PWD/cache KPROF_HOOK=$m KPROF_OUT="$PWD/t-$m-$i" LD_PRELOAD="$SHIM" \
			timeout -s KILL 120 valgrind -q --tool=none "${cmd[@]}" > "$m-$i.txt" 2> "$m-$i.err" ||
			rc=$?
		expect_eq "$m: valgrind ${cmd[0]}: exit status" "$want_rc" "$rc"
		cmp "plain-$i.txt" "$m-$i.txt" || fail "$m: valgrind ${cmd[0]}: output differs: $(head -3 "$m-$i.err")"
		cmp "plain-$i.err" "$m-$i.err" || fail "$m: valgrind ${cmd[0]}: stderr differs: $(head -3 "$m-$i.err")"
		name=$(basename "$(readlink -f "${cmd[0]}")")
		j=$("$KANALYZE" --format=json "t-$m-$i/$name".*)
		expect_eq "$m: ${cmd[0]}'s trace: hook mode" symbols "$(jq -r .hook_mode <<<"$j")"
		if [ "$m" != symbols ]; then
			jq -r .coverage <<<"$j" | grep >/dev/null 'running under valgrind' ||
				fail "$m: the coverage does not say valgrind: $(jq -r .coverage <<<"$j")"
		fi
		expect_eq "$m: ${cmd[0]}'s traces: exit_group calls" "${exits[i - 1]}" "$(syscall_field "$j" exit_group count)"
	done
done
