# SPDX-License-Identifier: MIT
# Issue 9, test 3: dash, bash and Python run unchanged under the shim in
# rewrite mode (the default as root): the same output and exit status as
# without it, for scripts that fork, exec, pipe, trap signals and spawn
# subprocesses; each process image has its stream. (Node's child_process:
# t_rewrite_node.sh.)
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_rewrite
same() { # NAME CMD...: output and status with the shim as without
	local name=$1
	shift
	local rc0=0 rc1=0
	"$@" > "$name.plain" 2>&1 || rc0=$?
	env "${HOOK_ENV[@]}" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$name.trace" "$@" > "$name.shim" 2>&1 || rc1=$?
	cmp "$name.plain" "$name.shim" || { diff "$name.plain" "$name.shim" | head; fail "$name: output differs"; }
	expect_eq "$name: exit status" "$rc0" "$rc1"
	expect_eq "$name: hook mode" "$REWRITE_HOOK" "$("$KANALYZE" --format=json "$name.trace" | jq -r .hook_mode)"
	echo "ok: $name: same output ($(wc -c < "$name.shim") bytes), $("$KANALYZE" --format=json "$name.trace" | jq '.processes | length') streams"
}
script='trap "echo trapped" USR1; kill -USR1 $$; for i in 1 2 3; do echo $i | cat; done;
	x=$(echo sub); echo "$x"; (exit 4); echo "status $?"; ls /proc/self/fd | wc -l >/dev/null;
	sh -c "exit 7"; echo "child $?"; read l < /etc/hostname; echo read; exit 5'
command -v dash >/dev/null || skip "dash missing"
same dash dash -c "$script"
same bash bash -c "$script"
same bash-pipeline bash -c 'seq 1 2000 | sort -rn | head -3; wait; echo $((6 * 7))'
py=$(command -v python3) || skip "python3 missing"
same python "$py" -c '
import os, subprocess, signal, threading, sys
signal.signal(signal.SIGUSR1, lambda *a: print("handled"))
os.kill(os.getpid(), signal.SIGUSR1)
print(subprocess.run(["sh", "-c", "echo from sh; exit 2"], capture_output=True).stdout.decode().strip())
t = threading.Thread(target=lambda: print("thread"))
t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(9)
print("child", os.waitpid(pid, 0)[1] >> 8)
sys.exit(3)'
