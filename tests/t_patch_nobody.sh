# SPDX-License-Identifier: MIT
# Issue 18, tests 1 to 3: complete coverage as an ordinary user. As nobody
# (setpriv; no CAP_SYS_RAWIO, so no page at address 0), KPROF_HOOK unset
# picks patch mode, with Syscall User Dispatch under it. Traced at once by
# kbpf-trace and the shim, the shim sees at least 99.9% of the calls the
# kernel saw after its start-up, futex included, and never more, for:
# Node with a worker (500 Atomics.wait/notify round trips) and libuv pool
# reads; python3 with threads; gcc -c (vfork chains). Then dash, bash,
# python3, perl, git and node's child_process print the same and exit
# the same as without the shim.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
[ "$(uname -m)" = x86_64 ] || skip "patch mode is x86_64 only"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody (and for kbpf-trace)"
[ "$(cat /proc/sys/vm/mmap_min_addr)" != 0 ] || skip "vm.mmap_min_addr is 0: anyone may map the lowest page"
for c in setpriv node python3 gcc perl git dash bash; do
	command -v $c >/dev/null || fail "$c missing (make deps installs it)"
done
as_nobody_setup
nobody_home=$PWD/home
# the shim's start-up, and what it makes of the kernel's count from there
nobody_both() {
	local dir=$1
	shift
	mkdir -m 1777 -p "$dir"
	both_rc=0
	"$KBPF" "${KBPF_EXACT[@]}" -o "$dir/bpf" -- "${AS_NOBODY[@]}" env HOME="$nobody_home" \
		LD_PRELOAD="$SHIM" KPROF_OUT="$dir/shim" "$@" > "$dir/out.txt" || both_rc=$?
}
# at_least DIR NAME: 99.9% of the kernel's calls after start-up, none over
at_least() {
	local json low over
	json=$("$KANALYZE" --coverage --after-start --format=json "$1/shim" "$1/bpf") ||
		fail "$2: kanalyze --coverage --after-start failed"
	expect_eq "$2: hook mode" patch "$("$KANALYZE" --format=json "$1/shim" | jq -r .hook_mode)"
	low=$(jq -r '.total | select(.count_a < 0.999 * .count_b) | "\(.count_a) of \(.count_b)"' <<<"$json")
	[ -z "$low" ] || fail "$2: under 99.9% of the kernel's calls: $low"
	over=$(jq -r '.syscalls[] | select(.count_a > .count_b) | "\(.name) \(.count_a)/\(.count_b)"' <<<"$json")
	[ -z "$over" ] || fail "$2: the shim counted more than the kernel saw: $(echo $over)"
	futex=$(jq '[.syscalls[] | select(.name == "futex") | .count_a] | add // 0' <<<"$json")
	echo "ok: $2: $(jq -r '.total | "\(.count_a) of \(.count_b)"' <<<"$json") calls after start-up, futex $futex"
}

nobody_both node node "$KPROF_ROOT/programs/node/atomics.js" 500 64
expect_eq "node: exit status" 0 "$both_rc"
expect_eq "node: output" "rounds=500 files=64" "$(cat node/out.txt)"
at_least node node
futex=$(shim_count node futex)
[ "$futex" -ge 1000 ] || fail "node: only $futex futex calls: the workload did not wait"

cat > threads.py <<'PY'
import os, threading
def work():
    for _ in range(500):
        os.getppid()
        os.stat("/")
ts = [threading.Thread(target=work) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
# join() returns when a thread's Python state is gone, before its OS
# thread has made its last calls (rt_sigprocmask, madvise, exit): an exit
# then would kill it after the shim's final flush, and the kernel would
# count calls that no flush can carry. Wait for the threads to be gone.
while len(os.listdir("/proc/self/task")) > 1:
    os.sched_yield()
print("threads done")
PY
nobody_both py python3 threads.py
expect_eq "python3: exit status" 0 "$both_rc"
expect_eq "python3: output" "threads done" "$(cat py/out.txt)"
at_least py python3
expect_eq "python3: getppid" 2000 "$(shim_count py getppid)"

printf '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n' > hello.c
chmod 644 hello.c
nobody_both gcc gcc -c "$PWD/hello.c" -o "$PWD/gcc/hello.o"
expect_eq "gcc -c: exit status" 0 "$both_rc"
gcc -c hello.c -o plain.o
cmp plain.o gcc/hello.o || fail "gcc -c: the object differs under the shim"
expect_eq "gcc -c: vfork (cc1, as)" 2 "$(shim_count gcc vfork)"
at_least gcc "gcc -c"

# the same output and exit status with the mode on, as nobody
mkdir -m 1777 same
cat > same/script.sh <<'SH'
x=0; for i in 1 2 3; do x=$((x + i)); done
echo "sum $x $(echo sub | tr a-z A-Z)"; (exit 7)
SH
git init -q same/repo && echo data > same/repo/f && git -C same/repo add f &&
	git -C same/repo -c user.name=t -c user.email=t@t commit -qm one && chmod -R a+rwX same/repo
# same_as_plain CMD...: CMD as nobody, plain and under the shim
same_as_plain() {
	local prc=0 src=0
	"${AS_NOBODY[@]}" env HOME="$nobody_home" "$@" > same/plain.out 2>&1 || prc=$?
	"${AS_NOBODY[@]}" env HOME="$nobody_home" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/same/tr" "$@" \
		> same/shim.out 2>&1 || src=$?
	expect_eq "$1: exit status" "$prc" "$src"
	cmp same/plain.out same/shim.out || { diff same/plain.out same/shim.out; fail "$1: output differs"; }
	echo "ok: $1 unchanged (exit $prc)"
}
same_as_plain dash same/script.sh
same_as_plain bash same/script.sh
same_as_plain python3 -c 'import sys, subprocess
print(subprocess.run(["echo", "py"], capture_output=True).stdout)
sys.exit(5)'
same_as_plain perl -e 'print join(",", map { $_ * 2 } 1..5), "\n"; system("true"); exit 4'
same_as_plain git -c safe.directory='*' -C same/repo log --format=%s
same_as_plain node -e 'const r = require("child_process").spawnSync("sh", ["-c", "echo child; exit 3"]);
	process.stdout.write(r.stdout); process.exit(r.status)'
expect_eq "the shell cases' hook mode" patch "$("$KANALYZE" --format=json same/tr | jq -r .hook_mode)"
