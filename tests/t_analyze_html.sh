#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# kanalyze --html: one self-contained file (no network) that headless
# Chromium opens with no console errors, showing its charts: time by
# syscall, the time series (with its legend), the per-thread view, time by
# descriptor kind and the timeline of the events as inline SVG, plus the
# profile, kind, call-site and process tables. Errors are caught twice:
# Chromium's console log on stderr, and the page's own error handler
# writing into the DOM. At 1400 and 800 pixels wide no text of a chart
# reaches outside it (an axis label of 3270.78 ms read 70.78 ms, bar
# texts were cut at the right) and the page is no wider than the window
# (tables scroll within themselves); screenshots are kept beside.
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
grep -q 'data-rendered="5"' report.dom || fail "the page script did not count 5 charts"
for id in time-by-syscall time-series time-by-thread time-by-kind timeline; do
	n=$(awk -v id="id=\"$id\"" 'index($0, id) {on = 1} on {print} on && /<\/svg>/ {exit}' \
		report.dom | grep -o '<rect' | wc -l || true)
	[ "$n" -gt 0 ] || fail "chart $id has no bars"
	echo "ok: chart $id with $n bars"
done
grep -q '<table id="profile">' report.dom || fail "no profile table"
grep -q '<table id="kinds">' report.dom || fail "no descriptor kind table"
grep -q 'reader_function (sites_calls)' report.dom || fail "no call sites"
grep -q '<table id="processes">' report.dom || fail "no process table"
grep -q 'an interval with EAGAIN retries</text>' report.dom || fail "no legend of the time series"
# the layout at two widths, measured by the browser: every text of every
# chart inside its chart's box, the page no wider than the window
cat > layout.js <<'JS'
<script>(function(){var bad=[];
document.querySelectorAll("svg").forEach(function(svg){var vb=svg.viewBox.baseVal;
 svg.querySelectorAll("text").forEach(function(t){var b=t.getBBox();
  if(b.width&&(b.x<vb.x-0.5||b.x+b.width>vb.x+vb.width+0.5))bad.push((svg.id||"svg")+": "+t.textContent);});});
var wide=document.documentElement.scrollWidth>window.innerWidth+1;
document.body.setAttribute("data-layout",JSON.stringify({bad:bad,wide:wide,w:window.innerWidth}));})();</script>
JS
awk 'index($0, "</body></html>") { while ((getline l < "layout.js") > 0) print l } { print }' \
	report.html > layout.html
for w in 1400 800; do
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$PWD/w$w" --window-size=$w,3000 \
		--dump-dom "file://$PWD/layout.html" 2> "w$w.log" > "w$w.dom"
	got=$(grep -o 'data-layout="[^"]*"' "w$w.dom" | sed 's/^data-layout="//; s/"$//; s/&quot;/"/g')
	[ -n "$got" ] || fail "$w px: the layout check did not run"
	expect_eq "$w px: chart texts outside their chart" "[]" "$(jq -c .bad <<<"$got")"
	expect_eq "$w px: page wider than the window" false "$(jq -c .wide <<<"$got")"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$PWD/s$w" --window-size=$w,3000 \
		--screenshot="$PWD/report-$w.png" "file://$PWD/report.html" 2>/dev/null ||
		fail "$w px: no screenshot"
	[ -s "report-$w.png" ] || fail "$w px: empty screenshot"
done
echo "ok: report renders in $($CHROMIUM --version 2>/dev/null | head -1)"
