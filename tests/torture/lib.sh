# SPDX-License-Identifier: MIT
# Helpers sourced by the torture cases (tests/torture/cases/*.sh).
# A case runs in a fresh empty working directory (TMPDIR is a fresh
# directory too) and prints a normalised result on stdout: no timestamps,
# pids, temporary paths or timings, nothing that differs between two plain
# runs. The driver (tests/torture/run.sh) runs it plain and under the shim
# and compares stdout and exit status byte for byte. Logs of the workload
# go into files in the working directory: the driver keeps them when a
# run fails.
#
# Header lines the driver reads from a case file:
#   # torture: quick        the case belongs to the CI-sized subset
#   # torture: timeout=N    seconds before the run counts as a hang (300)
set -u
export LC_ALL=C.UTF-8 TZ=UTC
# Debian's interpreter, never a pyenv or virtualenv one on PATH: the
# regression tests are those of Debian's libpython3.11-testsuite.
PY=/usr/bin/python3.11
TORTURE_QUICK=${TORTURE_QUICK:-0}

# status WHAT CMD...: run CMD, print "WHAT: exit N" (a crash shows as its
# signal number + 128, a hang as the driver's timeout).
status() {
	local what=$1 rc=0
	shift
	"$@" || rc=$?
	echo "$what: exit $rc"
}

# regrtest MODULE [EXCLUDED-ID...]: Python's regression test MODULE in a
# worker process (-j1: a crash or hang of the worker is reported by the
# parent instead of losing every result), one line per test id with its
# result (ok, skipped, FAIL, ERROR), sorted, then regrtest's exit status.
# EXCLUDED-ID are test ids (globs) left out, each with its reason in the
# case file. Per-test output goes to regrtest.log.
regrtest() {
	local module=$1 rc=0
	shift
	local args=(-j1 --timeout="${REGRTEST_TIMEOUT:-240}" --junit-xml="$PWD/results.xml")
	local id
	for id in "$@"; do args+=(-i "$id"); done
	"$PY" -m test "${args[@]}" "$module" > regrtest.log 2>&1 || rc=$?
	"$PY" - results.xml <<-'EOF'
	import sys, xml.etree.ElementTree as ET
	try:
	    root = ET.parse(sys.argv[1]).getroot()
	except (OSError, ET.ParseError) as e:
	    print("no junit results:", type(e).__name__)
	    sys.exit(0)
	rows = []
	for case in root.iter("testcase"):
	    result = "ok"
	    for child in case:
	        if child.tag == "skipped":
	            result = "skipped"
	        elif child.tag == "failure":
	            result = "FAIL"
	        elif child.tag == "error":
	            result = "ERROR"
	    rows.append(f"{case.get('name')} {result}")
	for row in sorted(rows):
	    print(row)
	print(len(rows), "test ids")
	EOF
	# A crashed worker loses the module's results: name the test it was in.
	grep -m 1 '^Fatal Python error' regrtest.log
	sed -n '/^Current thread/,/^$/{/line [0-9]* in test/{s/.*line [0-9]* in /crashed in /p;q}}' regrtest.log
	grep -E '^(== )?Tests result:' regrtest.log | tail -n 1
	echo "regrtest $module: exit $rc"
}
