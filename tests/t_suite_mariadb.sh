# SPDX-License-Identifier: MIT
# serial: a benchmark, and the database's fixed port
# krunner --suite=mariadb-aria,mariadb-innodb: a private mariadbd per round
# in a fresh scratch datadir; every metric positive; afterwards no mariadbd
# of ours runs and no scratch directory is left — also when krunner is
# interrupted with SIGINT while the server runs.
source "$KPROF_ROOT/tests/lib.sh"
KRUNNER=$BUILD/krunner

# Our servers: mariadbd processes whose command line names our TMPDIR.
our_servers() { pgrep -f "mariadbd.*$TMPDIR" || true; }
no_leftovers() {
	[ -z "$(our_servers)" ] || fail "$1: mariadbd still running: $(pgrep -af "mariadbd.*$TMPDIR")"
	local left
	left=$(find "$TMPDIR" -maxdepth 1 -name 'krunner-*' | head -n 5)
	[ -z "$left" ] || fail "$1: scratch left behind: $left"
	echo "ok: $1: no mariadbd, no scratch directory"
}

"$KRUNNER" --suite=mariadb-aria,mariadb-innodb --rounds=1 --out="$PWD/results" >stdout.txt ||
	fail "krunner exited $?"
result=$(echo results/*.json)
for suite in mariadb-aria mariadb-innodb; do
	sel=".suites[] | select(.name == \"$suite\")"
	for metric in bootstrap_ms query_create_ms query_insert_ms query_select_ms query_join_ms; do
		v=$(jq "$sel | .metrics.$metric.median" "$result")
		jq -e "$sel | .metrics.$metric.median | type == \"number\" and . > 0" "$result" >/dev/null ||
			fail "$suite: $metric = $v"
		echo "ok: $suite: $metric = $v"
	done
done
# the tools' versions as they print them
jq -e '.suites[0].tool_versions.mariadbd | test("mariadbd +Ver [0-9]")' "$result" >/dev/null ||
	fail "mariadbd version: $(jq -c '.suites[0].tool_versions' "$result")"
expect_eq "glibc of the host" "$(ldd --version | sed -n '1s/.* //p')" "$(jq -r .host.glibc "$result")"
expect_eq "aria engine" Aria "$(jq -r '.suites[] | select(.name == "mariadb-aria") | .notes.engine' "$result")"
expect_eq "innodb engine" InnoDB "$(jq -r '.suites[] | select(.name == "mariadb-innodb") | .notes.engine' "$result")"
no_leftovers "after a run"

# SIGINT while the server runs: exit 130, no result, nothing left.
rm -rf results
"$KRUNNER" --suite=mariadb-innodb --rounds=20 --out="$PWD/results" >stdout.txt 2>stderr.txt &
pid=$!
for _ in $(seq 1 600); do
	[ -n "$(our_servers)" ] && break
	kill -0 "$pid" 2>/dev/null || fail "krunner ended before its server started: $(cat stderr.txt)"
	sleep 0.1
done
[ -n "$(our_servers)" ] || fail "no mariadbd started within 60 s"
sleep 0.3
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "exit after SIGINT" 130 "$rc"
grep -q "interrupted" stderr.txt || fail "no 'interrupted' in: $(cat stderr.txt)"
[ -z "$(ls results/*.json 2>/dev/null)" ] || fail "a result was written after SIGINT"
no_leftovers "after SIGINT"
