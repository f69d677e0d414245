# SPDX-License-Identifier: MIT
# serial: a benchmark, and the web server's fixed port
# krunner --suite=wordpress: WordPress on php -S with a private mariadbd.
# With --profile=preload both metrics come out positive, the versions are
# noted and each profiled round has traces of the php processes that
# kanalyze reads. A config that makes PHP print a warning into the page
# fails the run loudly. Neither run leaves a server or a scratch directory.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner

no_leftovers() {
	[ -z "$(pgrep -f "(mariadbd|php).*$TMPDIR" || true)" ] ||
		fail "$1: still running: $(pgrep -af "(mariadbd|php).*$TMPDIR")"
	local left
	left=$(find "$TMPDIR" -maxdepth 1 -name 'krunner-*' | head -n 5)
	[ -z "$left" ] || fail "$1: scratch left behind: $left"
	echo "ok: $1: no server, no scratch directory"
}

"$KRUNNER" --suite=wordpress --rounds=1 --profile=preload --out="$PWD/results" >stdout.txt ||
	fail "krunner exited $?"
result=$(echo results/*.json)
for metric in http_first_response_ms cli_require_ms; do
	v=$(jq ".suites[0].metrics.$metric.median" "$result")
	jq -e ".suites[0].metrics.$metric.median | type == \"number\" and . > 0" "$result" >/dev/null ||
		fail "$metric = $v"
	echo "ok: $metric = $v"
done
php_version=$(php -r 'echo PHP_VERSION;')
expect_eq "php version noted" "$php_version" "$(jq -r '.suites[0].notes.php' "$result")"
wp_version=$(sed -n "s/^\$wp_version = '\(.*\)';/\1/p" /usr/share/wordpress/wp-includes/version.php)
expect_eq "wordpress version noted" "$wp_version" "$(jq -r '.suites[0].notes.wordpress' "$result")"

trace=$(jq -r '.suites[0].round_details[] | select(.profiled) | .trace' "$result")
[ -d "$trace" ] || fail "no trace directory $trace"
json=$("$KANALYZE" --format=json "$trace") || fail "kanalyze cannot read $trace"
# Two php processes per round: php -S serving the page, php -r loading WordPress.
servers=$(jq '[.processes[] | select((.exe | test("php")) and (.argv | index("-S") != null))] | length' <<<"$json")
clis=$(jq '[.processes[] | select((.exe | test("php")) and (.argv | index("-r") != null))] | length' <<<"$json")
expect_eq "traced php -S processes" 1 "$servers"
expect_eq "traced php -r processes" 1 "$clis"
bad=$(jq '[.processes[] | select(.exe | test("php")) | select(.total.count < 100)] | length' <<<"$json")
expect_eq "php processes with fewer than 100 syscalls" 0 "$bad"
jq -e '[.processes[] | select(.exe | test("php")) | .syscalls[] | select(.name == "accept" or .name == "accept4")] | length > 0' \
	<<<"$json" >/dev/null || fail "no accept in the php -S trace"
echo "ok: kanalyze reads the php traces ($(jq .total.count <<<"$json") syscalls)"
no_leftovers "after a run"

# A broken config: PHP prints a warning into every page.
rm -rf results
rc=0
"$KRUNNER" --suite=wordpress --rounds=1 --out="$PWD/results" \
	--wp-config-extra='echo $krunner_undefined_variable;' >stdout.txt 2>stderr.txt || rc=$?
expect_eq "exit with a broken config" 5 "$rc"
grep -q "the first response is not the page" stderr.txt || fail "no message: $(cat stderr.txt)"
grep -q "Warning" stderr.txt || fail "the message does not show the warning: $(cat stderr.txt)"
expect_eq "failed suite in the result" false \
	"$(jq '.suites[0].error == null' results/*.json)"
echo "ok: broken config fails loudly: $(grep 'not the page' stderr.txt)"
no_leftovers "after a failed round"
