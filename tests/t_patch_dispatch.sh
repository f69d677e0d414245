# SPDX-License-Identifier: MIT
# Issue 18, tests 4 and 5: patch mode's Syscall User Dispatch, as nobody.
# A library dlopen()ed after start whose syscall no jump can replace (a
# jump from the next function lands on it: tests/rewrite/unpatchable.S)
# and code written at run time are counted exactly, through the dispatch
# path, which the trace names (calls and site). A program that blocks every
# signal around such calls, and one with its own SIGSYS handler (read back,
# run by kill, reset by SA_RESETHAND), and one that dies of SIGSYS, print
# and exit exactly as without the shim (tests/sud_cases.c).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
[ "$(uname -m)" = x86_64 ] || skip "patch mode is x86_64 only"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody (and for kbpf-trace)"
command -v setpriv >/dev/null || fail "setpriv missing (util-linux)"
as_nobody_setup
cc -shared -fPIC -o libunpatchable.so "$KPROF_ROOT/tests/rewrite/unpatchable.S" ||
	fail "building the library"
lib=$PWD/libunpatchable.so
"$BUILD/kprof-sites" --plan "$lib" | grep >/dev/null 'nopatch' ||
	fail "the planner found a window for the unpatchable site: $("$BUILD/kprof-sites" --plan "$lib")"
prog=$BUILD/tests/sud_cases
mkdir -m 1777 out
# plain and under the shim: the same output and exit status
same() {
	local name=$1 prc=0 src=0
	shift
	"${AS_NOBODY[@]}" "$prog" "$@" > "out/$name.plain" 2>&1 || prc=$?
	"${AS_NOBODY[@]}" env HOME="$PWD/home" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/out/$name" \
		"$prog" "$@" > "out/$name.shim" 2>&1 || src=$?
	expect_eq "$name: exit status" "$prc" "$src"
	cmp "out/$name.plain" "out/$name.shim" ||
		{ diff "out/$name.plain" "out/$name.shim"; fail "$name: output differs"; }
	echo "ok: $name unchanged: $(tr '\n' ' ' < "out/$name.plain")"
}
same blocked blocked "$lib" 1000
grep -qx 'calls_ok=1 sigsys_blocked=1 sigint_blocked=1 handled_while_blocked=0' out/blocked.plain ||
	fail "blocked: $(cat out/blocked.plain)"
same handler handler "$lib" 1000
grep -q 'calls_ok=1 handled=1 code_user=1 pid_ok=1 reset_to_default=1' out/handler.plain ||
	fail "handler: $(cat out/handler.plain)"
same default default
expect_eq "default: the child died of SIGSYS" "child_signaled=1 signal_sigsys=1" "$(cat out/default.plain)"
same jit jit 1000
expect_eq "blocked: getppid (1,000 twice, and the program's own twice)" 2002 \
	"$(syscall_field "$(profile_json out/blocked)" getppid count)"

# the dlopen()ed library under kbpf-trace too: exact, through dispatch
mkdir -m 1777 run
rc=0
"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/run/bpf" -- "${AS_NOBODY[@]}" env HOME="$PWD/home" LD_PRELOAD="$SHIM" \
	KPROF_OUT="$PWD/run/shim" "$prog" dlopen "$lib" 1000 > run/out.txt || rc=$?
expect_eq "dlopen: exit status" 0 "$rc"
expect_eq "dlopen: output" "unpatchable_calls_ok=1" "$(cat run/out.txt)"
json=$(profile_json run/shim)
expect_eq "dlopen: hook mode" patch "$(jq -r .hook_mode <<<"$json")"
expect_eq "dlopen: getppid (1,000 and the program's own)" 1001 "$(syscall_field "$json" getppid count)"
expect_eq "dlopen: calls through dispatch" 1000 "$(jq .dispatch.calls <<<"$json")"
expect_eq "dlopen: the dispatch site" "unpatchable_getppid (libunpatchable.so) 1000" \
	"$(jq -r '.dispatch.sites[] | "\(.site) \(.calls)"' <<<"$json")"
"$KANALYZE" run/shim > table.txt
grep -q '^coverage: complete after start-up (patch mode); 1000 calls at 1 site came through Syscall User Dispatch (SIGSYS, slower): unpatchable_getppid (libunpatchable.so) 1000$' table.txt ||
	fail "the coverage line does not name the dispatch path: $(sed -n 2p table.txt)"
exact_coverage run
jit=$(profile_json out/jit)
expect_eq "jit: getppid" 1001 "$(syscall_field "$jit" getppid count)"
expect_eq "jit: calls through dispatch" 1000 "$(jq .dispatch.calls <<<"$jit")"
