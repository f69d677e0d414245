# SPDX-License-Identifier: MIT
# kbpf-trace -p with a pid given twice (-p N,N or -p N -p N) attaches to
# that process once: one stream, each call once, and says 1 process.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
cp "$BUILD/tests/getppid_loop" kp-twice
for how in comma repeated; do
	sh -c 'read -r _; exec ./kp-twice 500 > /dev/null' < <(sleep 1; echo go) &
	target=$!
	if [ $how = comma ]; then
		"$KBPF" -p "$target,$target" -o "$PWD/t-$how" 2> err-$how
	else
		"$KBPF" -p "$target" -p "$target" -o "$PWD/t-$how" 2> err-$how
	fi
	wait $target
	grep -q "^kbpf-trace: attached to 1 process; " err-$how || fail "$how: $(cat err-$how)"
	json=$(profile_json "t-$how")
	expect_eq "$how: processes" "sh kp-twice" "$(jq -r '[.processes[].comm] | join(" ")' <<<"$json")"
	expect_eq "$how: getppid" 500 "$(syscall_field "$json" getppid count)"
done
