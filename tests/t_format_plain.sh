#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# docs/FORMAT.md describes every record: tests/format_plain.c decodes
# traces with plain msgpack-c and zlib (no kprof code) and fails on any
# undocumented record type or key, or a value of another type than
# documented. Run on the fixture (every record type), its gzip form, and a
# real shim trace when the shim and tests/getppid_loop are built.
# By hand: build/tests/format_plain [--expect-all] TRACE
source "$KPROF_ROOT/tests/lib.sh"
FORMAT_PLAIN=$BUILD/tests/format_plain
[ -x "$FORMAT_PLAIN" ] || fail "$FORMAT_PLAIN not built"

"$BUILD/tests/gen_trace" fixture.msgpack
"$BUILD/tests/gen_trace" --gzip --two-members fixture.msgpack.gz
"$FORMAT_PLAIN" --expect-all fixture.msgpack || fail "fixture does not match docs/FORMAT.md"
"$FORMAT_PLAIN" --expect-all fixture.msgpack.gz || fail "gzip fixture does not match docs/FORMAT.md"

# The checker itself must catch what it is there to catch.
"$BUILD/tests/gen_trace" --unknown unknown.msgpack
if "$FORMAT_PLAIN" unknown.msgpack 2>/dev/null; then
	fail "format_plain accepted an undocumented record type"
fi
head -c 1000 fixture.msgpack > cut.msgpack
if "$FORMAT_PLAIN" cut.msgpack 2>/dev/null; then
	fail "format_plain accepted a truncated trace"
fi

if [ -x "$SHIM" ] && [ -x "$BUILD/tests/getppid_loop" ]; then
	mkdir real
	KPROF_OUT=$PWD/real/ LD_PRELOAD=$SHIM "$BUILD/tests/getppid_loop" >/dev/null
	n=0
	for f in $(find real -name '*.msgpack' -o -name '*.msgpack.gz'); do
		"$FORMAT_PLAIN" "$f" || fail "real trace $f does not match docs/FORMAT.md"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "the shim wrote no trace under real/"
	echo "ok: $n real trace file(s) conform"
else
	echo "note: shim or getppid_loop not built; checked the fixture only"
fi
echo "ok: traces conform to docs/FORMAT.md"
