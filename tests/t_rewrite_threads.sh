# SPDX-License-Identifier: MIT
# Rewrite mode with threads already running while the shim rewrites libc:
# a library preloaded after libkprof.so (its constructor runs first)
# starts 4 threads calling getpgrp() in a tight loop (not hooked by
# symbol: they never wait for the shim), through the very code being
# patched. Pages stay executable while they are written and each
# site changes with one 2-byte store, so none of them faults; every call
# made after the rewrite finished is counted (the kernel's count after the
# shim's start, exactly), none twice.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
command -v cc >/dev/null || skip "no C compiler (gcc) to build the test library"
cc -shared -fPIC -O2 -pthread -o libearly.so "$KPROF_ROOT/tests/rewrite/early_threads.c" ||
	fail "building the library"
for round in 1 2 3; do
	rm -rf "r$round"
	mkdir -p "r$round"
	rc=0
	"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/r$round/bpf" -- env KPROF_HOOK=rewrite \
		LD_PRELOAD="$SHIM $PWD/libearly.so" KPROF_OUT="$PWD/r$round/shim" \
		"$BUILD/tests/getppid_loop" 1000 > "r$round/out.txt" || rc=$?
	expect_eq "round $round: exit status" 0 "$rc"
	expect_eq "round $round: output" "getppid=1000
early_threads getpgrp=400000" "$(cat "r$round/out.txt")"
	expect_eq "round $round: getppid" 1000 "$(shim_count "r$round" getppid)"
	seen=$(shim_count "r$round" getpgrp)
	[ "$seen" -lt 400000 ] || fail "round $round: $seen getpgrp counted: the threads did not run during start-up"
	echo "ok: round $round: $seen of 400,000 getpgrp made after the rewrite"
	exact_coverage "r$round"
done
