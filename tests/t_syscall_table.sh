# SPDX-License-Identifier: MIT
# tier: check
# The generated syscall tables agree with the running kernel and with the
# numbers strace (its own, independently checked table) prints.
. "$KPROF_ROOT/tests/lib.sh"
"$BUILD/tests/syscall_table"
# strace names the numbers the program invokes by its own table
strace -f -qq -e trace=getppid,gettid,sched_yield -o strace.out "$BUILD/tests/syscall_table" >/dev/null
# libc getppid() once, and once by the table's number: strace must name both getppid
expect_eq "strace saw getppid (libc + by our number)" 2 "$(grep -c '^[0-9]* *getppid()' strace.out || true)" 
