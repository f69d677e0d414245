# SPDX-License-Identifier: MIT
# Helpers for the rewrite-mode tests (tests/t_rewrite_*.sh), on top of
# bpf_lib.sh: the kernel's own count (kbpf-trace --events) is the reference
# for "every call after the shim's start-up is seen".
. "$KPROF_ROOT/tests/bpf_lib.sh"

# The hook mode under test: rewrite, or patch when t_patch_mode.sh runs
# these tests again (KPROF_TEST_HOOK=patch).
REWRITE_HOOK=${KPROF_TEST_HOOK:-rewrite}
# What a test that checks the default mode (rewrite, as root) adds to the
# command's environment: nothing, or KPROF_HOOK=patch.
HOOK_ENV=()
if [ -n "${KPROF_TEST_HOOK:-}" ]; then HOOK_ENV=(KPROF_HOOK="$KPROF_TEST_HOOK"); fi

# rewrite_possible: whether the shim runs in rewrite mode here.
rewrite_possible() {
	[ "$(uname -m)" = x86_64 ] || return 1
	local d mode
	d=$(mktemp -d)
	KPROF_HOOK=$REWRITE_HOOK LD_PRELOAD=$SHIM KPROF_OUT=$d /bin/true
	mode=$("$KANALYZE" --format=json "$d" | jq -r .hook_mode)
	rm -rf "$d"
	[ "$mode" = "$REWRITE_HOOK" ]
}

# need_rewrite: skip (77) unless the shim runs in rewrite mode here.
need_rewrite() {
	[ "$(uname -m)" = x86_64 ] || skip "$REWRITE_HOOK mode is x86_64 only"
	rewrite_possible ||
		skip "$REWRITE_HOOK mode unavailable here (rewrite: the lowest page needs CAP_SYS_RAWIO or vm.mmap_min_addr=0)"
}

# both DIR CMD...: CMD under kbpf-trace --events and the shim in rewrite
# mode at once: traces in DIR/shim and DIR/bpf, CMD's stdout in
# DIR/out.txt, its exit status in $both_rc. A run in which kbpf-trace, the
# reference, reported a loss (its reader starved on a loaded machine, a
# sanitized build above all) cannot be compared exactly: the whole run is
# made again, said, up to three times; exact_coverage fails on a loss left.
both() {
	local dir=$1 try lost
	shift
	for try in 1 2 3; do
		rm -rf "$dir"
		mkdir -p "$dir"
		both_rc=0
		"$KBPF" "${KBPF_EXACT[@]}" -o "$dir/bpf" -- env KPROF_HOOK="$REWRITE_HOOK" \
			LD_PRELOAD="$SHIM" KPROF_OUT="$dir/shim" "$@" > "$dir/out.txt" || both_rc=$?
		lost=$("$KANALYZE" --format=json "$dir/bpf" 2>/dev/null |
			jq '.drops.events + .drops.records' 2>/dev/null) || lost=
		[ "$lost" != 0 ] && [ -n "$lost" ] && [ $try -lt 3 ] || break
		echo "$dir: kbpf-trace lost $lost events or records; the run is made again"
	done
}

# exact_coverage DIR [NAME=DIFF...]: kanalyze --coverage --after-start:
# for every syscall the kernel saw in the traced processes after the
# shim's start-up (the shim's own calls set aside), the shim counted
# exactly as many; NAME=DIFF allows the kernel DIFF more of NAME (calls
# still in progress when a process ended, which never return).
exact_coverage() {
	local dir=$1
	shift
	local json allow="{}" lost
	lost=$("$KANALYZE" --format=json "$dir/bpf" | jq '.drops.events + .drops.records')
	[ "$lost" = 0 ] || fail "kbpf-trace lost $lost events or records: no exact comparison possible"
	json=$("$KANALYZE" --coverage --after-start --format=json "$dir/shim" "$dir/bpf") ||
		fail "kanalyze --coverage --after-start failed"
	for a in "$@"; do
		allow=$(jq -c --arg n "${a%%=*}" --argjson d "${a#*=}" '. + {($n): $d}' <<<"$allow")
	done
	local bad
	bad=$(jq -r --argjson allow "$allow" '.syscalls[] |
		select(.count_b - .count_a != ($allow[.name] // 0)) |
		"\(.name): shim \(.count_a), kernel \(.count_b)"' <<<"$json")
	[ -z "$bad" ] || fail "the shim and the kernel disagree after start-up: $(echo $bad)"
	echo "ok: every syscall after start-up seen exactly ($(jq .total.count_a <<<"$json") calls)"
}

# kernel_interrupted DIR NAME: calls of NAME the kernel saw end in
# -ERESTARTSYS & co. (a signal arrived): restarted, the kernel counts the
# call again; the program (and the shim) saw one call
kernel_interrupted() {
	"$KANALYZE" --timeline="$1/timeline.json" "$1/bpf" 2>/dev/null ||
		fail "kanalyze --timeline failed"
	jq --arg n "$2" '[.traceEvents[] | select(.name == $n and .ph == "X" and
		(.args.ret // 0) <= -512 and (.args.ret // 0) >= -516)] | length' "$1/timeline.json"
}

# shim_count DIR NAME: the shim's count of one syscall over every stream
shim_count() { syscall_field "$(profile_json "$1/shim")" "$2" count; }

# as_nobody_setup: AS_NOBODY=(setpriv ... to nobody), and this test's
# directory (and its parent, the runner's) open for nobody to walk; a home
# of nobody's own for the site cache. Needs root.
as_nobody_setup() {
	AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	chmod 755 . ..
	mkdir -p home
	chown nobody:nogroup home
	chmod 700 home
}
