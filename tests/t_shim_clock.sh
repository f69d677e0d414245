#!/bin/bash
# SPDX-License-Identifier: MIT
# serial: calibrates the clock against time
# tier: check
# The shim's clock (preload/core/clock.c). A process starts on CLOCK_MONOTONIC
# and switches to a TSC it calibrated against CLOCK_MONOTONIC once two
# intervals of >= 100 ms agree within 10 ppm (and CPUID says the TSC is
# invariant); it falls back for good when a later check disagrees.
# Checked: (a) under KPROF_CLOCK=auto a busy process switches (KPROF_DEBUG
# says so, the header says monotonic-calibrating); (b) 4 threads calling
# getppid() while the clock switches lose no call: the count is exactly
# what the program made; (c) KPROF_CLOCK=monotonic never switches; (d) times
# stay sane: no call longer than the run, the threads' time at most
# threads x wall, event start times in order across the switch; (e) an
# exec'd image adopts the calibration (KPROF_EXEC_CLOCK, which it removes);
# (f) a TSC that jumps after the switch (simulated: KPROF_TEST_TSC_JUMP_MS
# shifts the shim's calibration pairs, not the calls) sends the process
# back to CLOCK_MONOTONIC with every call still counted, and
# KPROF_CLOCK=tsc says so once on stderr.
# The program runs until the shim has said what the test waits for; no
# check depends on how fast the machine is.
. "$KPROF_ROOT/tests/lib.sh"
PROG=$BUILD/tests/clock_switch
[ -x "$PROG" ] || fail "$PROG not built"
[ "$(uname -m)" = x86_64 ] || skip "no TSC clock on $(uname -m)"
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo ||
	skip "CPUID says the TSC is not invariant (no constant_tsc/nonstop_tsc): the shim stays on CLOCK_MONOTONIC"
# With a TSC clocksource the kernel may give its conversion to user space
# (perf's cap_user_time): then nothing is calibrated. A KVM guest with the
# TSC as clocksource may still give none (kvm-clock's sched_clock): there
# the calibration runs, and is tested.
if LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/probe" KPROF_DEBUG=1 /bin/true 2>&1 |
	grep -q "clock: TSC with the kernel's conversion"; then
	skip "the kernel gives its TSC conversion (perf cap_user_time): the shim uses it from the start, nothing to calibrate"
fi
rm -rf probe

# start NAME ENV...: runs PROG (4 threads) under the shim in the background,
# stdout to NAME.out, stderr to NAME.err, trace in NAME/; stop NAME ends it.
start() {
	local name=$1
	shift
	mkfifo "$name.ctl"
	env LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/$name" KPROF_DEBUG=1 KPROF_INTERVAL_MS=50 "$@" \
		"$PROG" "${PROG_ARGS[@]}" <"$name.ctl" >"$name.out" 2>"$name.err" &
	pid=$!
	exec 3>"$name.ctl"
}
stop() {
	echo >&3
	exec 3>&-
	wait "$pid" || fail "$1: program failed: $(cat "$1.err")"
}
# wait_for NAME PATTERN: until NAME.err has a line matching PATTERN (10 min at most)
wait_for() {
	for _ in $(seq 6000); do
		grep -q -- "$2" "$1.err" && return 0
		kill -0 "$pid" 2>/dev/null || fail "$1: program ended early: $(cat "$1.err")"
		sleep 0.1
	done
	fail "$1: no '$2' on stderr after 10 min: $(cat "$1.err")"
}
field() { sed -n "s/^$2=//p" "$1.out" | head -n 1; }
# header_clock TRACEFILE: the header's clock_source (msgpack str after the key)
header_clock() { LC_ALL=C grep -a -o 'clock_source.[a-z-]*' "$1" | head -n 1 | cut -c 14-; }

