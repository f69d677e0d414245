# SPDX-License-Identifier: MIT
# bash and dash with job control: a POSIX script run by each shell on a
# terminal of its own (util-linux `script`, so that `set -m` really puts
# jobs into process groups and stops, continues, fg and kill of %jobs work),
# then scripts without a terminal: pipes, traps (EXIT, USR1, TERM, CHLD),
# wait on many background jobs, subshells, command substitution, bash's
# coproc, wait -n, process substitution and pipefail. Delays are 0.2 s or
# more where an order depends on them. A killed job is waited for by pid
# (`wait %1` says "no such job" when bash reaped and reported it first;
# `wait PID` says 127 then),
# and `wait -n` runs in a subshell whose job table holds its three jobs
# alone (bash's `wait -n` returns an earlier job's status when it ended
# unreported: the coproc's 0 came first in two loaded CI runs, even after
# a plain `wait`).
# torture: quick timeout=240
. "$TORTURE_CASES/lib.sh"
cat > jobs.sh <<'EOF'
set -m
sleep 1 &
pg=$(ps -o pgid= -p $! | tr -d ' ')
[ "$pg" != "$(ps -o pgid= -p $$ | tr -d ' ')" ] && echo "job has a process group of its own"
jobs
kill -STOP %1
sleep 0.3
jobs
kill -CONT %1
fg %1
echo "fg $?"
(sleep 0.2; exit 3) &
wait $!
echo "wait $?"
sleep 5 &
pid=$!
kill %1
# dash reaps and reports the job before `wait` when the sleep dies before
# its next command (127, seen without the shim under load), else `wait`
# reaps it (143, and "Terminated" on stderr): both mean killed by TERM
wait $pid 2>/dev/null
s=$?
[ $s = 127 ] && s=143
echo "killed $s"
sh -c 'kill -TERM $$'
echo "child killed itself: $?"
# without job control from here: the shells' "Done" notices of the 20 jobs
# come in the order the jobs end
set +m
i=0
while [ $i -lt 20 ]; do (exit $((i % 4))) & i=$((i + 1)); done
wait
echo "20 jobs waited"
trap 'echo "got USR1"' USR1
kill -USR1 $$
echo done
EOF
for sh in dash bash; do
	# the terminal turns \n into \r\n
	script -qefc "$sh jobs.sh" /dev/null < /dev/null > "$sh.tty" 2>&1
	echo "$sh on a terminal: exit $?"
	tr -d '\r' < "$sh.tty"
done

cat > plain.sh <<'EOF'
trap 'echo "exit trap $?"' EXIT
trap 'echo "TERM trapped"' TERM
trap 'echo USR1' USR1
kill -TERM $$
kill -USR1 $$
for i in 1 2 3 4 5 6 7 8; do
	( i2=$((i * i)); echo "sub $i $i2" ) > "out.$i" &
done
wait
cat out.*
seq 1 20000 | grep 7 | sort -rn | head -n 3
x=0
for i in $(seq 1 200); do x=$(( x + $(echo $i) )); done
echo "sum $x"
printf 'a\nb\nc\n' | while read -r l; do echo "line $l"; done
echo "read from a fifo:"
mkfifo f
(echo through the fifo > f) &
cat f
rm f
wait
(exit 7)
echo "status $?"
exec 3> fd3.txt
echo "to fd 3" >&3
exec 3>&-
cat fd3.txt
umask 027
: > masked
ls -l masked | cut -c1-10
exit 5
EOF
status "dash plain.sh" dash plain.sh
status "bash plain.sh" bash plain.sh

cat > bash.sh <<'EOF'
set -o pipefail
false | true
echo "pipefail $?"
coproc UPPER { tr a-z A-Z; }
echo "hello coproc" >&"${UPPER[1]}"
exec {UPPER[1]}>&-
read -r line <&"${UPPER[0]}"
echo "$line"
wait
# in a subshell: a job table holding these three jobs alone
(
	(sleep 1.2; exit 1) & (sleep 0.6; exit 2) & (sleep 0.1; exit 3) &
	wait -n
	echo "first done: $?"
	wait
)
diff <(seq 1 5) <(seq 1 6) | tail -n 1
chld=0
trap 'chld=$((chld + 1))' CHLD
for i in 1 2 3 4 5; do sleep 0.05 & done
wait
trap - CHLD
[ $chld -ge 1 ] && echo "CHLD trapped"
mapfile -t arr < <(printf '%s\n' x y z)
echo "${#arr[@]} ${arr[*]}"
declare -A h=([one]=1 [two]=2)
echo "${h[two]}"
ulimit -n 64
exec 60> sixty && echo "fd 60 ok"
exec 70> seventy 2> /dev/null || echo "fd 70 refused"
EOF
status "bash bash.sh" bash bash.sh 2>&1
