# SPDX-License-Identifier: MIT
# kanalyze --exclude-waits: the calls that wait by nature (class %wait:
# futex, poll, epoll_wait, nanosleep, wait4, ...) set aside in every view,
# and said: a shell that waits for a sleeping child has its wait4 and the
# child's clock_nanosleep set aside; the table's line and the JSON's
# set_aside count exactly the wait-class calls of the whole profile, and
# what is left is exactly the rest; -e and pprof follow; the live view of
# --listen sets them aside too, in its snapshots and its final profile.
. "$KPROF_ROOT/tests/lib.sh"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t dash -c 'sleep 0.2 & wait; /bin/true' || fail "workload"
waits="futex|futex_waitv|poll|ppoll|select|pselect6|epoll_wait|epoll_pwait|epoll_pwait2|nanosleep|clock_nanosleep|wait4|waitid|pause|rt_sigsuspend|rt_sigtimedwait|sched_yield|io_getevents|io_pgetevents"
all=$(profile_json t)
want_calls=$(jq --arg w "^($waits)\$" '[.syscalls[] | select(.name | test($w)) | .count] | add' <<<"$all")
want_ns=$(jq --arg w "^($waits)\$" '[.syscalls[] | select(.name | test($w)) | .time_ns] | add' <<<"$all")
[ "$want_calls" -ge 2 ] || fail "the workload made $want_calls wait-class calls"
echo "wait-class calls in the whole profile: $want_calls ($(jq -r --arg w "^($waits)\$" \
	'[.syscalls[] | select(.name | test($w)) | .name] | join(" ")' <<<"$all"))"
aside=$(profile_json --exclude-waits t)
expect_eq "JSON: set aside calls" "$want_calls" "$(jq .set_aside.calls <<<"$aside")"
expect_eq "JSON: set aside time" "$want_ns" "$(jq .set_aside.time_ns <<<"$aside")"
expect_eq "JSON: calls left" "$(($(jq .total.count <<<"$all") - want_calls))" "$(jq .total.count <<<"$aside")"
expect_eq "JSON: no wait-class row left" "" \
	"$(jq -r --arg w "^($waits)\$" '.syscalls[] | select(.name | test($w)) | .name' <<<"$aside")"
"$KANALYZE" --exclude-waits t > table.txt
grep -qx "waits set aside (--exclude-waits: futex, poll, select, epoll_wait, nanosleep, wait4, ...): $want_calls calls, [0-9.]* ms" table.txt ||
	fail "table line: $(sed -n 2p table.txt)"
! grep -Eq "^($waits) \(" table.txt || fail "a wait row in the table"
echo "ok: the table says what it set aside"
# with -e: the waits go whatever -e named
expect_eq "-e wait4,execve --exclude-waits: rows" "execve" \
	"$(profile_json -e wait4,execve --exclude-waits t | jq -r '[.syscalls[].name] | join(" ")')"
expect_eq "-e %wait: the class alone" "$want_calls" "$(profile_json -e %wait t | jq .total.count)"
# the stack views leave them out too
"$KANALYZE" --exclude-waits --pprof=p.pb.gz t 2>/dev/null
HOME=$PWD go tool pprof -top -nodefraction=0 -sample_index=calls p.pb.gz 2>/dev/null > top.txt
! grep -Eq "syscall:($waits)\$" top.txt || fail "pprof has a wait: $(grep -E "syscall:($waits)\$" top.txt)"
! grep -Eq ";($waits) [0-9]+\$" <("$KANALYZE" --exclude-waits --folded t) || fail "--folded has a wait"
echo "ok: pprof and --folded leave them out"

# live: snapshots and the final profile of --listen
"$KANALYZE" --listen="unix:$PWD/k.sock" --exclude-waits --refresh=50 --linger=500 > live.txt 2> live.err &
k=$!
for _ in $(seq 100); do [ -S k.sock ] && break; sleep 0.05; done
KPROF_OUT="unix:$PWD/k.sock" LD_PRELOAD=$SHIM dash -c 'sleep 0.3 & wait; /bin/true'
wait $k || fail "kanalyze --listen: $(cat live.err)"
snaps=$(grep -c '^--- kanalyze --listen' live.txt || true)
[ "$snaps" -ge 1 ] || fail "no live snapshot: $(head -n 5 live.txt)"
[ "$(grep -c '^waits set aside (--exclude-waits' live.txt)" -gt "$snaps" ] ||
	fail "not every snapshot and the final profile say what they set aside"
! grep -Eq "^($waits) \(" live.txt || fail "a wait row in the live view: $(grep -E "^($waits) \(" live.txt | head -n 2)"
echo "ok: $snaps live snapshots and the final profile set the waits aside"
