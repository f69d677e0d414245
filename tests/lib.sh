# SPDX-License-Identifier: MIT
# Helpers sourced by tests/t_*.sh. A test runs in its own temporary
# directory (the working directory); $KPROF_ROOT is the tree, $BUILD the
# build output.
set -euo pipefail
SHIM=$BUILD/libkprof.so
KANALYZE=$BUILD/kanalyze

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
	if [ "$2" != "$3" ]; then fail "$1: expected $2, got $3"; fi
	echo "ok: $1 = $3"
}

# profile_json TRACE...: kanalyze's JSON profile of the traces
profile_json() { "$KANALYZE" --format=json "$@"; }

# syscall_field JSON NAME FIELD: one counter of one syscall (0 if absent)
syscall_field() {
	jq -r --arg n "$2" --arg f "$3" \
		'[.syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$1"
}

# full_mode: the hook mode that sees every syscall instruction here:
# rewrite (root, or vm.mmap_min_addr=0), else patch (any user)
full_mode() {
	local d mode
	d=$(mktemp -d)
	KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$d /bin/true
	mode=$("$KANALYZE" --format=json "$d" | jq -r .hook_mode)
	rm -rf "$d"
	if [ "$mode" = rewrite ]; then echo rewrite; else echo patch; fi
}
