#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# What kanalyze concludes from a trace that stops early. Every stream
# that does not end with its exit record (or an exec) is named once on
# stderr with the input and byte after which nothing of it arrived; an
# empty or headerless trace file is damaged input (exit 5); a fork child
# without a stream in a trace directory is named; --strict exits 3 on all
# of these and on records missing in the middle; a complete run says
# nothing and passes --strict. Without --strict, streams without exit,
# children without a stream and missing records exit 0 (the inputs were
# read completely), damaged inputs 2.
. "$KPROF_ROOT/tests/lib.sh"
GEN=$BUILD/tests/gen_trace

# run_k NAME ARGS...: kanalyze ARGS > NAME.out 2> NAME.err; $rc its status
run_k() { local name=$1; shift; rc=0; "$KANALYZE" "$@" > "$name.out" 2> "$name.err" || rc=$?; }
# expect_err NAME LINE...: NAME.err is exactly these lines
expect_err() { local name=$1; shift; expect_eq "$name: stderr" "$(printf '%s\n' "$@")" "$(cat "$name.err")"; }
# json_of ARGS...: kanalyze's JSON whatever its exit status
json_of() { "$KANALYZE" --format=json "$@" 2>/dev/null || true; }
strict_line() { echo "kanalyze: --strict: $1 records missing, $2 drop records, $3 streams without exit, $4 inputs without a stream start, $5 fork children without a stream${6:-}"; }

# ---- a complete run of a process tree: nothing to say ----
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/tree "$BUILD/tests/proc_tree" > tree.txt
run_k tree --strict tree
expect_eq "complete tree: --strict exit" 0 "$rc"
expect_err tree
expect_eq "complete tree: every stream ended" '["exec","exit","exit","exit"]' \
	"$("$KANALYZE" --format=json tree | jq -c '[.processes[].ending] | sort')"

# ---- SIGKILL after the first periodic flush ----
# The program and everything of it (the shim's output process too, which
# would otherwise write the end itself): a group of its own, killed whole
# once a periodic flush holds the 1000 calls.
setsid bash -c 'echo $$ > killed.pid; exec env LD_PRELOAD="$1" KPROF_OUT="$2" KPROF_INTERVAL_MS=50 "$3" kill 1000' \
	_ "$SHIM" "$PWD/killed" "$BUILD/tests/calls_wait" > killed.txt &
got=0
for _ in $(seq 300); do # until a flush holds the 1000 calls (at most 30 s)
	got=$("$KANALYZE" --format=json killed 2>/dev/null | jq '[.syscalls[] | select(.name == "getppid") | .count] | add // 0' || true)
	[ "${got:-0}" = 1000 ] && break
	sleep 0.1
done
pid=$(cat killed.pid)
kill -KILL -- -"$pid"
wait $! 2>/dev/null || true
expect_eq "killed: getppid in the last flush" 1000 "$got"
file=killed/calls_wait.$pid.0.msgpack
[ -f "$file" ] || fail "no $file: $(ls killed)"
bytes=$(stat -c %s "$file")
line="kanalyze: stream of pid $pid (calls_wait) ended without exit: killed or lost after byte $bytes of $file"
run_k killed killed
expect_eq "killed: exit" 0 "$rc"
expect_err killed "$line"
run_k killed-strict --strict killed
expect_eq "killed: --strict exit" 3 "$rc"
expect_err killed-strict "$line" "$(strict_line 0 0 1 0 0)"
run_k killed-proc --by=process killed
grep -Eqx -- "--- pid $pid \(ppid [0-9]+, start\) $BUILD/tests/calls_wait kill 1000 ---" killed-proc.out ||
	fail "killed: no process section: $(grep -- '^---' killed-proc.out)"
grep -qx "No exit record: status unknown (killed or lost after byte $bytes of $file)" killed-proc.out ||
	fail "killed: status line: $(grep -i exit killed-proc.out)"
echo "ok: killed: --by=process shows it, status unknown"
json=$(json_of killed)
expect_eq "killed: JSON unended" "[{\"pid\":$pid,\"name\":\"calls_wait\",\"file\":\"$file\",\"byte\":$bytes,\"ending\":\"unknown\"}]" \
	"$(jq -c '[.unended[] | {pid, name, file, byte, ending}]' <<<"$json")"
expect_eq "killed: JSON exit_status" null "$(jq '.processes[0].exit_status' <<<"$json")"

