# SPDX-License-Identifier: MIT
# Without privileges: one clear line saying what is missing, non-zero
# exit, nothing attached, nothing written. Also: a pid that does not exist.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
command -v setpriv >/dev/null || skip "setpriv not installed"
chmod 755 "$PWD"
before=$(bpftool link list 2>/dev/null | wc -l)
rc=0
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$KBPF" -o "$PWD/trace" -- true 2> err.txt || rc=$?
cat err.txt
[ "$rc" -ne 0 ] || fail "exit status 0 without privileges"
echo "ok: exit status $rc"
expect_eq "stderr lines" 1 "$(wc -l < err.txt)"
grep -q 'needs root or CAP_BPF' err.txt || fail "message does not say what is missing"
[ ! -e trace ] || fail "a trace was written"
expect_eq "BPF links after" "$before" "$(bpftool link list 2>/dev/null | wc -l)"

rc=0
"$KBPF" -p 2147483646 -o trace 2> err.txt || rc=$?
cat err.txt
[ "$rc" -ne 0 ] || fail "exit status 0 for a missing pid"
expect_eq "stderr lines" 1 "$(wc -l < err.txt)"
grep -q 'no process with pid 2147483646' err.txt || fail "message does not name the pid"
rc=0
"$KBPF" -- /nonexistent/cmd 2> err.txt || rc=$?
cat err.txt
expect_eq "exit status for a missing command" 127 "$rc"
