# SPDX-License-Identifier: MIT
# tier: check
# No heap allocation on the shim's hot path: tests/malloc_count defines the
# allocator itself (the executable comes first in symbol lookup), counts
# allocations per thread while it makes 4N hooked calls on an attached
# thread and on a new one (whose first call attaches it), and a control
# shows that libc's own malloc reaches the counter. Counts only, events,
# and events + gzip with a flush every millisecond (the rare flush runs on
# the calling thread inside the window): exactly 0 each time.
. "$KPROF_ROOT/tests/lib.sh"
calls=20000
for mode in "KPROF_EVENTS=0" "KPROF_EVENTS=1" "KPROF_EVENTS=1 KPROF_GZIP=1 KPROF_INTERVAL_MS=1"; do
	rm -rf trace
	out=$(env $mode LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/trace" "$BUILD/tests/malloc_count" --calls=$calls) ||
		fail "malloc_count under the shim ($mode) exited $?"
	field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$out"; }
	expect_eq "$mode: main-thread calls" $((4 * calls)) "$(field main_calls)"
	expect_eq "$mode: mallocs during $((4 * calls)) hooked calls (main thread)" 0 "$(field main_mallocs)"
	expect_eq "$mode: mallocs during $((4 * calls)) hooked calls (new thread)" 0 "$(field thread_mallocs)"
	[ "$(field control_mallocs)" -ge 1 ] || fail "$mode: control: opendir's malloc was not counted"
	echo "ok: $mode: control counted $(field control_mallocs) malloc(s)"
	# the calls were hooked: 1 warm-up + N (main) + N (thread) getppid
	json=$(profile_json trace)
	expect_eq "$mode: getppid count" $((2 * calls + 1)) "$(syscall_field "$json" getppid count)"
done
