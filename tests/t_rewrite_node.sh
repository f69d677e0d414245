# SPDX-License-Identifier: MIT
# Issue 9, test 1: Node with a worker thread handing a token back and forth
# 500 times with Atomics.wait/notify (programs/node/atomics.js), traced at
# once by kbpf-trace and the shim in rewrite mode (the default as root):
# of the syscalls the kernel saw after the shim's start-up, the shim saw at
# least 99% of each one, futex included (a thread still blocked in futex
# when the process ends never returns: the kernel counts that call, the
# shim cannot). Also: Node's own workload with its child process
# (programs/node/host.js) prints the same bytes as without the shim.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
command -v node >/dev/null || skip "node missing (Debian package nodejs)"
mkdir -p atomics
rc=0
"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/atomics/bpf" -- env "${HOOK_ENV[@]}" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/atomics/shim" \
	node "$KPROF_ROOT/programs/node/atomics.js" 500 > atomics/out.txt || rc=$?
expect_eq "exit status" 0 "$rc"
expect_eq "output" "rounds=500" "$(cat atomics/out.txt)"
expect_eq "hook mode" "$REWRITE_HOOK" "$("$KANALYZE" --format=json atomics/shim | jq -r .hook_mode)"
"$KANALYZE" --coverage --after-start atomics/shim atomics/bpf | tee coverage.txt
json=$("$KANALYZE" --coverage --after-start --format=json atomics/shim atomics/bpf)
futex=$(jq '.syscalls[] | select(.name == "futex") | .count_b' <<<"$json")
[ "$futex" -ge 2000 ] || fail "only $futex futex calls: the workload did not wait"
low=$(jq -r '.syscalls[] | select(.count_b > 0 and (.count_a / .count_b) < 0.99) |
	"\(.name) \(.count_a)/\(.count_b)"' <<<"$json")
[ -z "$low" ] || fail "syscalls under 99%: $(echo $low)"
over=$(jq -r '.syscalls[] | select(.count_a > .count_b) | "\(.name) \(.count_a)/\(.count_b)"' <<<"$json")
[ -z "$over" ] || fail "the shim counted more than the kernel saw: $(echo $over)"
echo "ok: every syscall at 99% or more; total $(jq .total.count_a <<<"$json") of $(jq .total.count_b <<<"$json"), futex $(jq '.syscalls[] | select(.name == "futex") | "\(.count_a) of \(.count_b)"' <<<"$json")"

# Node's child_process, unchanged
app=$KPROF_ROOT/programs/node/host.js
node "$app" > plain.out
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/host node "$app" > shim.out
cmp plain.out shim.out || { diff plain.out shim.out; fail "host.js output differs under the shim"; }
node -e 'const r = require("child_process").spawnSync("sh", ["-c", "echo child; exit 3"]);
	process.stdout.write(r.stdout); process.exit(r.status)' > plain2.out || rc2=$?
rc3=0
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/spawn node -e 'const r = require("child_process").spawnSync("sh", ["-c", "echo child; exit 3"]);
	process.stdout.write(r.stdout); process.exit(r.status)' > shim2.out || rc3=$?
expect_eq "child_process: output" "$(cat plain2.out)" "$(cat shim2.out)"
expect_eq "child_process: exit status" "${rc2:-0}" "$rc3"
# node; its fork child, which execs sh; sh (dash) with the exit status
expect_eq "child_process: streams" "start,fork,exec 3" \
	"$(profile_json spawn | jq -r '[.processes[] | .origin] | join(",")') $(profile_json spawn | jq '[.processes[] | select(.origin == "exec") | .exit_status][0]')"
