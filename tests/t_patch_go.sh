# SPDX-License-Identifier: MIT
# Patch mode on a Go program. Go writes no unwind tables, so the planner
# bounds the Go runtime's syscall sites with the symbol table (or, in a
# stripped binary, Go's own function table): every one of them gets a
# window and no Go call needs Syscall User Dispatch (also in a stripped
# PIE, whose table has no section of its own). A cgo program
# (tests/go/kgocgo: dynamically linked, so the shim is loaded) makes
# getppid and pread64 calls from goroutines and starts a child through
# syscall.rawVforkSyscall. As nobody (as root: setpriv), in patch mode:
# its output is the plain run's, the shim counts exactly the calls it
# made, none came through dispatch (every site has a window: one SIGSYS
# would be a site the planner lost), and, with kbpf-trace, the shim saw
# the program's calls exactly and 99.5% of all the kernel saw after its
# start-up (the runtime's threads go on during the final flush).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "patch mode is x86_64 only"
command -v go >/dev/null || skip "go not installed (apt-get install golang-go)"
export GOCACHE=$TMPDIR/gocache GOPATH=$TMPDIR/gopath GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
prog=$PWD/kgocgo
(cd "$KPROF_ROOT/tests/go/kgocgo" && go build -o "$prog" .) || fail "go build failed"
file "$prog" | grep >/dev/null 'dynamically linked' || fail "kgocgo is not dynamically linked: $(file "$prog")"

# the plan: a window for every site, from the symbol table, then from
# .gopclntab alone (stripped)
"$BUILD/kprof-sites" --plan "$prog" > plan.txt
sites=$(wc -l < plan.txt)
[ "$sites" -ge 40 ] || fail "only $sites syscall sites found in kgocgo"
expect_eq "sites without a window" 0 "$(grep -c nopatch plan.txt || true)"
addr=$(nm "$prog" | awk '$3 == "runtime/internal/syscall.Syscall6" { print $1 }')
[ -n "$addr" ] || fail "no runtime/internal/syscall.Syscall6 in kgocgo"
# MOVQ BX, DI; SYSCALL: the window ends with the syscall
expect_eq "Syscall6's window" "patch $(printf '0x%x' $((16#$addr + 9))) 5 insns=3,2" \
	"$(awk -v a="$(printf '0x%x' $((16#$addr + 12)))" '$1 == a { print $2, $3, $4, $5 }' plan.txt)"
strip -o stripped "$prog"
"$BUILD/kprof-sites" --plan stripped > plan.stripped
cmp plan.txt plan.stripped || { diff plan.txt plan.stripped; fail "stripped: other windows"; }
# a PIE's function table is in .data.rel.ro, no section of its own
(cd "$KPROF_ROOT/tests/go/kgocgo" && go build -buildmode=pie -o "${prog%/*}/pie" .) ||
	fail "go build -buildmode=pie failed"
strip -o pie.stripped pie
"$BUILD/kprof-sites" --plan pie > plan.pie
"$BUILD/kprof-sites" --plan pie.stripped > plan.pie.stripped
expect_eq "PIE: sites without a window" 0 "$(grep -c nopatch plan.pie || true)"
cmp plan.pie plan.pie.stripped || { diff plan.pie plan.pie.stripped; fail "stripped PIE: other windows"; }

if [ "$(id -u)" -eq 0 ]; then
	as_nobody_setup
	RUN=("${AS_NOBODY[@]}")
else
	RUN=()
	mkdir home
fi
mkdir -m 1777 tmp shim
n=20000
run() { "${RUN[@]}" env HOME="$PWD/home" TMPDIR="$PWD/tmp" GOMAXPROCS=2 "$@"; }
prc=0 src=0
run "$prog" $n 4 > plain.out || prc=$?
run KPROF_HOOK=patch LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/shim" "$prog" $n 4 > shim.out || src=$?
expect_eq "exit status" 0 "$prc"
expect_eq "exit status under the shim" 0 "$src"
cat shim.out
cmp plain.out shim.out || { diff plain.out shim.out; fail "the output differs under the shim"; }
json=$(profile_json shim)
expect_eq "hook mode" patch "$(jq -r .hook_mode <<<"$json")"
expect_eq "getppid" $n "$(syscall_field "$json" getppid count)"
expect_eq "pread64" $((n / 10)) "$(syscall_field "$json" pread64 count)"
expect_eq "calls through dispatch" 0 "$(jq .dispatch.calls <<<"$json")"
echo "ok: $(jq '[.processes[].syscalls[].count] | add' <<<"$json") calls, none through dispatch"

# with the kernel's count: every call after the shim's start-up
[ -x "$KBPF" ] && [ "$(id -u)" -eq 0 ] && [ -r /sys/kernel/btf/vmlinux ] || {
	echo "kbpf-trace not available here (needs root and BTF): the kernel's count not compared"
	exit 0
}
mkdir -m 1777 both
rc=0
"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/both/bpf" -- "${RUN[@]}" env HOME="$PWD/home" \
	TMPDIR="$PWD/tmp" GOMAXPROCS=2 KPROF_HOOK=patch LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/both/shim" \
	"$prog" $n 4 > both/out.txt || rc=$?
expect_eq "under kbpf-trace: exit status" 0 "$rc"
cmp plain.out both/out.txt || fail "under kbpf-trace: the output differs"
expect_eq "under kbpf-trace: calls through dispatch" 0 \
	"$(jq .dispatch.calls <<<"$(profile_json both/shim)")"
# every call the kernel saw after start-up: the program's own getppid
# and pread64 (its workers are done before it exits) exactly, none of any
# call more than the kernel, and at least 99.5% of them all: the Go
# runtime's other threads go on while the exiting thread makes its final
# flush (sysmon's nanosleep, the preemption signals' getpid, tgkill and
# rt_sigreturn, futex, epoll_pwait), and no flush can carry what they
# make then (seen: 6 to 22 of about 22,600; t_patch_nobody.sh allows
# 0.1% for the same reason)
lost=$("$KANALYZE" --format=json both/bpf | jq '.drops.events + .drops.records')
expect_eq "kbpf-trace's lost events" 0 "$lost"
json=$("$KANALYZE" --coverage --after-start --format=json both/shim both/bpf) ||
	fail "kanalyze --coverage --after-start failed"
over=$(jq -r '.syscalls[] | select(.count_a > .count_b) | "\(.name): shim \(.count_a), kernel \(.count_b)"' <<<"$json")
[ -z "$over" ] || fail "the shim counted more than the kernel saw: $(echo $over)"
for sc in getppid pread64; do
	expect_eq "$sc: shim and kernel" "$(jq --arg n $sc '.syscalls[] | select(.name == $n) | .count_b' <<<"$json")" \
		"$(jq --arg n $sc '.syscalls[] | select(.name == $n) | .count_a' <<<"$json")"
done
low=$(jq -r '.total | select(.count_a < 0.995 * .count_b) | "\(.count_a) of \(.count_b)"' <<<"$json")
[ -z "$low" ] || fail "under 99.5% of the kernel's calls after start-up: $low"
unended=$(jq -r '[.syscalls[] | select(.count_a != .count_b) | "\(.name) \(.count_b - .count_a)"] | join(", ")' <<<"$json")
echo "ok: $(jq -r '.total | "\(.count_a) of \(.count_b)"' <<<"$json") calls after start-up seen; not: ${unended:-none}"
