# SPDX-License-Identifier: MIT
# A Go program (Debian's golang-go, stdlib only, built here off-network)
# stands in for a Go daemon: its syscalls bypass libc, and kbpf-trace
# counts the deterministic ones exactly.
. "$KPROF_ROOT/tests/bpf_lib.sh"
need_bpf
command -v go >/dev/null || skip "go not installed (apt-get install golang-go)"
export GOCACHE=$TMPDIR/gocache GOPATH=$TMPDIR/gopath GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0
(cd "$KPROF_ROOT/tests/go/kgo" && go build -o "$TMPDIR/kgo" .) ||
	fail "go build failed"

TMPDIR=$PWD "$KBPF" -o trace -- "$TMPDIR/kgo" 500 > kgo.out
cat kgo.out
expect_eq "lines printed" 5 "$(wc -l < kgo.out)"
json=$(profile_json trace)
while read -r sc count; do
	expect_eq "$sc count" "$count" "$(syscall_field "$json" "$sc" count)"
	expect_eq "$sc errors" 0 "$(syscall_field "$json" "$sc" errors)"
done < kgo.out
# the runtime's own threads are the same process: one stream
expect_eq "streams" 1 "$(jq '.processes | length' <<<"$json")"
expect_eq "exit status" 0 "$(jq '.processes[0].exit_status' <<<"$json")"
futex=$(syscall_field "$json" futex count)
echo "ok: Go runtime calls seen too (futex $futex, rt_sigaction $(syscall_field "$json" rt_sigaction count))"
