# SPDX-License-Identifier: MIT
# Python's regression test test_wait4 (Debian's libpython3.11-testsuite).
# torture: quick timeout=300
. "$TORTURE_CASES/lib.sh"
regrtest test_wait4
