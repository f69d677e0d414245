# SPDX-License-Identifier: MIT
# kbpf-trace killed with SIGKILL leaves nothing attached: every BPF link
# and program it held (read from its /proc/PID/fdinfo while it runs) is
# gone from the kernel afterwards (bpftool link/prog show id N fails):
# nothing is pinned, everything hangs off its descriptors. The same after
# a normal exit (SIGINT). The traced process runs on, untouched.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
command -v bpftool >/dev/null || skip "bpftool missing"
# ids PID KIND: the prog_id or link_id of every descriptor PID holds
ids() { { grep -h "^$2_id:" /proc/"$1"/fdinfo/* 2>/dev/null || true; } | awk '{ print $2 }' | sort -n -u | tr '\n' ' '; }
for how in KILL INT; do
	sleep 600 & target=$!
	"$KBPF" -p "$target" -o "$PWD/trace-$how" 2> kbpf-$how.err & kbpf=$!
	links="" progs=""
	for _ in $(seq 300); do # until every program is attached (at most 30 s)
		links=$(ids $kbpf link); progs=$(ids $kbpf prog)
		[ -n "$links" ] && [ "$(wc -w <<<"$links")" = "$(wc -w <<<"$progs")" ] && break
		sleep 0.1
	done
	[ -n "$links" ] && [ -n "$progs" ] || { kill $target; fail "$how: kbpf-trace never attached: $(cat kbpf-$how.err)"; }
	echo "kbpf-trace holds links $links and programs $progs"
	kill -$how $kbpf
	wait $kbpf || true
	# the kernel frees them asynchronously after the last descriptor
	# closes: allow it up to 10 s
	left=""
	for _ in $(seq 100); do
		left=""
		for id in $links; do bpftool link show id "$id" >/dev/null 2>&1 && left+=" link $id"; done
		for id in $progs; do bpftool prog show id "$id" >/dev/null 2>&1 && left+=" prog $id"; done
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "$how: still in the kernel:$left"
	echo "ok: $how: $(wc -w <<<"$links") links and $(wc -w <<<"$progs") programs gone"
	kill -0 $target || fail "$how: the traced process died"
	kill $target; wait $target 2>/dev/null || true
done
