# SPDX-License-Identifier: MIT
# slow: a minute or more
# The reader under libFuzzer (ASan + UBSan): first every input kept in
# tests/fuzz/regressions/TARGET/ (crashes found before) runs once and must
# pass, then each target fuzzes for KPROF_FUZZ_SECONDS (default 60) from a
# seed corpus of real traces made now (tests/fuzz/run.sh). Any crash, leak
# or sanitizer report fails the test; the input is in $BUILD/fuzz/crashes.
. "$KPROF_ROOT/tests/lib.sh"
command -v "${CLANG:-clang}" >/dev/null || skip "clang missing (apt-get install clang)"
make --no-print-directory -C "$KPROF_ROOT" BUILD="$BUILD" fuzz-build > build.log 2>&1 || {
	if grep -q -e 'libclang_rt.fuzzer' -e 'fuzzer.*No such file' build.log; then
		skip "libFuzzer runtime missing (apt-get install libclang-rt-14-dev)"
	fi
	cat build.log; fail "fuzz targets do not build"
}
for dir in "$KPROF_ROOT"/tests/fuzz/regressions/*/; do
	target=$(basename "$dir")
	inputs=$(find "$dir" -type f ! -name '.*' | sort)
	[ -n "$inputs" ] || continue
	# shellcheck disable=SC2086
	"$BUILD/fuzz/$target" $inputs > "regress-$target.log" 2>&1 ||
		{ tail -n 20 "regress-$target.log"; fail "$target: a regression input fails again"; }
	echo "ok: $target: $(wc -w <<<"$inputs") regression inputs pass"
done
BUILD=$BUILD FUZZ_SECONDS=${KPROF_FUZZ_SECONDS:-60} "$KPROF_ROOT/tests/fuzz/run.sh" || fail "fuzzing found a crash"
