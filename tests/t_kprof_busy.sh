# SPDX-License-Identifier: MIT
# tier: check
# serial: makes both CPUs busy on purpose
# kprof says when the CPUs were contended during the run (PSI,
# /proc/pressure/cpu): the calls' times then include waits for a CPU.
# With four busy loops on the machine's CPUs beside a run, the note is
# there; the share it gives is a percentage of the run.
. "$KPROF_ROOT/tests/lib.sh"
[ -r /proc/pressure/cpu ] || skip "a kernel without PSI (/proc/pressure/cpu): kprof says nothing"
n=$(( $(nproc) * 2 ))
pids=()
for _ in $(seq "$n"); do sh -c 'while :; do :; done' & pids+=($!); done
trap 'kill "${pids[@]}" 2> /dev/null' EXIT
sleep 0.5
"$BUILD/kprof" -- sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; sleep 0.5' 2> busy.txt
kill "${pids[@]}"
trap - EXIT
cat busy.txt | head -n 4
grep -Eq '^kprof: the CPUs were contended: some runnable task waited for one [0-9]+% of the run' busy.txt ||
	fail "no contention note with $n busy loops on $(nproc) CPUs: $(head -n 3 busy.txt)"
share=$(sed -n 's/^kprof: the CPUs were contended: some runnable task waited for one \([0-9]*\)%.*/\1/p' busy.txt)
[ "$share" -ge 10 ] && [ "$share" -le 100 ] || fail "share $share% out of 10..100"
echo "ok: contended $share% of the run"
