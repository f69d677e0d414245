# SPDX-License-Identifier: MIT
# Python's regression test test_threading (Debian's libpython3.11-testsuite).
# torture: timeout=300
. "$TORTURE_CASES/lib.sh"
regrtest test_threading
