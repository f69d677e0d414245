# SPDX-License-Identifier: MIT
# The trace's disk is full (a 256 KiB tmpfs filled up): the program runs
# as without the shim. When space comes back (the program deletes the
# filler half way) the trace says what was dropped and why, and the
# cumulative counts are exact again. When it never comes back, the
# program is still unaffected and the file holds no partial record.
. "$KPROF_ROOT/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root to mount a small tmpfs"
mkdir mnt
mount -t tmpfs -o size=256k,mode=0755 kprof-enospc mnt 2>/dev/null || skip "cannot mount tmpfs here"
trap 'umount -l mnt' EXIT
prog=$BUILD/tests/calls_wait
fill() { dd if=/dev/zero of=mnt/filler bs=4k 2>/dev/null || true; [ "$(df --output=avail mnt | tail -n 1 | tr -d ' ')" = 0 ] || fail "tmpfs not full"; }

fill
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/mnt/trace KPROF_INTERVAL_MS=1 "$prog" fill 100000 mnt/filler > out.txt 2> err.txt || rc=$?
cat err.txt
# said once on stderr; the end is complete again, so no "incomplete" line
expect_eq "stderr, space coming back" 1 "$(grep -c 'cannot write the trace of pid .*No space left on device' err.txt)"
expect_eq "stderr lines" 1 "$(wc -l < err.txt)"
expect_eq "status, space coming back" 0 "$rc"
expect_eq "output" "calls=200000" "$(cat out.txt)"
json=$(profile_json mnt/trace)
expect_eq "getppid (cumulative: the last aggregate has them all)" 200000 "$(syscall_field "$json" getppid count)"
expect_eq "drop reason" '["write failed: No space left on device"]' "$(jq -c .drops.reasons <<<"$json")"
[ "$(jq .drops.records <<<"$json")" -gt 0 ] || fail "no dropped records reported: $(jq -c .drops <<<"$json")"
echo "ok: $(jq -c .drops <<<"$json")"
expect_eq "exit record" 0 "$(jq '.processes[0].exit_status' <<<"$json")"

rm -rf mnt/trace; fill
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/mnt/trace2 KPROF_INTERVAL_MS=1 "$prog" fill 100000 > out2.txt 2> err2.txt || rc=$?
cat err2.txt
grep -q 'cannot write the trace of pid .*No space left on device' err2.txt || fail "the failure was not said"
grep -q 'is incomplete: [1-9][0-9]* records (.* bytes) lost at its end' err2.txt ||
	fail "the loss at the end was not said"
expect_eq "status, disk full to the end" 0 "$rc"
expect_eq "output, disk full to the end" "calls=200000" "$(cat out2.txt)"
expect_eq "trace file cut back to nothing" 0 "$(stat -c %s mnt/trace2/*.msgpack)"
# and kanalyze calls the empty file what it is
rc=0; "$KANALYZE" --strict mnt/trace2 > /dev/null 2> ana.err || rc=$?
cat ana.err
expect_eq "kanalyze --strict on the lost trace" 3 "$rc"
grep -q "empty trace file" ana.err || fail "kanalyze did not name the empty file"
