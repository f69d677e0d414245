#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze --html: one self-contained file (no network) that headless
# Chromium opens with no console errors, showing its charts: time by
# syscall, the time series, the per-thread view and time by descriptor kind
# as inline SVG, plus the profile, kind and call-site tables. Errors are caught twice: Chromium's console
# log on stderr, and the page's own error handler writing into the DOM.
source "$KPROF_ROOT/tests/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium not installed (apt-get install chromium)"
browse() { # browse FILE PROFILE_DIR: the DOM after scripts ran; log in $2.log
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --user-data-dir="$PWD/$2" --enable-logging=stderr --v=0 \
		--dump-dom "file://$PWD/$1" 2> "$2.log"
}
KPROF_EVENTS=1 KPROF_INTERVAL_MS=20 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace \
	"$BUILD/tests/threads_calls" 4 2000 > /dev/null
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace "$BUILD/tests/sites_calls" 100 > /dev/null
"$KANALYZE" --html=report.html trace
! grep -Eiq '(src|href)="(https?:)?//' report.html || fail "the report refers to the network"
# The harness must see an error when there is one.
printf '<!DOCTYPE html><html><body><div id="errors"></div><script>window.addEventListener("error",function(e){document.getElementById("errors").textContent=e.message});</script><script>no_such_function()</script></body></html>' > bad.html
browse bad.html p1 > bad.dom
grep -q 'CONSOLE.*no_such_function' p1.log && grep -q 'id="errors">Uncaught' bad.dom ||
	skip "this Chromium does not report script errors here; cannot check"
browse report.html p2 > report.dom
! grep -q 'CONSOLE' p2.log || fail "console messages: $(grep CONSOLE p2.log)"
grep -q '<div id="errors"></div>' report.dom || fail "page errors: $(grep -o '<div id="errors">[^<]*' report.dom)"
grep -q 'data-rendered="4"' report.dom || fail "the page script did not count 4 charts"
for id in time-by-syscall time-series time-by-thread time-by-kind; do
	n=$(awk -v id="id=\"$id\"" 'index($0, id) {on = 1} on {print} on && /<\/svg>/ {exit}' \
		report.dom | grep -o '<rect' | wc -l || true)
	[ "$n" -gt 0 ] || fail "chart $id has no bars"
	echo "ok: chart $id with $n bars"
done
grep -q '<table id="profile">' report.dom || fail "no profile table"
grep -q '<table id="kinds">' report.dom || fail "no descriptor kind table"
grep -q 'reader_function (sites_calls)' report.dom || fail "no call sites"
echo "ok: report renders in $($CHROMIUM --version 2>/dev/null | head -1)"