# ---- an empty file among complete ones: damaged, named, shown ----
cp -r tree empty
: > empty/sleep.4242.0.msgpack
eline="kanalyze: empty/sleep.4242.0.msgpack: empty trace file: the process wrote nothing (killed before its first flush, or its disk was full)"
run_k empty empty
expect_eq "empty file: exit" 5 "$rc"
expect_err empty "$eline"
run_k empty-strict --strict empty
expect_eq "empty file: --strict exit" 3 "$rc"
expect_err empty-strict "$eline" "$(strict_line 0 0 0 1 0)"
run_k empty-proc --by=process empty
grep -qx -- "--- pid 4242 (empty trace file empty/sleep.4242.0.msgpack) ---" empty-proc.out ||
	fail "empty file: no section for pid 4242: $(grep -- '^---' empty-proc.out)"
grep -qx "No records: status unknown (the trace file is empty)" empty-proc.out || fail "empty file: status line"
echo "ok: empty file: --by=process shows pid 4242"
json=$(json_of empty)
expect_eq "empty file: JSON damaged" '[{"file":"empty/sleep.4242.0.msgpack","no_stream_start":true}]' \
	"$(jq -c '[.damaged[] | {file, no_stream_start}]' <<<"$json")"
expect_eq "empty file: JSON process" '[{"pid":4242,"ending":"empty","exit_status":null}]' \
	"$(jq -c '[.processes[] | select(.empty_file) | {pid, ending, exit_status}]' <<<"$json")"
# one empty file given alone (the gzip of a full disk: nothing at all)
: > alone.msgpack.gz
run_k alone alone.msgpack.gz
expect_eq "empty gzip file alone: exit" 5 "$rc"
expect_err alone "kanalyze: alone.msgpack.gz: empty trace file: the process wrote nothing (killed before its first flush, or its disk was full)"

# ---- a file whose first record is not a header ----
src=$(ls tree/proc_tree.*.msgpack | head -n 1)
header_end=$("$BUILD/tests/format_plain" --offsets "$src" | head -n 1)
tail -c +$((header_end + 1)) "$src" > headerless.msgpack
first=$("$BUILD/tests/format_plain" --offsets "$src" | sed -n 2p)
run_k headerless headerless.msgpack
expect_eq "headerless: exit" 5 "$rc"
hline=$(head -n 1 headerless.err)
[[ $hline =~ ^kanalyze:\ headerless.msgpack:\ headerless\ trace:\ its\ first\ record\ is\ an?\ [a-z]+\ record,\ not\ a\ header\ \(the\ start\ of\ the\ stream\ is\ missing\)$ ]] ||
	fail "headerless: message: $(cat headerless.err)"
echo "ok: $hline"
run_k headerless-strict --strict headerless.msgpack
expect_eq "headerless: --strict exit" 3 "$rc"
grep -q -- "--strict: .* 1 inputs without a stream start" headerless-strict.err || fail "headerless: strict: $(cat headerless-strict.err)"

# ---- execs whose new program has no stream ----
# a static program (no loader: the shim cannot be in it), run by bash in a
# fork child and by bash's own last exec; a dynamic one between them is
# traced as usual. Each exec that left no stream is said, with its path.
static=$BUILD/tests/static_getppid
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/execs bash -c "$static 3 > /dev/null; /bin/true; exec $static 2" > /dev/null
run_k execs execs
expect_eq "execs without a stream: exit" 0 "$rc"
# the shim looked at the file before the exec: the reason is its own
n=$(grep -c "^kanalyze: the exec of $static by pid [0-9]* has no stream after it (static binary, LD_PRELOAD cannot enter it): its calls are not in the profile$" execs.err || true)
expect_eq "execs without a stream: lines" 2 "$n"
expect_eq "execs without a stream: nothing else said" 2 "$(wc -l < execs.err)"
expect_eq "execs without a stream: JSON" "$static $static" \
	"$(json_of execs | jq -r '[.execs_without_stream[].path] | join(" ")')"
expect_eq "execs without a stream: JSON not_entered" "static static" \
	"$(json_of execs | jq -r '[.execs_without_stream[].not_entered] | join(" ")')"
