# SPDX-License-Identifier: MIT
# Python's regression test test_fork1 (Debian's libpython3.11-testsuite).
# torture: quick timeout=300
. "$TORTURE_CASES/lib.sh"
regrtest test_fork1
