# SPDX-License-Identifier: MIT
# slow: foreign test suites, 4 minutes
# The torture suite's CI-sized part (tests/torture/run.sh --quick, the
# cases marked "# torture: quick"; the whole suite is `make torture`,
# docs/TORTURE.md): git, make -j2 with gcc, bash and dash with job control,
# perl, tar, sqlite3, http.server with curl, node, what a process sees of
# itself, and ten of Python's regression test modules, each run plain and
# under the shim in the three hook modes: same stdout and exit status, a trace
# kanalyze reads, in the hook mode asked for. Logs of failed runs:
# $BUILD/torture-quick/.
. "$KPROF_ROOT/tests/lib.sh"
[ -f /usr/lib/python3.11/test/regrtest.py ] ||
	skip "Debian's libpython3.11-testsuite missing (scripts/install-deps.sh test)"
for p in git perl tar sqlite3 curl dash script node jq; do
	command -v "$p" > /dev/null || skip "$p missing (scripts/install-deps.sh test)"
done
mode=all
d=$(mktemp -d)
KPROF_HOOK=rewrite LD_PRELOAD=$SHIM KPROF_OUT=$d /bin/true
if [ "$("$KANALYZE" --format=json "$d" | jq -r .hook_mode)" != rewrite ]; then
	echo "note: rewrite mode unavailable here (needs CAP_SYS_RAWIO): symbol and patch modes"
	mode=symbols,patch
fi
rm -rf "$d"
TORTURE_LOGS=$BUILD/torture-quick "$KPROF_ROOT/tests/torture/run.sh" --quick --mode=$mode ||
	fail "torture cases failed under the shim (logs in $BUILD/torture-quick)"
