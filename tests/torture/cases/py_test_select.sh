# SPDX-License-Identifier: MIT
# Python's regression test test_select (Debian's libpython3.11-testsuite).
# torture: quick timeout=300
. "$TORTURE_CASES/lib.sh"
regrtest test_select
