# SPDX-License-Identifier: MIT
# serial: a benchmark: builds timed against each other
# krunner --suite=kernel-build in its smallest honest CI setting: Debian's
# linux-source, tinyconfig, only the scheduler (kernel/sched/) as the make goal
# (--target=kernel/sched/; users build the whole tinyconfig kernel by default),
# one cold and one warm build through ccache, plus the relocated warm
# build, in both cache-key modes (the defaults). The second build's hit
# rate is above the threshold, report.md and stats.json exist and say the
# same as the result file, whose metrics hold both modes and the
# cross-tree hit rates. The first run on
# a machine also unpacks the tarball into /var/tmp/kprof-linux-src.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner

"$KRUNNER" --suite=kernel-build --rounds=1 --warm-runs=1 --target=kernel/sched/ \
	--min-hit-rate=0.9 --out="$PWD/results" >stdout.txt || fail "krunner exited $?"
result=$(ls results/*-kernel-build.json)
sel='.suites[0].metrics'
for metric in cold_s warm_median_s warm_min_s warm_max_s warm_cold_ratio hit_rate cache_entries \
	cache_size_kib relocated_s cross_tree_hit_rate preprocessed_cold_s preprocessed_warm_median_s \
	preprocessed_warm_cold_ratio preprocessed_hit_rate preprocessed_cache_size_kib \
	preprocessed_cross_tree_hit_rate; do
	v=$(jq "$sel.$metric.median" "$result")
	jq -e "$sel.$metric.median | type == \"number\" and . > 0" "$result" >/dev/null ||
		fail "$metric = $v"
	echo "ok: $metric = $v"
done
jq -e "$sel.hit_rate.median > 0.9" "$result" >/dev/null ||
	fail "warm hit rate $(jq "$sel.hit_rate.median" "$result") is not above 0.9"
echo "ok: the second build's hit rate is above 0.9"
tarball=$(ls /usr/src/linux-source-*.tar.xz | tail -1)
expect_eq "the kernel source tarball is fingerprinted" "$(sha256sum "$tarball" | cut -d' ' -f1)" \
	"$(jq -r '.suites[0].artifacts[] | select(.name == "linux-source tarball") | .sha256' "$result")"
expect_eq "cc1, the compiler proper, is fingerprinted" \
	"$(sha256sum "$(gcc -print-prog-name=cc1)" | cut -d' ' -f1)" \
	"$(jq -r '.suites[0].artifacts[] | select(.name == "cc1") | .sha256' "$result")"
jq -e '.suites[0].tool_versions.gcc | test("gcc")' "$result" > /dev/null ||
	fail "gcc version: $(jq -c '.suites[0].tool_versions' "$result")"

dir=$(ls -d results/*-kernel-build-direct)
for f in report.md stats.json kernel.config logs/cold.log logs/warm-1.log logs/relocated.log; do
	[ -s "$dir/$f" ] || fail "no $dir/$f"
done
echo "ok: report.md, stats.json, kernel.config and the build logs exist"
grep -q '^CONFIG_' "$dir/kernel.config" || fail "kernel.config holds no configuration"
stats=$dir/stats.json
# stats.json and the result file
for pair in cold_s:.cold.seconds warm_median_s:.warm_median_s hit_rate:.hit_rate \
	warm_cold_ratio:.warm_cold_ratio cache_entries:.cache_entries; do
	metric=${pair%%:*} field=${pair#*:}
	a=$(jq "$sel.$metric.median" "$result") b=$(jq "$field" "$stats")
	jq -n -e "($a - $b) | fabs < 1e-6" >/dev/null || fail "$metric: result $a, stats.json $b"
done
# the second mode's figures are the preprocessed directory's
pstats=$(ls -d results/*-kernel-build-preprocessed)/stats.json
for pair in relocated_s:.relocate.seconds:$stats cross_tree_hit_rate:.relocate.hit_rate:$stats \
	preprocessed_cold_s:.cold.seconds:$pstats preprocessed_hit_rate:.hit_rate:$pstats \
	preprocessed_warm_median_s:.warm_median_s:$pstats \
	preprocessed_cross_tree_hit_rate:.relocate.hit_rate:$pstats; do
	IFS=: read -r metric field file <<<"$pair"
	a=$(jq "$sel.$metric.median" "$result") b=$(jq "$field" "$file")
	jq -n -e "($a - $b) | fabs < 1e-6" >/dev/null || fail "$metric: result $a, $file $b"
done
echo "ok: stats.json agrees with the result file"
# report.md and stats.json
report_has() { grep -qF -- "$1" "$dir/report.md" || fail "report.md lacks '$1' (stats.json: $2)"; }
report_has "| cold seconds | $(printf '%.2f' "$(jq .cold.seconds "$stats")") |" cold
report_has "| warm/cold ratio | $(printf '%.4f' "$(jq .warm_cold_ratio "$stats")") |" ratio
report_has "| warm hit rate | $(printf '%.4f' "$(jq .hit_rate "$stats")") |" hit_rate
report_has "| cache entries | $(jq .cache_entries "$stats") |" entries
report_has "| cache size KiB | $(jq .cache_size_kib "$stats") |" size
report_has "| warm 1 | $(printf '%.2f' "$(jq '.warm[0].seconds' "$stats")") | $(jq '.warm[0].hits' "$stats") |" warm
report_has "| cross-tree hit rate (relocated) | $(printf '%.4f' "$(jq .relocate.hit_rate "$stats")") |" relocate
echo "ok: report.md agrees with stats.json (relocated hit rate $(jq .relocate.hit_rate "$stats"))"
[ -z "$(find "$TMPDIR" -maxdepth 1 -name 'krunner-*')" ] || fail "scratch left behind"
echo "ok: no scratch directory left"

# A threshold missed: no warm build is 0 times the cold one. A cheap goal
# (scripts_basic and what the top-level Makefile prepares for it); the
# report is still written and the exit status is 5 (a suite failed).
rm -rf results
rc=0
"$KRUNNER" --suite=kernel-build --rounds=1 --warm-runs=1 --target=scripts_basic \
	--cache-mode=direct --relocate=0 --max-warm-ratio=0 --out="$PWD/results" >stdout.txt 2>stderr.txt || rc=$?
expect_eq "exit with a missed threshold" 5 "$rc"
grep -q "above --max-warm-ratio=0" stderr.txt || fail "no threshold message: $(cat stderr.txt)"
[ -s "$(ls -d results/*-kernel-build-direct)/report.md" ] || fail "no report for the failed run"
grep -q "MISSED" results/*-kernel-build-direct/report.md || fail "report.md does not say MISSED"
echo "ok: a missed threshold fails with the report written"
