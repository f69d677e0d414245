# SPDX-License-Identifier: MIT
# --launcher and --b-launcher wrap the measured programs everywhere: a
# launcher that logs its argv proves it ran for run -- CMD, for ab's A and
# B separately (with -- CMD) and for a suite; a launcher that fails fails
# the run with its status; a 10 ms against a 100 ms launcher is reported
# as B slower; a suite it cannot apply to refuses it before running.
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

cat >logged.sh <<'EOS'
#!/bin/sh
echo "$SIDE $*" >>"$LAUNCH_LOG"
exec "$@"
EOS
chmod +x logged.sh
export LAUNCH_LOG=$PWD/launch.log

# run -- CMD: every run (1 warm-up + 3) through the launcher, argv intact
SIDE=R "$KRUNNER" run --runs=3 --launcher="$PWD/logged.sh" --out="$PWD/r" -- /bin/echo a b >/dev/null 2>&1 ||
	fail "run with a launcher exited $?"
expect_eq "run: launcher calls" 4 "$(grep -c '^R /bin/echo a b$' launch.log)"

# ab -- CMD: A's launcher for A, B's for B, each for its own runs
: >launch.log
"$KRUNNER" ab --runs=2 --warmup=0 --launcher="env SIDE=A $PWD/logged.sh" \
	--b-launcher="env SIDE=B $PWD/logged.sh" --out="$PWD/ab" -- /bin/true >/dev/null 2>&1 ||
	fail "ab with launchers exited $?"
expect_eq "ab: A's runs" 2 "$(grep -c '^A /bin/true$' launch.log)"
expect_eq "ab: B's runs" 2 "$(grep -c '^B /bin/true$' launch.log)"
expect_eq "ab: nothing else" 4 "$(wc -l <launch.log)"

# ab --b-launcher alone: A runs directly
: >launch.log
"$KRUNNER" ab --runs=2 --warmup=0 --b-launcher="env SIDE=B $PWD/logged.sh" --out="$PWD/ab1" \
	-- /bin/true >/dev/null 2>&1 || fail "ab with a B launcher exited $?"
expect_eq "ab: only B launched" "B /bin/true B /bin/true" "$(tr '\n' ' ' <launch.log | sed 's/ $//')"

# a suite: each process-lifecycle round's program through the launcher
: >launch.log
SIDE=S "$KRUNNER" --suite=process-lifecycle --rounds=2 --min-time-ms=1 --samples=1 \
	--launcher="$PWD/logged.sh" --out="$PWD/s" >/dev/null 2>&1 || fail "suite with a launcher exited $?"
expect_eq "suite: launcher calls" 2 "$(grep -c "^S $BUILD/programs/process_lifecycle" launch.log)"
echo "ok: launchers ran for run, ab's A and B, and a suite"

# a launcher that fails fails the run, saying so
rc=0
"$KRUNNER" run --launcher=/bin/false --out="$PWD/f" -- /bin/true >/dev/null 2>err.txt || rc=$?
expect_eq "--launcher=/bin/false: exit" 5 "$rc"
grep -q "/bin/true under the launcher '/bin/false' failed: exit status 1" err.txt ||
	fail "message: $(cat err.txt)"

# 10 ms against 100 ms: B is slower, by about 90 ms
printf '#!/bin/sh\nsleep "$1"; shift; exec "$@"\n' >sleepy.sh
chmod +x sleepy.sh
rc=0
"$KRUNNER" ab --fail-on-regression --runs=5 --warmup=0 --launcher="$PWD/sleepy.sh 0.01" \
	--b-launcher="$PWD/sleepy.sh 0.1" --out="$PWD/d" -- /bin/true >d.txt 2>&1 || rc=$?
a=$(jq '.suites[0].metrics.wall_ms.median' d/*-A.json) b=$(jq '.suites[0].metrics.wall_ms.median' d/*-B.json)
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a >= 10 && a < 60 && b >= 100 && b - a > 60) }' ||
	fail "medians A $a ms, B $b ms"
grep -q '^| command / wall_ms .*| \*\*regression\*\* |$' d.txt ||
	fail "B not reported a regression: $(grep wall_ms d.txt)"
expect_eq "ab --fail-on-regression, 10 ms vs 100 ms: exit (a regression)" 3 "$rc"
echo "ok: a failing launcher fails; 10 ms vs 100 ms goes the right way"

# where a launcher cannot apply, it is refused before anything runs
rc=0
"$KRUNNER" --suite=kernel-build --launcher=env --out="$PWD/k" >/dev/null 2>err.txt || rc=$?
expect_eq "kernel-build --launcher: exit" 2 "$rc"
grep -q 'cannot apply to the kernel-build suite' err.txt || fail "message: $(cat err.txt)"
rc=0
"$KRUNNER" ab --suite=kernel-build --b-launcher=env --out="$PWD/k" >/dev/null 2>err.txt || rc=$?
expect_eq "kernel-build --b-launcher: exit" 2 "$rc"
grep -q "B's --b-launcher" err.txt || fail "message: $(cat err.txt)"
[ ! -e k ] || fail "a refused launcher wrote results"
echo "ok: refused where it cannot apply"
