# SPDX-License-Identifier: MIT
# Helpers for the kbpf-trace tests (tests/t_bpf_*.sh), on top of lib.sh.
. "$KPROF_ROOT/tests/lib.sh"
KBPF=$BUILD/kbpf-trace

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
