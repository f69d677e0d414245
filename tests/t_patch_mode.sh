# SPDX-License-Identifier: MIT
# slow: a minute or more
# KPROF_HOOK=patch (no privilege needed; what KPROF_HOOK=auto runs where
# the lowest page cannot be mapped): the rewrite-mode tests run again in
# it (KPROF_TEST_HOOK=patch): threads made with clone, exact coverage
# against the kernel, dlopen, exit paths, fork with threads, gcc's process
# tree, a zombie child while the site helper runs, Node, shells, signal
# handlers returning through rt_sigreturn, vfork, code made at run time
# (t_rewrite_jit: reached through Syscall User Dispatch) and threads
# already running while the code is patched (t_rewrite_threads).
source "$KPROF_ROOT/tests/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "patch mode is x86_64 only"
export KPROF_TEST_HOOK=patch
failed=()
for t in clone coverage dlopen exit fork_threads gcc helper_zombie jit node shells signals threads \
	vfork; do
	mkdir "$t"
	rc=0
	( cd "$t" && TMPDIR=$PWD bash "$KPROF_ROOT/tests/t_rewrite_$t.sh" ) > "$t.log" 2>&1 || rc=$?
	case $rc in
	0) echo "ok: t_rewrite_$t in patch mode" ;;
	77) echo "skipped t_rewrite_$t: $(tail -n 1 "$t.log")" ;;
	*) tail -n 20 "$t.log"; failed+=("$t") ;;
	esac
done
[ ${#failed[@]} -eq 0 ] || fail "in patch mode: ${failed[*]}"
