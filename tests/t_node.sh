# SPDX-License-Identifier: MIT
# Real Node (Debian's nodejs): the programs/node workload prints the same
# bytes with and without the shim, and its profile shows its file I/O,
# its epoll loop, its worker thread and its child process's own stream.
. "$KPROF_ROOT/tests/lib.sh"
app=$KPROF_ROOT/programs/node/host.js
node "$app" > plain.out
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace node "$app" > shim.out
cmp plain.out shim.out || { diff plain.out shim.out; fail "output differs under the shim"; }
echo "ok: output byte-identical ($(wc -c < shim.out) bytes)"
grep -q '^done$' shim.out || fail "workload did not finish"

json=$(profile_json trace)
for sc in read write openat; do
	n=$(syscall_field "$json" "$sc" count)
	[ "$n" -gt 0 ] || fail "no $sc calls in the profile"
	echo "ok: $sc count $n"
done
epoll=$(jq '[.syscalls[] | select(.name | startswith("epoll")) | .count] | add // 0' <<<"$json")
[ "$epoll" -gt 0 ] || fail "no epoll calls in the profile"
echo "ok: epoll calls $epoll"

# the parent node and the child node each have a stream; the child's ppid
# is the parent's pid
nproc=$(jq '.processes | length' <<<"$json")
[ "$nproc" -ge 2 ] || fail "expected the child's stream too, got $nproc process(es)"
linked=$(jq '[.processes[] as $c | .processes[] | select(.pid == $c.ppid)] | length' <<<"$json")
[ "$linked" -ge 1 ] || fail "no process links to its parent"
echo "ok: $nproc processes, $linked parent link(s)"
# the worker thread made calls of its own: the main process has > 1 thread
threads=$(jq '[.processes[] | select(.origin == "start") | .threads] | max' <<<"$json")
[ "$threads" -ge 2 ] || fail "expected the worker thread's calls, got $threads thread(s)"
echo "ok: main process threads $threads"
# totals add up: the sum of the rows equals the total
sum=$(jq '[.syscalls[].count] | add' <<<"$json")
expect_eq "total count = sum of rows" "$sum" "$(jq .total.count <<<"$json")"
# the classic view prints
"$KANALYZE" trace | tee table.out
grep -q '^=== Syscall Profile ===$' table.out || fail "no profile header"
grep -q '^=== End Profile ===$' table.out || fail "no profile footer"
