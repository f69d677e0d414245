#!/bin/bash
# SPDX-License-Identifier: MIT
# Test harness, strace's way: every tests/t_*.sh is one test. It runs real
# programs under the tools and checks exact counts. Exit status of a test:
# 0 pass, 77 skipped (it must print why), 99 the harness broke, else fail.
# Usage: tests/run.sh [NAME-PATTERN]
set -u
cd "$(dirname "$0")/.."
export KPROF_ROOT=$PWD
export BUILD=${BUILD:-$PWD/build}
pattern=${1:-}
pass=0 fail=0 skip=0
failed=()
logdir=$BUILD/test-logs
rm -rf "$logdir"; mkdir -p "$logdir"
for t in tests/t_*.sh; do
	name=$(basename "$t" .sh)
	[ -n "$pattern" ] && [[ $name != *$pattern* ]] && continue
	work=$(mktemp -d /tmp/kprof-test.XXXXXX)
	start=$(date +%s.%N)
	( cd "$work" && TMPDIR=$work timeout 600 bash "$KPROF_ROOT/$t" ) >"$logdir/$name.log" 2>&1
	rc=$?
	secs=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
	case $rc in
	0) pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$logdir/$name.log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL  $name (exit $rc, ${secs}s)"
	   sed 's/^/      | /' "$logdir/$name.log" | tail -n 30 ;;
	esac
	rm -rf "$work"
done
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
