# SPDX-License-Identifier: MIT
# krunner: an unknown suite, a missing program, a corrupt result file and a
# failing workload: a clear message, a non-zero exit, no result made up.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner
out=$PWD/results

# expect_exit CODE PATTERN CMD...: exit status CODE and PATTERN on stderr
expect_exit() {
	local code=$1 pattern=$2 rc=0
	shift 2
	"$@" >stdout.txt 2>stderr.txt || rc=$?
	expect_eq "exit of $*" "$code" "$rc"
	grep -q -- "$pattern" stderr.txt || fail "no '$pattern' in: $(cat stderr.txt)"
}
no_results() {
	[ -z "$(ls -A "$out" 2>/dev/null | grep -v '^noise.json$')" ] ||
		fail "a result file was written: $(ls "$out")"
	echo "ok: no result file"
}

expect_exit 2 "unknown suite 'no-such-suite'" "$KRUNNER" --suite=no-such-suite --out="$out"
no_results
expect_exit 2 "unknown suite 'nope'" "$KRUNNER" --suite=syscall-io,nope --out="$out"
no_results

mkdir empty
expect_exit 1 "program syscall_io not found" "$KRUNNER" --suite=syscall-io --programs="$PWD/empty" --out="$out"
grep -q 'make build/programs/syscall_io' stderr.txt || fail "no build command in the report"
no_results
export KRUNNER_PROGRAMS=$PWD/empty
expect_exit 1 "program hello not found" "$KRUNNER" --suite=spawn-scratch --out="$out"
grep -q 'nothing was run' stderr.txt || fail "report does not say nothing ran"
unset KRUNNER_PROGRAMS
no_results

expect_exit 1 "launcher no-such-runtime" "$KRUNNER" --suite=syscall-io --launcher='no-such-runtime --x' --out="$out"
no_results
expect_exit 2 "--rounds wants" "$KRUNNER" --suite=syscall-io --rounds=0 --out="$out"
expect_exit 2 "--profile is preload or bpf" "$KRUNNER" --suite=syscall-io --profile=strace --out="$out"
no_results
# a suite's option given for a suite that does not run, or a bad value
expect_exit 2 "--url-path is an option of the wordpress suite, which is not selected" \
	"$KRUNNER" --suite=syscall-io --url-path=/x --out="$out"
no_results
expect_exit 2 "--samples wants a whole number, not 'many'" "$KRUNNER" --suite=syscall-io --samples=many --out="$out"
no_results
expect_exit 2 "--min-time-ms wants a whole number, not '-5'" "$KRUNNER" --suite=spawn-scratch --min-time-ms=-5 --out="$out"
no_results
expect_exit 2 "--run-noise wants a number from 0 to 100" "$KRUNNER" compare a.json b.json --run-noise=x

printf '{"format": "krunner-result", "format_version": 1, "suites": [' >truncated.json
echo '{"hello": 1}' >foreign.json
echo '{"format": "krunner-result", "format_version": 1, "suites": [{"name": "s", "metrics": {"m": {"samples": ["x"], "median": 1, "direction": "lower"}}}]}' >bad_sample.json
expect_exit 1 "truncated.json: not a usable krunner result: broken JSON" "$KRUNNER" compare truncated.json foreign.json
expect_exit 1 'foreign.json: not a usable krunner result: "format"' "$KRUNNER" compare foreign.json foreign.json
expect_exit 1 "bad_sample.json: .*a sample is not a number" "$KRUNNER" compare bad_sample.json bad_sample.json
expect_exit 1 "cannot read missing.json" "$KRUNNER" compare missing.json missing.json
[ ! -s stdout.txt ] || fail "compare printed a table for a missing file"
no_results

# A workload that fails or prints a broken metric: the round is rejected,
# the suite is marked failed and reports no metric; exit 2.
mkdir fake
printf '#!/bin/sh\necho pipe_mbps=12\nexit 1\n' >fake/syscall_io
chmod +x fake/syscall_io
expect_exit 5 "syscall_io failed (exit status 1); the round is rejected" \
	"$KRUNNER" --suite=syscall-io --programs="$PWD/fake" --out="$out"
printf '#!/bin/sh\necho pipe_mbps=12\n' >fake/syscall_io
expect_exit 5 "no value for metric file_write_mbps" \
	"$KRUNNER" --suite=syscall-io --programs="$PWD/fake" --out="$out" --rounds=1
if command -v jq >/dev/null; then
	for f in "$out"/*.json; do
		expect_eq "status in $(basename "$f")" failed "$(jq -r '.suites[0].status' "$f")"
		expect_eq "metrics in $(basename "$f")" 0 "$(jq '.suites[0].metrics | length' "$f")"
	done
fi
