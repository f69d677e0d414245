# SPDX-License-Identifier: MIT
# Python's regression test test_faulthandler (Debian's libpython3.11-testsuite):
# fatal signals (SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT) in child
# interpreters, dumped tracebacks, watchdog threads.
# torture: timeout=300
. "$TORTURE_CASES/lib.sh"
regrtest test_faulthandler
