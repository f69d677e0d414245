# SPDX-License-Identifier: MIT
# tier: check
# The functions hooks.def marks RAW_DIRECT are made as raw syscalls by the
# symbol hooks, which is right only while glibc's function is nothing but
# that syscall: this libc's code of each, up to its first return, must be
# an optional argument move (rcx to r10), `mov $NR,%eax` with the number
# hooks.def names, one `syscall`, the errno path, and no call or jump out.
. "$KPROF_ROOT/tests/lib.sh"
command -v objdump > /dev/null || fail "objdump (binutils) is needed"
libc=$(ldd "$BUILD/tests/getppid_loop" | awk '/libc\.so\.6/ { print $3 }')
[ -r "$libc" ] || fail "libc.so.6 not found: $(ldd "$BUILD/tests/getppid_loop")"
sed -nE 's/^KP_HOOK\([^,]+, ([a-z0-9_]+), (SYS_[a-z0-9_]+),.*, RAW_DIRECT\)$/\1 \2/p' \
	"$KPROF_ROOT/preload/symbols/hooks.def" > raw2.txt
n=$(wc -l < raw2.txt)
[ "$n" -gt 0 ] || fail "no RAW_DIRECT line in hooks.def"
nm -D "$libc" > libc.syms
bad=0
while read -r fn sys; do
	nr=$(printf '#include <sys/syscall.h>\n%s\n' "$sys" | cc -E -P - | tail -n 1)
	addr=$(awk -v f="$fn" '$2 ~ /^[TtWi]$/ && ($3 == f || index($3, f "@@") == 1) { print $1; exit }' libc.syms)
	if [ -z "$addr" ]; then echo "$fn: not in $libc"; bad=$((bad + 1)); continue; fi
	objdump -d --no-show-raw-insn --start-address=0x"$addr" \
		--stop-address=$((0x$addr + 64)) "$libc" |
		awk '/^ *[0-9a-f]+:/ { $1 = ""; print }' | sed -n '1,/ret/p' > body.txt
	movnr=$(grep -oE 'mov +\$0x[0-9a-f]+,%eax' body.txt | head -n 1 | grep -oE '0x[0-9a-f]+' || true)
	outside=$(grep -E '(^| )(call|jmp)' body.txt | grep -vc '+0x' || true)
	syscalls=$(grep -cw syscall body.txt || true)
	others=$(grep -vE '^ (mov|syscall|cmp|ja|jae|xor|or|neg|ret|nop)' body.txt | grep -c . || true)
	if [ -z "$movnr" ] || [ "$((movnr))" != "$nr" ] || [ "$outside" != 0 ] ||
		[ "$syscalls" != 1 ] || [ "$others" != 0 ]; then
		echo "$fn ($sys = $nr) is not a plain wrapper in $libc:"; cat body.txt
		bad=$((bad + 1))
	fi
done < raw2.txt
expect_eq "RAW_DIRECT functions that are not plain wrappers (of $n)" 0 "$bad"
