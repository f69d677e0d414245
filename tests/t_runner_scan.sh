# SPDX-License-Identifier: MIT
# krunner run -- CMD: -P/-D and -L scans (one benchmark per value, {VAR}
# replaced in the command and the hooks), hyperfine's exports (JSON, CSV,
# Markdown) and --parse-metrics (key=value lines as metrics, unit and
# direction from the suffix, unknown ones kept ungated, bad values fail).
source "$KPROF_ROOT/tests/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
KRUNNER=$BUILD/krunner

"$KRUNNER" run --runs=2 --warmup=0 -P N 1 5 -D 2 --out="$PWD/p" --setup="echo {N} >>setup.log" \
	--export-json=e.json --export-csv=e.csv --export-markdown=e.md \
	-- sh -c 'echo {N} >>runs.log' >/dev/null 2>&1 || fail "scan exited $?"
expect_eq "setup per value" "1 3 5" "$(tr '\n' ' ' <setup.log | sed 's/ $//')"
expect_eq "runs per value" "1 1 3 3 5 5" "$(tr '\n' ' ' <runs.log | sed 's/ $//')"
result=$(echo p/*-command.json)
expect_eq "benchmarks" '["command[N=1]","command[N=3]","command[N=5]"]' "$(jq -c '[.suites[].name]' "$result")"
expect_eq "json: commands and parameters" \
	'[["sh -c echo 1 >>runs.log","1",2],["sh -c echo 3 >>runs.log","3",2],["sh -c echo 5 >>runs.log","5",2]]' \
	"$(jq -c '[.results[] | [.command, .parameters.N, (.times | length)]]' e.json)"
jq -e '.results[] | .min <= .median and .median <= .max and .mean > 0 and .mean < 1' e.json >/dev/null ||
	fail "json figures (seconds): $(cat e.json)"
expect_eq "csv header" "command,mean,stddev,median,user,system,min,max,parameter_N" "$(head -1 e.csv)"
expect_eq "csv rows" 3 "$(tail -n +2 e.csv | wc -l)"
expect_eq "csv parameter column" "1 3 5" "$(tail -n +2 e.csv | awk -F, '{ print $NF }' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "markdown rows" 3 "$(grep -c '^| `sh -c echo [135] >>runs.log` | ' e.md)"
grep -q '^| Command | Mean ± σ \[ms\] | Median \[ms\] | Min \[ms\] | Max \[ms\] | Relative | N |$' e.md ||
	fail "markdown header: $(head -1 e.md)"

"$KRUNNER" run --runs=1 --warmup=0 -L size small,big --out="$PWD/l" --export-csv=l.csv \
	-- /bin/echo {size} >/dev/null 2>&1 || fail "list scan exited $?"
expect_eq "list values" "small big" "$(tail -n +2 l.csv | awk -F, '{ print $NF }' | tr '\n' ' ' | sed 's/ $//')"
echo "ok: scans and exports"

# --parse-metrics
cat >bench.sh <<'EOS'
#!/bin/sh
echo "a line of text"
echo "lat_ms=2.5"
echo "rate_per_sec=100"
echo "size_bytes=4096"
echo "mystery=7"
EOS
chmod +x bench.sh
"$KRUNNER" run --runs=2 --warmup=0 --parse-metrics --out="$PWD/m" -- ./bench.sh >/dev/null 2>err.txt ||
	fail "parse-metrics exited $?"
r=$(echo m/*.json)
expect_eq "lat_ms" '["ms","lower",2,2.5]' "$(jq -c '.suites[0].metrics.lat_ms | [.unit, .direction, .n, .median]' "$r")"
expect_eq "rate_per_sec" '["1/s","higher"]' "$(jq -c '.suites[0].metrics.rate_per_sec | [.unit, .direction]' "$r")"
expect_eq "size_bytes" '["bytes","lower"]' "$(jq -c '.suites[0].metrics.size_bytes | [.unit, .direction]' "$r")"
expect_eq "mystery: ungated" '[null,"unknown",7]' \
	"$(jq -c '.suites[0] | [.metrics.mystery, .ungated_metrics.mystery.direction, .ungated_metrics.mystery.median]' "$r")"
grep -q 'metric mystery has no known unit suffix.*not gated' err.txt || fail "not said: $(cat err.txt)"
for bad in 'x_ms=-1' 'x_ms=nan' 'x_ms=fast' 'wall_ms=3'; do
	rc=0
	"$KRUNNER" run --runs=1 --parse-metrics --out="$PWD/b" -- echo "$bad" >/dev/null 2>err.txt || rc=$?
	expect_eq "$bad: exit" 5 "$rc"
	grep -q "${bad%%=*}" err.txt || fail "$bad: the line not named: $(cat err.txt)"
done
echo "ok: parse-metrics"

rc=0
"$KRUNNER" run -P N 5 1 -- /bin/true 2>err.txt || rc=$?
expect_eq "-P MAX < MIN: exit" 2 "$rc"
rc=0
"$KRUNNER" run -P N 1 -- /bin/true 2>err.txt || rc=$?
expect_eq "-P short: exit" 2 "$rc"
