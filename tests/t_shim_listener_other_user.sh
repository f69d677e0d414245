# SPDX-License-Identifier: MIT
# The shim streams to a kanalyze --listen of its own user only: a listener
# of another user (here: nobody, in a shared directory) gets nothing, as
# the shim refuses to send it our command lines and paths; the stream goes
# to the fallback directory with a warning. Needs root to run the listener
# as nobody. (The listener itself: t_analyze_live.sh.)
source "$KPROF_ROOT/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to run a listener as another user (nobody)"
chmod 711 . && mkdir -m 1777 shared
setpriv --reuid=nobody --regid=nogroup --clear-groups "$KANALYZE" \
	--listen=unix:$PWD/shared/k.sock --format=json > other.json 2> other.err &
other=$!
for _ in $(seq 50); do [ -S shared/k.sock ] && break; sleep 0.1; done
[ -S shared/k.sock ] || fail "nobody's listener did not start: $(cat other.err)"
mkdir own && cd own
LD_PRELOAD=$SHIM KPROF_OUT=unix:$PWD/../shared/k.sock "$BUILD/tests/getppid_loop" 10 > /dev/null 2> err
grep -q "the listener is another user's" err || fail "no refusal warning: $(cat err)"
expect_eq "refused stream written to the fallback" 10 "$(syscall_field "$(profile_json kprof-trace)" getppid count)"
kill -INT $other; wait $other || true
expect_eq "other user's listener received" 0 "$(jq '.processes | length' ../other.json)"
