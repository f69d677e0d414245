# SPDX-License-Identifier: MIT
# Sites and stacks show C++ and Rust names demangled (libiberty, as
# c++filt shows them without hashes): tests/mangled_callers calls getppid
# from kprof_test::Caller::call(int) (C++), demo::caller (Rust legacy),
# demo::caller_v0 (Rust v0) and a C++ name of 300 characters, 100, 200,
# 300 and 400 times. --sites names each with its exact count, under the
# shim in both hook modes and under kbpf-trace --stacks; --folded and
# --pprof carry the same names; the long one is cut with "..." and keeps
# its library.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/mangled_callers
long="kprof_test::$(printf 'x%.0s' $(seq 300))()"
# sites NAME TRACE: the getppid sites of --sites, "count name" per line
sites() {
	"$KANALYZE" --sites --top=0 -e getppid "$2" > "$1.sites" || fail "$1: kanalyze --sites"
	awk '$2 == "calls" && $3 ~ /^[0-9.]+$/ { $2 = ""; $3 = ""; $4 = ""; sub(/^ +/, ""); print }' \
		"$1.sites" | sed 's/^\([0-9]*\) */\1 /'
}
check() {
	local got
	got=$(sites "$1" "$2")
	expect_eq "$1: the three short names" "100 kprof_test::Caller::call(int) (mangled_callers)
200 demo::caller (mangled_callers)
300 demo::caller_v0 (mangled_callers)" "$(grep -v kprof_test::xxx <<<"$got" | sort -n)"
	local cut
	cut=$(grep kprof_test::xxx <<<"$got") || fail "$1: no site of the long name: $got"
	[[ $cut == "400 ${long:0:200}"*"... (mangled_callers)" ]] ||
		fail "$1: the long name is not cut with its library kept: $cut"
	echo "ok: $1: the long name cut to ${#cut} characters, its library kept"
}
for mode in symbols rewrite; do
	out=$(KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/$mode "$prog" 100) ||
		fail "$mode: the program failed"
	expect_eq "$mode: program output" "calls=1000 ok" "$out"
	check "$mode" "$mode"
done
expect_eq "--folded" "mangled_callers\`demo::caller;getppid 200
mangled_callers\`demo::caller_v0;getppid 300
mangled_callers\`kprof_test::Caller::call(int);getppid 100" \
	"$("$KANALYZE" --folded -e getppid symbols | grep -v kprof_test::xxx)"
"$KANALYZE" --pprof=p.pb.gz -e getppid symbols 2>/dev/null || fail "kanalyze --pprof"
HOME=$PWD go tool pprof -raw p.pb.gz 2>/dev/null > raw.txt || fail "go tool pprof -raw"
# (pprof shows a C++ name without its parameters, then the full one)
for name in 'kprof_test::Caller::call mangled_callers:0 s=0(kprof_test::Caller::call(int))' \
	'demo::caller mangled_callers:0' 'demo::caller_v0 mangled_callers:0'; do
	grep -qF " $name" raw.txt || fail "--pprof: no function $name: $(grep -A20 ^Locations raw.txt)"
done
echo "ok: --pprof names the three functions demangled"
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$BUILD/kbpf-trace" --stacks -o bpf -- "$prog" 100 > /dev/null || fail "kbpf-trace --stacks"
	check kbpf-trace bpf
else
	echo "kbpf-trace part not run: it needs root and a kernel with BTF"
fi
