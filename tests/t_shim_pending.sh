# SPDX-License-Identifier: MIT
# tier: check
# A process that ends while one thread is blocked reading a pipe and one is
# blocked writing one: the footer says so, and the pipes show as open.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/pipe_pending" | tee out.txt
{ grep -qx 'readers=1' out.txt && grep -qx 'writers=1' out.txt; } || fail "program did not block as planned: $(cat out.txt)"
json=$(profile_json trace)
expect_eq "pending pipe readers" 1 "$(jq .pending_pipe_readers <<<"$json")"
expect_eq "pending pipe writers" 1 "$(jq .pending_pipe_writers <<<"$json")"
pipes=$(jq '.processes[0].fds_at_exit.pipe' <<<"$json")
[ "$pipes" -ge 4 ] || fail "expected the 4 pipe ends open at exit, got $pipes"
"$KANALYZE" trace | grep -x 'Pending pipe readers: 1, writers: 1' || fail "footer does not say it"
