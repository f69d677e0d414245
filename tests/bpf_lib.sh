# SPDX-License-Identifier: MIT
# Helpers for the kbpf-trace tests (tests/t_bpf_*.sh), on top of lib.sh.
. "$KPROF_ROOT/tests/lib.sh"
KBPF=$BUILD/kbpf-trace
# KBPF_EXACT: kbpf-trace's options for a trace compared call by call with
# the shim's: one event per call, in a ring (64 MiB, 1.3 million events)
# that holds a whole test's calls even when the reader falls behind (a
# sanitized kbpf-trace on a loaded machine lost 10,816 of 400,000 in the
# default 8 MiB), so a comparison never fails for want of room.
KBPF_EXACT=(--events --events-buffer=65536)

# need_bpf: skip (77) unless kbpf-trace is built and can load here.
need_bpf() {
	[ -x "$KBPF" ] || skip "kbpf-trace not built (make $KBPF)"
	[ "$(id -u)" -eq 0 ] || skip "kbpf-trace needs root"
	[ -r /sys/kernel/btf/vmlinux ] || skip "kernel without BTF"
}

# process_field JSON PID ORIGIN SYSCALL FIELD: one counter of one stream
process_field() {
	jq -r --argjson p "$2" --arg o "$3" --arg n "$4" --arg f "$5" \
		'[.processes[] | select(.pid == $p and .origin == $o) |
		  .syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$1"
}
