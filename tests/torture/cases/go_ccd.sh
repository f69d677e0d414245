# SPDX-License-Identifier: MIT
# A Go service: the compile-cache daemon of tests/go/ccd, built by the go
# command twice, with cgo (dynamically linked: the shim loads into it)
# and static (CGO_ENABLED=0: the shim cannot, but the gcc it runs is
# traced). Each build serves three passes, each with an empty cache: a
# cold pass of 40 concurrent requests (40 gcc -c, source on a pipe), a
# warm pass (40 hits), and for the last a warm pass sending the source
# bytes; then the daemon is stopped and prints its totals. Object hashes
# are compared too (gcc reads stdin, so the objects hold no path).
# torture: timeout=400
. "$TORTURE_CASES/lib.sh"
src=$TORTURE_CASES/../go/ccd
# No module is fetched (standard library only). The build cache is the
# user's when there is one (a cold one takes minutes), else the run's.
export GOFLAGS="-mod=mod -buildvcs=false" GOPROXY=off
if [ -z "${GOCACHE:-}" ]; then
	if [ -n "${HOME:-}" ] && mkdir -p "$HOME/.cache/go-build" 2> /dev/null && [ -w "$HOME/.cache/go-build" ]; then
		export GOCACHE=$HOME/.cache/go-build
	else
		export GOCACHE=$TMPDIR/go-build
	fi
fi
# crash_line FILE: the Go runtime's report in FILE, addresses blanked
crash_line() {
	grep -m 1 -E 'fatal error|unexpected return pc|^panic|^SIG[A-Z]+:' "$1" |
		sed 's/0x[0-9a-f]*/0x?/g; s/^/crash: /'
}
# build NAME [ENV...]: go build of ccd-NAME. The go command is a cgo
# program itself: the shim is loaded into it. When it fails under the
# shim (the exit line already differs from the plain run's), the build
# is made again without the shim, so that the daemon's passes still run.
build() {
	local name=$1 rc=0
	shift
	(cd "$src" && env "$@" go build -o "$OLDPWD/ccd-$name" .) > "build-$name.log" 2>&1 || rc=$?
	echo "go build ($name): exit $rc"
	crash_line "build-$name.log"
	if [ $rc != 0 ] && [ -n "${LD_PRELOAD:-}" ]; then
		# The shim adds LD_PRELOAD back to a child's environment unless
		# the process that execs it started with KPROF_FOLLOW=0.
		(cd "$src" && env KPROF_FOLLOW=0 env -u LD_PRELOAD -u KPROF_FOLLOW "$@" \
			go build -o "$OLDPWD/ccd-$name" .) >> "build-$name.log" 2>&1
		echo "go build ($name) without the shim: exit $?"
	fi
}
build cgo
build static CGO_ENABLED=0
for b in cgo static; do
	echo "ccd-$b: $(./ccd-$b version), $(file -b ccd-$b | grep -o -E '(dynamically|statically) linked')"
done
status "gen" ./ccd-static gen src 40

# daemon_pass BUILD K [CLIENT-FLAGS]: pass K of the daemon BUILD
daemon_pass() {
	local b=$1 k=$2 sock=$PWD/s-$1-$2 i rc=0
	rm -rf cache
	./ccd-$b daemon "$sock" cache > "daemon-$b-$k.out" 2> "daemon-$b-$k.err" &
	local pid=$!
	for i in $(seq 200); do
		[ -S "$sock" ] && break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.05
	done
	echo "-- ccd-$b pass $k"
	timeout 120 ./ccd-$b client "$sock" src/*.c > cold.out 2>&1
	echo "cold: exit $?"
	cat cold.out
	timeout 60 ./ccd-$b client ${3:-} "$sock" src/*.c > warm.out 2>&1
	echo "warm${3:+ $3}: exit $?"
	cat warm.out
	timeout 30 ./ccd-$b stop "$sock"
	echo "stop: exit $?"
	for i in $(seq 300); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2> /dev/null && { echo "daemon: still running, killed"; kill -KILL "$pid"; }
	wait "$pid" || rc=$?
	echo "daemon: exit $rc"
	cat "daemon-$b-$k.out"
	crash_line "daemon-$b-$k.err"
}
for b in cgo static; do
	daemon_pass $b 1
	daemon_pass $b 2
	daemon_pass $b 3 -inline
done
