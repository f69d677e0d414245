# SPDX-License-Identifier: MIT
# tier: check
# A descriptor closed inside libc (fclose, pclose, closedir) and made
# again under the same number inside libc (popen's pipe): in both hook
# modes its reads count under the new kind (pipe), not the old one (file).
# Symbol mode cannot see those inner close calls; the shim hooks fclose,
# pclose and closedir to forget the kind of the number they close.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/libc_closed_kinds
kind_reads() {
	jq -r --arg k "$2" '[.kind_profiles[$k].syscalls[] | select(.name == "read") | .count] | add // 0' <<<"$1"
}
for mode in symbols rewrite; do
	[ $mode = rewrite ] && [ "$(id -u)" != 0 ] && continue
	rm -rf trace
	KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" > out.txt ||
		fail "$mode: program failed: $(cat out.txt)"
	pid=$(sed -n 's/^pid=//p' out.txt)
	json=$("$KANALYZE" --by=kind --format=json --pid="$pid" trace)
	expect_eq "$mode: reads on files" "$(sed -n 's/^read.file=//p' out.txt)" "$(kind_reads "$json" file)"
	expect_eq "$mode: reads on pipes" "$(sed -n 's/^read.pipe=//p' out.txt)" "$(kind_reads "$json" pipe)"
done
