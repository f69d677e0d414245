# SPDX-License-Identifier: MIT
# tier: check
# Thread names in the per-thread views, from both producers, following
# renames: tests/thread_names names its main thread kp-main (prctl), a
# worker kp-first and then kp-worker (pthread_setname_np), and leaves a
# third thread unnamed. Each thread, told apart by its exact getppid
# count (10, 300, 50), carries its last name in --by=thread's JSON, CSV
# and table: under the shim in every hook mode (the unnamed one shows none:
# the shim follows names given, not the one a thread inherits), and under
# kbpf-trace -t (which reads the kernel's: kp-main for the unnamed one).
# The image's own name (comm: the exec'd file's base name) is in JSON.
. "$KPROF_ROOT/tests/bpf_lib.sh"
prog=$BUILD/tests/thread_names
# names TRACE: "getppid-count name" per thread that called getppid, sorted
names() {
	"$KANALYZE" --by=thread --format=json "$1" | jq -r '.processes[].thread_profiles[] |
		select(any(.syscalls[]; .name == "getppid")) |
		"\(.syscalls[] | select(.name == "getppid") | .count) \(.name)"' | sort -n
}
for mode in symbols rewrite patch; do
	out=$(KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/$mode "$prog") || fail "$mode: program failed"
	expect_eq "$mode: output" named "$out"
	expect_eq "$mode: threads by getppid calls" "10 kp-main
50 null
300 kp-worker" "$(names $mode)"
	grep -q '^--- pid [0-9]* thread [0-9]* "kp-worker" (tid [0-9]*, exited)' \
		<("$KANALYZE" --by=thread $mode) || fail "$mode: no table section for kp-worker"
	expect_eq "$mode: comm" thread_names "$(profile_json $mode | jq -r '.processes[0].comm')"
	expect_eq "$mode: CSV thread_name of the 300 getppid" kp-worker \
		"$("$KANALYZE" --by=thread --format=csv $mode | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
			$c["name"] == "getppid" && $c["count"] == 300 { print $c["thread_name"] }')"
done
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$KBPF" -t -o bpf -- "$prog" > /dev/null || fail "kbpf-trace -t"
	expect_eq "kbpf-trace: threads by getppid calls" "10 kp-main
50 kp-main
300 kp-worker" "$(names bpf)"
	expect_eq "kbpf-trace: comm" thread_names "$(profile_json bpf | jq -r '.processes[0].comm')"
	for f in bpf/*; do "$BUILD/tests/format_plain" "$f" || fail "$f does not conform to FORMAT.md"; done
else
	echo "kbpf-trace part not run: it needs root and a kernel with BTF"
fi
for f in symbols/*; do "$BUILD/tests/format_plain" "$f" || fail "$f does not conform to FORMAT.md"; done
