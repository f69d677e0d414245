# SPDX-License-Identifier: MIT
# Rewrite mode: fork() 200 times from a process with 16 busy threads
# (tests/fork_threads_lib.sh). The fork's clone is made by the hook: the
# child starts its stream there (and again through glibc's atfork handler,
# which must then do nothing); rewrite mode also sees glibc's
# set_robust_list in _Fork.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_rewrite
export KPROF_HOOK=$REWRITE_HOOK
child_calls="exit_group=1,getppid=5,set_robust_list=1"
. "$KPROF_ROOT/tests/fork_threads_lib.sh"
