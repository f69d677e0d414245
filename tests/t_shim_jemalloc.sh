# SPDX-License-Identifier: MIT
# A program whose allocator calls a hooked function while it initializes,
# holding its own lock: jemalloc reads /etc/malloc.conf with readlink in
# malloc_init, before main (rustc links it; Debian's libjemalloc2 is
# preloaded here). The first hook starts the shim there, and the shim's
# start-up must not allocate: a dlopen in it waited on jemalloc's lock for
# ever. In every mode, in both preload orders: the program ends, its
# output is unchanged and its calls are all counted.
. "$KPROF_ROOT/tests/lib.sh"
jemalloc=$(ls /usr/lib/*-linux-gnu/libjemalloc.so.2 2>/dev/null | head -1)
[ -n "$jemalloc" ] || fail "no libjemalloc.so.2 (Debian's libjemalloc2; make test installs it)"
prog=$BUILD/tests/getppid_loop
expect_eq "plain run with jemalloc" "getppid=1000" "$(LD_PRELOAD=$jemalloc "$prog" 1000)"
for mode in symbols rewrite patch; do
	for order in "$SHIM $jemalloc" "$jemalloc $SHIM"; do
		d=$PWD/trace-$mode-$((n = ${n:-0} + 1))
		out=$(KPROF_HOOK=$mode KPROF_OUT=$d LD_PRELOAD="$order" timeout -k 5 30 "$prog" 1000) ||
			fail "$mode, LD_PRELOAD='$order': exit $? (124 or 137: it hung)"
		expect_eq "$mode, preload order $n: output" "getppid=1000" "$out"
		expect_eq "$mode, preload order $n: getppid calls" 1000 \
			"$(syscall_field "$(profile_json "$d")" getppid count)"
	done
done