# the new image of the last exec killed before its header: its empty
# file is said, and the exec is not said a second time
cp -r execs execs-killed
last=$(json_of execs | jq -r '[.execs_without_stream[].pid] | max')
: > "execs-killed/static_getppid.$last.0.msgpack"
run_k execs-killed execs-killed
expect_eq "exec, then an empty file of its pid: exit" 5 "$rc"
expect_eq "exec, then an empty file of its pid: lines" 2 "$(wc -l < execs-killed.err)"
grep -qx "kanalyze: execs-killed/static_getppid.$last.0.msgpack: empty trace file: the process wrote nothing (killed before its first flush, or its disk was full)" execs-killed.err ||
	fail "exec, then an empty file: no empty-file line: $(cat execs-killed.err)"
expect_eq "exec, then an empty file of its pid: the other exec said" 1 \
	"$(grep -c "^kanalyze: the exec of $static by pid [0-9]* has no stream after it" execs-killed.err)"
grep -q "by pid $last has no stream after it" execs-killed.err &&
	fail "exec, then an empty file: the exec of pid $last said too"
echo "ok: an exec whose new image left an empty file is said once"
run_k execs-strict --strict execs
expect_eq "execs without a stream: --strict exit" 3 "$rc"
grep -qx -- "$(strict_line 0 0 0 0 0 ", 2 execs without a stream")" execs-strict.err ||
	fail "execs without a stream: strict line: $(tail -n 1 execs-strict.err)"

# ---- fork children without a stream ----
# a real one: killed by its parent before its first flush (KPROF_INTERVAL_MS=0:
# the child's only flush would be at its end). Whatever the shim manages
# to write of it, kanalyze says exactly that: nothing (no stream), a start
# without an end, or an end its output process wrote after the death.
KPROF_INTERVAL_MS=0 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/forked "$BUILD/tests/fork_kill" > forked.txt
sleep 0.3 # an output process of the child writes after the child is gone
child=$(sed -n 's/^child=\([0-9]*\) signal=9$/\1/p' forked.txt)
[ -n "$child" ] || fail "fork_kill said: $(cat forked.txt)"
parent=$(basename "$(ls forked/fork_kill.*.msgpack | grep -v "\.$child\." | head -n 1)" | cut -d. -f2)
run_k forked forked
expect_eq "killed fork child: exit" 0 "$rc"
cfile=forked/fork_kill.$child.0.msgpack
ending=$(json_of forked | jq -r --argjson c "$child" '[.processes[] | select(.pid == $c) | .ending] | join(" ")')
case $ending in
"")	expect_err forked "kanalyze: fork child pid $child of pid $parent has no stream (fork: killed before its first flush, or its trace is not among the inputs)"
	strict=3 ;;
unknown) expect_err forked "kanalyze: stream of pid $child (fork_kill) ended without exit: killed or lost after byte $(stat -c %s "$cfile") of $cfile"
	strict=3 ;;
after_death) expect_err forked
	strict=0 ;;
*)	fail "killed fork child: ending '$ending'" ;;
esac
run_k forked-strict --strict forked
expect_eq "killed fork child (ending '${ending:-no stream}'): --strict exit" $strict "$rc"
# a synthetic one: process a posix_spawns pid 4242, which has no stream
mkdir spawn
"$GEN" --orphan spawn/fixture.msgpack
spawn_why="posix_spawn: the shim traces such a child from its exec on: a static or setuid program, KPROF_FOLLOW=0 or a failed exec leave none; or it was killed before its first flush, or its trace is not among the inputs"
run_k spawn spawn
expect_eq "spawned child without a stream: exit" 0 "$rc"
expect_err spawn "kanalyze: fork child pid 4242 of pid 100 has no stream ($spawn_why)"
run_k spawn-strict --strict spawn
expect_eq "spawned child without a stream: --strict exit" 3 "$rc"
expect_err spawn-strict "kanalyze: fork child pid 4242 of pid 100 has no stream ($spawn_why)" "$(strict_line 0 1 0 0 1)"
expect_eq "JSON forks_without_stream" '[{"pid":100,"stream":"a1a2a3a4a5a6a7a8","child":4242,"how":"posix_spawn"}]' \
	"$(json_of spawn | jq -c .forks_without_stream)"
# one shim file named alone is one process image: its children are elsewhere
run_k spawn-file spawn/fixture.msgpack
expect_err spawn-file
expect_eq "one file: children not checked" false "$("$KANALYZE" --format=json spawn/fixture.msgpack | jq .fork_children_checked)"
# --pid without the parent: its children are not asked for
run_k spawn-pid --pid=101 spawn
expect_err spawn-pid

