# SPDX-License-Identifier: MIT
# tier: check
# A sandbox in small (tests/sandbox_cases.c): a clone child on a zeroed
# TLS (Chromium's chroot helper; the shim attached a thread block there
# and died in pthread_setspecific), then a seccomp filter that kills the
# process for calls only the shim would make (process_vm_readv, openat,
# prctl but PR_SET_NAME, ...), with threads and periodic flushes due
# under it. In every mode: the output and exit status of a plain run, and
# the stream ends with a drop record saying that the shim went passive.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/sandbox_cases
rc=0
"$prog" > plain.txt || rc=$?
expect_eq "plain: exit status" 3 "$rc"
modes=(symbols)
[ "$(uname -m)" = x86_64 ] && modes+=(rewrite patch auto)
for m in "${modes[@]}"; do
	rc=0
	KPROF_INTERVAL_MS=1 KPROF_HOOK=$m LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$m" \
		timeout -s KILL 30 "$prog" > "$m.txt" || rc=$?
	expect_eq "$m: exit status" 3 "$rc"
	cmp plain.txt "$m.txt" || { diff plain.txt "$m.txt" || true; fail "$m: output differs"; }
	j=$("$KANALYZE" --format=json "$m" 2>/dev/null)
	expect_eq "$m: drop reasons" \
		"a seccomp filter went in (a sandbox): the shim went passive, the process's later calls are not traced" \
		"$(jq -r '.drops.reasons | join("; ")' <<<"$j")"
	# the calls before the filter are there: the child's wait
	[ "$(syscall_field "$j" wait4 count)" -ge 1 ] || fail "$m: the wait before the filter is missing"
done
