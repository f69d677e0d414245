# SPDX-License-Identifier: MIT
# tier: check
# Symbol mode: fork() 200 times from a process with 16 busy threads
# (tests/fork_threads_lib.sh): a child makes getppid x5 and exit_group.
. "$KPROF_ROOT/tests/lib.sh"
export KPROF_HOOK=symbols
child_calls="exit_group=1,getppid=5"
. "$KPROF_ROOT/tests/fork_threads_lib.sh"
