# SPDX-License-Identifier: MIT
# A program that lowers RLIMIT_NOFILE to 64 and opens descriptors until
# EMFILE gets exactly the descriptors it gets without the shim, and its
# trace is complete (the shim's descriptor was opened before main, at a
# high number). A program running with umask 0777 that sets umask 0777
# itself, as an unprivileged user: same behaviour, and the trace directory
# and file are still 0700/0600 and readable by that user.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/fd_limits
"$prog" nofile > plain.out
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$prog" nofile > shim.out
cat shim.out
expect_eq "descriptors the program got" "$(cat plain.out)" "$(cat shim.out)"
json=$(profile_json trace)
expect_eq "getppid after EMFILE" 100 "$(syscall_field "$json" getppid count)"
expect_eq "openat: successes + the EMFILE" "$(($(sed 's/.*opened=\([0-9]*\).*/\1/' shim.out) + 1)) 1" \
	"$(syscall_field "$json" openat count) $(syscall_field "$json" openat errors)"
expect_eq "exit record" 0 "$(jq '.processes[0].exit_status' <<<"$json")"

command -v setpriv >/dev/null || skip "setpriv (util-linux) missing: umask part not run"
[ "$(id -u)" = 0 ] || skip "umask part runs as an unprivileged user and needs root to switch"
mkdir -m 0777 u
chmod 0755 .
as_nobody() { (umask 0777 && setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }
as_nobody "$prog" umask u/plain-file > u/plain.out
as_nobody env LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/u/trace" "$prog" umask u/shim-file > u/shim.out
expect_eq "program's own file and umask" "$(cat u/plain.out)" "$(cat u/shim.out)"
expect_eq "trace directory mode" 700 "$(stat -c %a u/trace)"
expect_eq "trace file mode" "600 65534" "$(stat -c '%a %u' u/trace/*.msgpack)"
json=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$KANALYZE" --format=json u/trace)
expect_eq "getppid, read back by the same user" 100 "$(syscall_field "$json" getppid count)"
