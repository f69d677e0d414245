# SPDX-License-Identifier: MIT
# Python's regression test test_asyncio (Debian's libpython3.11-testsuite),
# beyond the modules the suite was asked for: event loops, thread and
# process pools, the forkserver start method.
# torture: timeout=600
. "$TORTURE_CASES/lib.sh"
REGRTEST_TIMEOUT=540 regrtest test_asyncio
