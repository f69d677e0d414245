# SPDX-License-Identifier: MIT
# Issue 9, test 2: gcc -c (the driver vforks and execs cc1 and as) under
# the shim in rewrite mode and kbpf-trace at once: the object is the same
# as without the shim, every process image has its stream, and the shim
# saw every call the kernel saw after each image's start-up (the vfork
# children's calls before their exec belong to no stream; the kernel's
# count is taken from the images' starts on).
. "$KPROF_ROOT/tests/rewrite_lib.sh"
need_bpf
need_rewrite
command -v gcc >/dev/null || skip "gcc missing"
cat > hello.c <<'C'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
C
gcc -c hello.c -o plain.o
mkdir -p run
rc=0
"$KBPF" "${KBPF_EXACT[@]}" -o "$PWD/run/bpf" -- env "${HOOK_ENV[@]}" LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/run/shim" \
	gcc -c hello.c -o traced.o || rc=$?
expect_eq "exit status" 0 "$rc"
cmp plain.o traced.o || fail "the object differs under the shim"
echo "ok: same object"
json=$(profile_json run/shim)
expect_eq "images (gcc, cc1, as)" "as cc1 gcc" \
	"$(jq -r '[.processes[] | .exe | split("/") | last | sub("x86_64-linux-gnu-"; "") | sub("-12$"; "")] | sort | join(" ")' <<<"$json")"
expect_eq "hook mode" "$REWRITE_HOOK" "$(jq -r .hook_mode <<<"$json")"
expect_eq "vfork (the driver's two children)" 2 "$(syscall_field "$json" vfork count)"
"$KANALYZE" --coverage --after-start run/shim run/bpf | tail -3
exact_coverage run
