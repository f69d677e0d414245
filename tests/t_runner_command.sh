# SPDX-License-Identifier: MIT
# krunner run -- CMD ARGS: any command timed run by run (hyperfine's job):
# --runs=N timed runs in all, each a round, --warmup=N discarded, the
# executable fingerprinted with its Debian package, the git state of the
# directory it ran in, a failing command a failed suite with its status,
# --profile tracing exactly the runs made, and compare working on the result.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner
prog=$BUILD/tests/getppid_loop

"$KRUNNER" run --runs=8 --warmup=2 --out="$PWD/a" -- "$prog" 1000 > summary.txt 2>stderr.txt ||
	fail "krunner run exited $?"
cat summary.txt
result=$(echo a/*.json)
sel='.suites[] | select(.name == "command")'
expect_eq "status" ok "$(jq -r "$sel | .status" "$result")"
expect_eq "wall_ms values (--runs=8)" 8 "$(jq "$sel | .metrics.wall_ms.n" "$result")"
expect_eq "rounds: one per timed run, and 2 warm-ups" "8 2" \
	"$(jq -r "$sel | [(.round_details | map(select(.warmup | not)) | length), (.round_details | map(select(.warmup)) | length)] | join(\" \")" "$result")"
! grep -q $'\r' stderr.txt || fail "a progress line on stderr that is not a terminal"
expect_eq "git of the directory it ran in" "$PWD" "$(jq -r '.git_dir' "$result")"
jq -e '.kprof.version and (.kprof.git.head | length) == 40' "$result" >/dev/null ||
	fail "kprof's own version and head: $(jq -c .kprof "$result")"
# a git checkout as the working directory: its head and dirtiness
mkdir proj && git -C proj init -q && echo 1 > proj/f && git -C proj add f &&
	git -C proj -c user.email=t@t -c user.name=t commit -qm one || fail "git init"
(cd proj && echo 2 > f && "$KRUNNER" run --runs=1 --out="$OLDPWD/g" -- /bin/true >/dev/null 2>&1) ||
	fail "run in proj"
expect_eq "the project's head" "$(git -C proj rev-parse HEAD)" "$(jq -r '.git.head' g/*.json)"
expect_eq "the project is dirty" true "$(jq '.git.dirty' g/*.json)"
if dpkg -S /bin/true >/dev/null 2>&1; then
	expect_eq "package of /bin/true" coreutils "$(jq -r "$sel | .notes.command_package" g/*.json)"
	expect_eq "its version" "$(dpkg-query -W -f='${Version}' coreutils)" \
		"$(jq -r "$sel | .notes.command_package_version" g/*.json)"
fi
expect_eq "fingerprint" "$(sha256sum "$prog" | cut -d' ' -f1)" "$(jq -r "$sel | .artifacts[0].sha256" "$result")"
jq -e "$sel | .metrics.wall_ms | .median > 0 and .ci[0] <= .median and .median <= .ci[1]" "$result" > /dev/null ||
	fail "wall_ms figures: $(jq -c "$sel | .metrics.wall_ms" "$result")"
grep -q '^  wall_ms .* 8 values; .* ± .*; .* … ' summary.txt || fail "no hyperfine-like summary line"

# compare of two runs of the same command: a table, no regression
"$KRUNNER" run --runs=4 --out="$PWD/b" -- "$prog" 1000 > /dev/null 2>&1
out=$("$KRUNNER" compare --no-noise "$result" b/*.json) || fail "compare failed"
grep -q '^| command / wall_ms' <<<"$out" || fail "no wall_ms row: $out"
echo "ok: compare reads command results"

# profiled: each profiled round's trace holds its one run, exactly
"$KRUNNER" run --runs=2 --warmup=1 --profile=preload --out="$PWD/p" -- "$prog" 1000 > /dev/null 2>&1 ||
	fail "krunner run --profile exited $?"
presult=$(echo p/*.json)
for trace in $(jq -r "$sel | .round_details[] | select(.profiled) | .trace" "$presult"); do
	expect_eq "getppid in $trace (1 run x 1000)" 1000 \
		"$("$KANALYZE" --format=json "$trace" | jq '.syscalls[] | select(.name == "getppid") | .count')"
done
jq -e "$sel | .metrics.wall_ms.probe_effect_text | test(\"slower|faster|same\")" "$presult" > /dev/null ||
	fail "no probe effect"
echo "ok: profiled runs traced exactly"

# a failing command fails the suite: exit 2, no metric
rc=0
"$KRUNNER" run --runs=2 --out="$PWD/f" -- /bin/false > /dev/null 2> err.txt || rc=$?
expect_eq "failing command: exit" 5 "$rc"
grep -q 'command: warm-up run: /bin/false failed: exit status 1$' err.txt || fail "no reason: $(cat err.txt)"
! grep -q 'No child processes' err.txt || fail "errno text for a failed command: $(cat err.txt)"
rc=0
"$KRUNNER" run --runs=1 --warmup=0 --out="$PWD/f2" -- sh -c 'kill -9 $$' > /dev/null 2> err.txt || rc=$?
expect_eq "killed command: exit" 5 "$rc"
grep -q 'run 1: sh failed: killed by signal 9' err.txt || fail "no signal: $(cat err.txt)"
expect_eq "failing command: metrics" 0 "$(jq "$sel | .metrics | length" f/*.json)"
# usage errors
rc=0
"$KRUNNER" run --suite=syscall-io --out="$PWD/u" -- "$prog" 2> err.txt || rc=$?
expect_eq "suites and a command: exit" 2 "$rc"
grep -q 'not both' err.txt || fail "$(cat err.txt)"
rc=0
"$KRUNNER" --suite=command --out="$PWD/u" 2> err.txt || rc=$?
expect_eq "the command suite without a command: exit" 2 "$rc"
for bad in "--runs=0" "--runs=x" "--warmup=-1"; do
	rc=0
	"$KRUNNER" run "$bad" --out="$PWD/u" -- /bin/true 2> err.txt || rc=$?
	expect_eq "$bad: exit" 2 "$rc"
done
rc=0
"$KRUNNER" --suite=syscall-io --runs=3 --out="$PWD/u" 2> err.txt || rc=$?
expect_eq "--runs with a suite: exit" 2 "$rc"
grep -q 'suites take --rounds' err.txt || fail "$(cat err.txt)"
[ ! -e u ] || fail "a result was written for a usage error"
