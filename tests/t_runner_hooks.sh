# SPDX-License-Identifier: MIT
# krunner run -- CMD with hyperfine's hooks: --setup once before, --prepare
# before every run (warm-ups too), --cleanup once after, also after a
# failed run and after Ctrl-C; a daemon started by --setup is benchmarked
# through its client and stopped by --cleanup. A progress line only on a
# terminal.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" run --runs=3 --warmup=1 --out="$PWD/o" --setup="echo setup >>hooks.log" \
	--prepare="echo prepare >>hooks.log" --cleanup="echo cleanup >>hooks.log" \
	-- sh -c 'echo run >>hooks.log' >/dev/null 2>&1 || fail "run with hooks exited $?"
expect_eq "hook order" "setup prepare run prepare run prepare run prepare run cleanup" \
	"$(tr '\n' ' ' <hooks.log | sed 's/ $//')"

# a daemon: started by --setup, its client benchmarked, stopped by --cleanup
"$KRUNNER" run --runs=2 --out="$PWD/d" \
	--setup='sleep 300 & echo $! >daemon.pid' \
	--cleanup='kill $(cat daemon.pid)' \
	-- sh -c 'kill -0 $(cat daemon.pid)' >/dev/null 2>&1 || fail "daemon run exited $?"
pid=$(cat daemon.pid)
sleep 0.2
# gone, or a zombie left to an init that does not reap
state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
[ -z "$state" ] || [ "$state" = Z ] || { kill "$pid"; fail "cleanup left the daemon $pid running ($state)"; }
echo "ok: setup, prepare, cleanup; a daemon up for the runs and stopped"

# cleanup after a failed run, and after a failed setup
rm -f hooks.log
rc=0
"$KRUNNER" run --runs=3 --warmup=0 --out="$PWD/f" --cleanup="echo cleanup >>hooks.log" \
	-- sh -c 'echo run >>hooks.log; exit 4' >/dev/null 2>err.txt || rc=$?
expect_eq "failed run: exit" 5 "$rc"
expect_eq "failed run: one run, then cleanup" "run cleanup" "$(tr '\n' ' ' <hooks.log | sed 's/ $//')"
grep -q 'run 1: sh failed: exit status 4' err.txt || fail "$(cat err.txt)"
rm -f hooks.log
rc=0
"$KRUNNER" run --runs=3 --out="$PWD/f2" --setup="exit 3" --cleanup="echo cleanup >>hooks.log" \
	-- /bin/true >/dev/null 2>err.txt || rc=$?
expect_eq "failed setup: exit" 5 "$rc"
grep -q -- "--setup command 'exit 3' failed (exit status 3)" err.txt || fail "$(cat err.txt)"
expect_eq "failed setup: cleanup ran" cleanup "$(cat hooks.log)"

# Ctrl-C during a run: cleanup still runs, exit 130
rm -f hooks.log
"$KRUNNER" run --runs=5 --out="$PWD/c" --setup="echo setup >>hooks.log" \
	--cleanup="echo cleanup >>hooks.log" -- sleep 30 >/dev/null 2>&1 &
k=$!
for _ in $(seq 100); do [ -s hooks.log ] && break; sleep 0.05; done
sleep 0.3
kill -INT "$k"
rc=0
wait "$k" || rc=$?
expect_eq "interrupted: exit" 130 "$rc"
expect_eq "interrupted: cleanup ran" "setup cleanup" "$(tr '\n' ' ' <hooks.log | sed 's/ $//')"
echo "ok: cleanup after a failed run, a failed setup and Ctrl-C"

# progress: a line on a terminal, nothing otherwise
"$KRUNNER" run --runs=2 --out="$PWD/p" -- /bin/true >/dev/null 2>plain.err || fail "run exited $?"
! grep -q $'\r' plain.err || fail "progress without a terminal"
if command -v script >/dev/null; then
	script -qec "$KRUNNER run --runs=2 --out=$PWD/p2 -- /bin/true" tty.log >/dev/null ||
		fail "run on a terminal exited $?"
	grep -q $'\r\033\\[Kcommand round 2/2' tty.log || fail "no progress line: $(cat -v tty.log)"
	echo "ok: progress line only on a terminal"
fi

rc=0
"$KRUNNER" --suite=syscall-io --prepare=true --out="$PWD/u" 2>err.txt || rc=$?
expect_eq "--prepare with a suite: exit" 2 "$rc"
grep -q -- '--prepare is for a command' err.txt || fail "$(cat err.txt)"
