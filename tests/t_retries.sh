# SPDX-License-Identifier: MIT
# tier: check
# Retries are would-block EAGAINs only (kp_syscall_would_block in
# common/syscalls.c). tests/retries_mix.c plays futex ping-pong between two
# threads and makes 200 FUTEX_WAITs with a stale value (EAGAIN: the word
# had changed, an error) beside 300 reads of an empty non-blocking pipe
# and 40 flock(LOCK_NB) of a locked file (EAGAIN: retries). Under the shim
# in both hook modes and under kbpf-trace, exactly: retries(read) = 300,
# retries(flock) = 40, retries(futex) = 0 and errors(futex) = the program's
# own count of futex EAGAINs (the 200 stale waits and any the ping-pong met
# by a race), all by errno EAGAIN; --blocking lists the read and flock
# operations and no futex. Shim and kbpf-trace agree row for row.
. "$KPROF_ROOT/tests/bpf_lib.sh"
prog=$BUILD/tests/retries_mix
N=200 M=300 K=40

# check NAME: the trace NAME/ against the program's NAME.out
check() {
	local name=$1 json
	val() { sed -n "s/^$1=//p" "$name.out"; }
	expect_eq "$name: the program's stale waits failed EAGAIN" "$N" "$(($(val futex_eagain) >= N ? N : -1))"
	json=$(profile_json "$name")
	field() { syscall_field "$json" "$1" "$2"; }
	eagain() { jq -r --arg n "$1" '[.syscalls[] | select(.name == $n) | .errno.EAGAIN // 0] | add // 0' <<<"$json"; }
	expect_eq "$name: read retries" "$M" "$(field read retries)"
	expect_eq "$name: read errors" 0 "$(field read errors)"
	expect_eq "$name: read errno EAGAIN" "$M" "$(eagain read)"
	expect_eq "$name: flock count" "$(val flock_calls)" "$(field flock count)"
	expect_eq "$name: flock retries (EWOULDBLOCK)" "$K" "$(field flock retries)"
	expect_eq "$name: flock errors" 0 "$(field flock errors)"
	expect_eq "$name: futex count" "$(val futex_calls)" "$(field futex count)"
	expect_eq "$name: futex retries" 0 "$(field futex retries)"
	expect_eq "$name: futex errors (EAGAIN: the value had changed)" "$(val futex_eagain)" "$(field futex errors)"
	expect_eq "$name: futex errno EAGAIN" "$(val futex_eagain)" "$(eagain futex)"
	expect_eq "$name: total retries" "$((M + K))" "$(jq .total.retries <<<"$json")"
	# the same in the per-kind breakdown: the pipe's reads, the file's flocks
	json=$("$KANALYZE" --by=kind --format=json "$name")
	kf() { jq -r --arg k "$1" --arg n "$2" --arg f "$3" \
		'[.kind_profiles[$k].syscalls[] | select(.name == $n) | .[$f]] | add // 0' <<<"$json"; }
	# (kbpf-trace also sees the dynamic loader read libc: on a file)
	expect_eq "$name: pipe read count" "$(val read_calls)" "$(kf pipe read count)"
	expect_eq "$name: pipe read retries" "$M" "$(kf pipe read retries)"
	expect_eq "$name: file flock retries" "$K" "$(kf file flock retries)"
	expect_eq "$name: retries by kind" "$((M + K))" \
		"$(jq '[.kind_profiles[] | .syscalls[] | .retries] | add' <<<"$json")"
	# --blocking: one finished operation each, no futex
	json=$("$KANALYZE" --blocking --format=json "$name")
	op() { jq -r --arg k "$1" --arg n "$2" --arg f "$3" \
		'[.operations[] | select(.kind == $k and .name == $n) | .[$f]] | add // 0' <<<"$json"; }
	expect_eq "$name: --blocking pipe read" "1 $M 0" "$(op pipe read ops) $(op pipe read retries) $(op pipe read unfinished)"
	expect_eq "$name: --blocking file flock" "1 $K 0" "$(op file flock ops) $(op file flock retries) $(op file flock unfinished)"
	expect_eq "$name: --blocking has only read and flock" "flock read" \
		"$(jq -r '[.operations[].name] | sort | join(" ")' <<<"$json")"
}

# rows NAME: "kind syscall count/time/retries/errors" of the pipe's reads
# and the file's flocks (deterministic; time left out)
rows() {
	"$KANALYZE" --by=kind --format=json "$1" | jq -r '.kind_profiles | to_entries[] |
		.key as $k | .value.syscalls[] |
		select(($k == "pipe" and .name == "read") or ($k == "file" and .name == "flock")) |
		"\($k) \(.name) \(.count)/\(.retries)/\(.errors)"' | sort
}

KPROF_HOOK=symbols KPROF_EVENTS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/symbols \
	"$prog" "$N" "$M" "$K" > symbols.out || fail "program failed under the shim (symbols)"
check symbols

mode=$(KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$PWD/probe /bin/true &&
	"$KANALYZE" --format=json probe | jq -r .hook_mode)
if [ "$mode" = rewrite ]; then
	KPROF_HOOK=rewrite KPROF_EVENTS=1 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/rewrite \
		"$prog" "$N" "$M" "$K" > rewrite.out || fail "program failed under the shim (rewrite)"
	check rewrite
	expect_eq "rewrite = symbols (read, flock)" "$(rows symbols)" "$(rows rewrite)"
else
	echo "rewrite mode unavailable here ($mode): not checked"
fi

if [ -x "$KBPF" ] && [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$KBPF" "${KBPF_EXACT[@]}" -o bpf -- "$prog" "$N" "$M" "$K" > bpf.out || fail "program failed under kbpf-trace"
	check bpf
	expect_eq "kbpf-trace = shim (read, flock)" "$(rows symbols)" "$(rows bpf)"
else
	echo "kbpf-trace cannot run here (needs root, BTF and the build): not checked"
fi
