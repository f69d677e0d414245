#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages kprof needs, only those missing.
# Usage: install-deps.sh [--verify] check|demo|test
# As root it runs apt-get; otherwise, or with --verify, it prints the
# command and fails.
set -eu
verify=
if [ "${1:-}" = --verify ]; then
	verify=1
	shift
fi
build="gcc make libc6-dev linux-libc-dev libmsgpack-dev zlib1g-dev libjansson-dev clang llvm libbpf-dev bpftool libelf-dev libcapstone-dev libssl-dev libiberty-dev"
# make check: the build's, and what its tests read traces and count with
check="$build jq strace"
demo="$build nodejs"
# The application suites (erlang-ring, mariadb-*, wordpress, kernel-build)
# run real Debian programs; make test runs them.
apps="erlang-base erlang-dev mariadb-server mariadb-client php-cli php-mysql php-opcache
	wordpress wordpress-theme-twentytwentythree ccache linux-source bc bison flex xz-utils"
# The torture suite (tests/torture/, make torture) runs Debian's Python
# regression tests and these programs plain and under the shim (the go_ccd
# case needs golang-go, in the test list).
torture="python3.11 libpython3.11-testsuite git perl tar sqlite3 curl dash bsdutils util-linux procps xz-utils gzip
	postgresql openjdk-17-jdk-headless file"
fleet="prometheus"
# An allocator that calls hooked functions while it initializes, holding
# its lock (tests/t_shim_jemalloc.sh).
allocators="libjemalloc2"
test="$demo jq bc strace linux-perf bpftrace golang-go chromium gdb valgrind libclang-rt-14-dev $apps $torture $allocators $fleet"
case ${1:-demo} in
check) want=$check ;;
demo) want=$demo ;;
test) want=$test ;;
*) echo "install-deps.sh: unknown set '$1' (check, demo, test)" >&2; exit 1 ;;
esac
missing=
for p in $want; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ -n "$verify" ] || [ "$(id -u)" -ne 0 ]; then
	echo "kprof: missing Debian packages:$missing" >&2
	echo "kprof: install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "kprof: installing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
# No service may start during the install (mariadb-server would start
# mariadbd): policy-rc.d exiting 101 tells invoke-rc.d "not allowed". Only a
# file we created is removed again.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# kprof install-deps.sh: no service starts during the install\nexit 101\n' >"$policy"
	chmod 0755 "$policy"
	trap 'rm -f "$policy"' EXIT
	trap 'rm -f "$policy"; exit 130' INT TERM
fi
# A fresh machine has no package lists yet; refresh them once if the
# install cannot find a package.
apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 || {
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends $missing
}
