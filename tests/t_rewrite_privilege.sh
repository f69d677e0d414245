# SPDX-License-Identifier: MIT
# Rewrite mode needs the page at address 0, which the kernel maps only
# with CAP_SYS_RAWIO (or vm.mmap_min_addr=0, which the shim never
# changes). Without it — root with the capability dropped, or another
# user — KPROF_HOOK=auto runs patch mode (jumps to trampolines and Syscall
# User Dispatch, no privilege needed) and says why; KPROF_HOOK=rewrite,
# asked for by name, falls back to symbol mode: the program runs exactly
# as without the shim, the header's hook_mode says "symbols" and its
# coverage sentence why, kanalyze prints the symbols coverage line. With
# the capability, auto means rewrite; KPROF_HOOK=symbols is symbols
# regardless.
. "$KPROF_ROOT/tests/lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "rewrite mode is x86_64 only"
[ "$(id -u)" -eq 0 ] || skip "needs root to drop a capability and to switch users"
command -v capsh >/dev/null || skip "capsh missing (libcap2-bin)"
command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
[ "$(cat /proc/sys/vm/mmap_min_addr)" != 0 ] || skip "vm.mmap_min_addr is 0: anyone may map the lowest page"
prog=$BUILD/tests/getppid_loop
plain=$("$prog" 100)
mode() { "$KANALYZE" --format=json "$1" | jq -r .hook_mode; }
rc=0
out=$(capsh --drop=cap_sys_rawio -- -c "LD_PRELOAD=$SHIM KPROF_OUT=$PWD/drop-auto $prog 100") || rc=$?
expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK unset: exit status" 0 "$rc"
expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK unset: output" "$plain" "$out"
expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK unset: hook_mode" patch "$(mode drop-auto)"
jq -e '.coverage | test("patch mode because rewrite mode is unavailable: cannot map the lowest page: Operation not permitted")' \
	<<<"$(profile_json drop-auto)" >/dev/null ||
	fail "the header does not say why: $(profile_json drop-auto | jq .coverage)"
expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK unset: getppid" 100 "$(syscall_field "$(profile_json drop-auto)" getppid count)"
"$KANALYZE" drop-auto > table.txt
expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK unset: coverage line" \
	"coverage: complete after start-up (patch mode); no call needed Syscall User Dispatch" \
	"$(sed -n 2p table.txt)"
for hook in rewrite; do
	rc=0
	out=$(capsh --drop=cap_sys_rawio -- -c "KPROF_HOOK=$hook LD_PRELOAD=$SHIM KPROF_OUT=$PWD/drop-$hook $prog 100") || rc=$?
	expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK=$hook: exit status" 0 "$rc"
	expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK=$hook: output" "$plain" "$out"
	expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK=$hook: hook_mode" symbols "$(mode "drop-$hook")"
	json=$(profile_json "drop-$hook")
	jq -e '.coverage | test("cannot map the lowest page: Operation not permitted \\(needs CAP_SYS_RAWIO or vm.mmap_min_addr=0\\)")' <<<"$json" >/dev/null ||
		fail "the header does not say why: $(jq .coverage <<<"$json")"
	expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK=$hook: getppid (symbol mode's count)" 100 "$(syscall_field "$json" getppid count)"
	"$KANALYZE" "drop-$hook" > table.txt
	expect_eq "no CAP_SYS_RAWIO, KPROF_HOOK=$hook: coverage line" \
		"coverage: libc exported functions only — futex and internal calls are not seen (rewrite mode unavailable: cannot map the lowest page: Operation not permitted (needs CAP_SYS_RAWIO or vm.mmap_min_addr=0)); use kbpf-trace to see them" \
		"$(sed -n 2p table.txt)"
done
# another user: the same (the test's directory must let nobody through)
chmod 755 .
mkdir -m 1777 shared
rc=0
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env LD_PRELOAD="$SHIM" \
	KPROF_OUT="$PWD/shared/nobody" "$prog" 100) || rc=$?
expect_eq "as nobody: exit status" 0 "$rc"
expect_eq "as nobody: output" "$plain" "$out"
expect_eq "as nobody: hook_mode" patch "$(mode shared/nobody)"
rc=0
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env KPROF_HOOK=rewrite LD_PRELOAD="$SHIM" \
	KPROF_OUT="$PWD/shared/nobody-rw" "$prog" 100) || rc=$?
expect_eq "as nobody, KPROF_HOOK=rewrite: exit status" 0 "$rc"
expect_eq "as nobody, KPROF_HOOK=rewrite: output" "$plain" "$out"
expect_eq "as nobody, KPROF_HOOK=rewrite: hook_mode" symbols "$(mode shared/nobody-rw)"
# with the capability: auto is rewrite, symbols stays symbols
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/auto "$prog" 100 > /dev/null
expect_eq "root, KPROF_HOOK unset (auto): hook_mode" rewrite "$(mode auto)"
"$KANALYZE" auto > table.txt
expect_eq "root: coverage line" "coverage: complete after start-up" "$(sed -n 2p table.txt)"
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/sym "$prog" 100 > /dev/null
expect_eq "KPROF_HOOK=symbols: hook_mode" symbols "$(mode sym)"
jq -e '.coverage | test("KPROF_HOOK=symbols")' <<<"$(profile_json sym)" >/dev/null ||
	fail "KPROF_HOOK=symbols not in the coverage sentence"
# root who chose symbol mode is told it was chosen, not to run as root
"$KANALYZE" sym > table.txt
expect_eq "root, KPROF_HOOK=symbols: coverage line" \
	"coverage: libc exported functions only — futex and internal calls are not seen (symbol mode chosen: KPROF_HOOK=symbols); use kbpf-trace to see them, or unset KPROF_HOOK" \
	"$(sed -n 2p table.txt)"