# ---- records missing in the middle (a full disk that came back) ----
"$GEN" --process=a --seq-gap=383 gap.msgpack
gline="kanalyze: pid 100 stream a1a2a3a4a5a6a7a8: 383 records missing (seq 3-385)"
run_k gap gap.msgpack
expect_eq "gap: exit" 0 "$rc"
expect_err gap "$gline"
run_k gap-strict --strict gap.msgpack
expect_eq "gap: --strict exit" 3 "$rc"
expect_err gap-strict "$gline" "$(strict_line 383 0 0 0 0 " (not checked: one file of the shim)")"
run_k gap-diff --strict --diff gap.msgpack gap.msgpack
expect_eq "gap: --strict --diff exit" 3 "$rc"

# ---- how a synthetic stream ends: exec, kbpf-trace's records ----
"$GEN" --process=b --no-exit exec.msgpack   # b's last record is its exec
run_k exec exec.msgpack
expect_eq "exec ends a stream: exit" 0 "$rc"
expect_err exec
grep -qx "Replaced by exec of /bin/true" <("$KANALYZE" --by=process exec.msgpack) || fail "exec: status line"
"$GEN" --process=a --seq --no-exit --producer=bpf bpf.msgpack
bytes=$(stat -c %s bpf.msgpack)
run_k bpf bpf.msgpack
# (kbpf-trace follows the whole tree into one file: the fork child 101,
# left out here, is asked for)
expect_err bpf "kanalyze: stream of pid 100 (fixture-a) ended without exit: kbpf-trace stopped before it ended the stream, or the rest was lost, after byte $bytes of bpf.msgpack" \
	"kanalyze: fork child pid 101 of pid 100 has no stream (fork: kbpf-trace starts a stream for every child: its records were lost)"
"$GEN" --seq --producer=bpf --detached detached.msgpack
run_k detached --by=process detached.msgpack
expect_eq "detached: exit" 0 "$rc"
expect_err detached
grep -q "^Still running when tracing ended (detached); open at the end of tracing: " detached.out || fail "detached: status line"
echo "ok: a detached exit ends a stream"

# ---- --listen: a producer killed mid-run is named by its connection ----
sock=$PWD/k.sock
"$KANALYZE" --listen=unix:$sock --save=saved --refresh=0 --linger=600000 --strict \
	> live.out 2> live.err &
listener=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "listener did not create $sock: $(cat live.err)"
# killed with its output process, as above
setsid bash -c 'echo $$ > victim.pid; exec env LD_PRELOAD="$1" KPROF_OUT="$2" KPROF_INTERVAL_MS=10 "$3" 2000000000' \
	_ "$SHIM" "unix:$sock" "$BUILD/tests/getppid_loop" > /dev/null &
sleep 0.5
victim=$(cat victim.pid)
kill -KILL -- -"$victim"
wait $! 2>/dev/null || true
LD_PRELOAD=$SHIM KPROF_OUT=unix:$sock "$BUILD/tests/getppid_loop" 1000 > /dev/null
sleep 0.3
kill -INT $listener
rc=0; wait $listener || rc=$?
expect_eq "listen: --strict exit" 3 "$rc"
saved=$(ls saved/conn-0001-*.msgpack)
line=$(grep "^kanalyze: stream of pid $victim " live.err) || fail "listen: victim not named: $(cat live.err)"
[[ $line =~ ^kanalyze:\ stream\ of\ pid\ $victim\ \(getppid_loop\)\ ended\ without\ exit:\ killed\ or\ lost\ after\ byte\ $(stat -c %s "$saved")\ of\ connection\ 1\ \(pid\ [0-9]+\)$ ]] ||
	fail "listen: $line (saved $(stat -c %s "$saved") bytes)"
echo "ok: $line"
expect_eq "listen: streams without exit" 1 "$(grep -c 'ended without exit' live.err)"
# the saved connections read back name the file instead; being two runs
# in one directory, they are said to be merged
run_k saved saved
head -1 saved.err | grep >/dev/null "^kanalyze: warning: the inputs hold 2 runs (getppid_loop pid $victim by preload, getppid_loop pid [0-9]* by preload), merged into one profile" ||
	fail "saved: two runs not named: $(cat saved.err)"
sed -i 1d saved.err
expect_err saved "kanalyze: stream of pid $victim (getppid_loop) ended without exit: killed or lost after byte $(stat -c %s "$saved") of $saved"
