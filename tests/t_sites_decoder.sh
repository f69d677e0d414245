# SPDX-License-Identifier: MIT
# kprof-sites finds the syscall instructions by stepping through
# instruction lengths (preload/helper/x86_len.c) from each function's
# start. Checked against capstone, the decoder it replaced (15 s for
# Chromium's code, now 0.9 s on the same machine): the same length at
# every instruction capstone decodes, in libc, the dynamic loader,
# libstdc++, python3 and node (but ud0/ud1, which capstone 4 takes
# without their ModRM); the same sites in the four libraries. And exactly
# the one syscall of tests/sites_cases.c, where a pair in data and one
# after an ud1 were sites before (both patched: two bytes of libcrypto's
# and node's P-521 tables, the rel32 of two calls in Chromium).
source "$KPROF_ROOT/tests/lib.sh"
SITES=$BUILD/kprof-sites
CASES=$BUILD/tests/sites_cases
[ "$(uname -m)" = x86_64 ] || skip "kprof-sites decodes x86_64 only"
LIBC=$(ldd /bin/true | awk '$1 ~ /^libc\.so/ { print $3 }')
LD=$(ldd /bin/true | awk '$1 ~ /ld-linux/ { print $1 }')
STDCXX=$(ldd "$(command -v node)" | awk '$1 ~ /^libstdc\+\+/ { print $3 }')
PY=$(readlink -f /usr/bin/python3)
for f in "$LIBC" "$LD" "$STDCXX" "$PY"; do
	[ -r "$f" ] || fail "not found: '$f'"
done
for f in "$LIBC" "$LD" "$STDCXX" "$PY" "$(readlink -f "$(command -v node)")"; do
	out=$("$SITES" --check "$f") || fail "lengths differ from capstone's: $out"
	echo "$out"
	[[ $out == *" 0 lengths differ"* ]] || fail "unexpected: $out"
	n=$(awk '{ print $2 }' <<<"$out")
	[ "$n" -gt 10000 ] || fail "$f: only $n instructions checked"
done
for f in "$LIBC" "$LD" "$STDCXX" "$PY"; do
	"$SITES" "$f" > fast.bin || fail "kprof-sites $f failed"
	"$SITES" --capstone "$f" > capstone.bin || fail "kprof-sites --capstone $f failed"
	cmp -s fast.bin capstone.bin || fail "$f: the sites differ from capstone's"
	echo "ok: $f: the same $(od -An -t u8 -j 8 -N 8 fast.bin | tr -d ' ') sites"
done

# the fixture: three pairs, one syscall
addr() { printf '0x%x' $(( 16#$(nm "$CASES" | awk -v s="$1" '$3 == s { print $1 }') + $2 )); }
pairs=$(objcopy -O binary --only-section=.text "$CASES" /dev/stdout | od -An -v -tx1 |
	tr -s ' \n' ' ' | grep -o '0f 05' | wc -l)
[ "$pairs" -ge 3 ] || fail "the fixture holds $pairs 0f 05 pairs, want 3"
expect_eq "the fixture's sites" "$(addr sites_real 5)" \
	"$("$SITES" --plan "$CASES" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"
"$SITES" -v "$CASES" 2> why.txt > /dev/null
grep -q "^kprof-sites: $(addr sites_data 1): reached through bytes that do not decode" why.txt ||
	fail "the pair in data not said: $(cat why.txt)"
echo "ok: the pair in data and the one in a call's rel32 are not sites"