# check_run NAME [MIN]: exact counts and sane times of a finished run; MIN
# is the smallest min_ns allowed (1; 0 where calls may be counted untimed)
check_run() {
	local name=$1 min=${2:-1} json total wall threads
	json=$(profile_json "$name")
	total=$(field "$name" getppid)
	wall=$(field "$name" wall_ns)
	threads=$(field "$name" threads)
	expect_eq "$name: getppid count" "$total" "$(syscall_field "$json" getppid count)"
	jq -e --argjson wall "$wall" --argjson threads "$threads" --argjson min "$min" '.syscalls[] |
		select(.name == "getppid") | .min_ns >= $min and .min_ns <= .avg_ns and
		.avg_ns <= .max_ns and .max_ns <= $wall and .time_ns <= $threads * $wall' \
		<<<"$json" >/dev/null ||
		fail "$name: getppid times not sane (wall $wall ns, $threads threads): $(jq -c \
			'.syscalls[] | select(.name == "getppid")' <<<"$json")"
	echo "ok: $name: times sane (max <= wall $wall ns, sum <= $threads x wall)"
	for f in "$name"/*.msgpack; do
		"$BUILD/tests/format_plain" "$f" >/dev/null 2>format.err ||
			fail "$f does not match docs/FORMAT.md: $(cat format.err)"
	done
}

PROG_ARGS=(4)

# (a) (b) (d): auto switches while 4 threads call getppid
start auto
wait_for auto "clock: TSC calibrated against CLOCK_MONOTONIC"
sleep 0.2 # calls that straddled the switch, and some on the TSC
stop auto
check_run auto
grep -q "CLOCK_MONOTONIC until the TSC is calibrated" auto.err || fail "auto: no start line: $(cat auto.err)"
expect_eq "auto: header clock_source" monotonic-calibrating "$(header_clock auto/*.msgpack)"
echo "ok: auto: switched ($(grep -o 'TSC calibrated against.*' auto.err))"
if grep -q "for good" auto.err; then fail "auto: fell back: $(cat auto.err)"; fi

# (c): KPROF_CLOCK=monotonic never switches, given at least twice as long
start mono KPROF_CLOCK=monotonic
wait_for mono "KPROF_CLOCK=monotonic"
sleep 1
stop mono
check_run mono
if grep -q "calibrated\|TSC" mono.err; then fail "monotonic: switched: $(cat mono.err)"; fi
expect_eq "monotonic: header clock_source" monotonic "$(header_clock mono/*.msgpack)"
echo "ok: KPROF_CLOCK=monotonic stayed on CLOCK_MONOTONIC for $(field mono wall_ns) ns"

# (d) events: one thread that spins 20 us (CLOCK_MONOTONIC) between calls:
# each call must start at least 19 us after the previous one ended, across
# the switch too, and all of them within the run
PROG_ARGS=(1 20)
start events KPROF_EVENTS=1
wait_for events "clock: TSC calibrated against CLOCK_MONOTONIC"
sleep 0.2
stop events
check_run events
"$KANALYZE" --timeline=events.json events >/dev/null || fail "events: kanalyze --timeline failed"
jq -e --argjson wall "$(field events wall_ns)" '
	[.traceEvents[] | select(.ph == "X" and .name == "getppid")] as $ev |
	($ev | length) > 1000 and
	([range(1; $ev | length) | select($ev[.].ts < $ev[. - 1].ts + $ev[. - 1].dur + 19)] | length) == 0 and
	(($ev | map(.ts + .dur) | max) - ($ev | map(.ts) | min)) * 1000 <= $wall' \
	events.json >/dev/null ||
	fail "events: start times out of order or beyond the run ($(jq '[.traceEvents[] | select(.ph == "X")] | length' events.json) events)"
echo "ok: events: $(jq '[.traceEvents[] | select(.ph == "X")] | length' events.json) calls, each >= 19 us after the one before, across the switch"

# (e): an exec'd image adopts the calibration and never sees the variable
PROG_ARGS=(2 0 /usr/bin/env)
start exec
wait_for exec "clock: TSC calibrated against CLOCK_MONOTONIC"
stop exec
grep -q "the parent's TSC calibration agrees with a fresh pair" exec.err ||
	fail "exec: the child did not adopt the calibration: $(cat exec.err)"
if grep -q KPROF_EXEC_CLOCK exec.out; then fail "exec: the child program saw KPROF_EXEC_CLOCK"; fi
grep -q '^LD_PRELOAD=' exec.out || fail "exec: env printed no environment"
echo "ok: exec: the child adopted the calibration; KPROF_EXEC_CLOCK not in its environment"
child=$(ls exec/env.*.msgpack | head -n 1)
expect_eq "exec: child header clock_source" tsc-calibrated "$(header_clock "$child")"

# (f): a TSC jump after the switch: back to CLOCK_MONOTONIC, counts exact
PROG_ARGS=(4)
start jump KPROF_TEST_TSC_JUMP_MS=5
wait_for jump "CLOCK_MONOTONIC for good"
sleep 0.2
stop jump
check_run jump 0 # calls that began on the TSC and ended after the fall-back: counted, not timed
grep -q "clock: TSC calibrated" jump.err || fail "jump: never switched: $(cat jump.err)"
echo "ok: jump: $(grep -o 'the TSC disagrees.*' jump.err)"

# KPROF_CLOCK=tsc without KPROF_DEBUG: the fall-back is said once on stderr
mkfifo tsc.ctl
env LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/tsc" KPROF_INTERVAL_MS=50 KPROF_CLOCK=tsc \
	KPROF_TEST_TSC_JUMP_MS=5 "$PROG" 2 <tsc.ctl >tsc.out 2>tsc.err &
pid=$!
exec 3>tsc.ctl
wait_for tsc "KPROF_CLOCK=tsc:"
stop tsc
expect_eq "tsc: warnings on stderr" 1 "$(grep -c '^kprof: ' tsc.err)"
check_run tsc 0
