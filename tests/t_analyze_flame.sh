# SPDX-License-Identifier: MIT
# kanalyze --flame: the folded stacks as one SVG flame graph, drawn by
# kanalyze itself (Debian packages no flamegraph.pl). The file is XML; its
# root frame holds exactly the profile's calls; each of
# tests/mangled_callers' four callers holds exactly its calls (shim
# sites), and bpf_stacks' reader_function its reads (kbpf-trace's whole
# stacks); with --flame-weight=calls the widths are the calls' shares. In
# headless Chromium the script runs with no error, ?s=REGEX marks the
# matching frames and says their share, ?z=FRAME zooms that frame to the
# full width and hides what is not under or above it; the HTML report
# holds the same graph.
. "$KPROF_ROOT/tests/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || fail "no chromium (Debian's chromium; make test installs it)"
command -v python3 >/dev/null || fail "no python3 (make test installs it)"
browse() { # browse URL PROFILE: the DOM after scripts ran; log in PROFILE.log
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --user-data-dir="$PWD/$2" --enable-logging=stderr --v=0 \
		--dump-dom "$1" 2> "$2.log"
}
# title FILE NAME: the title of the frame NAME ("NAME (N calls, T ms, P%)")
title() { grep -o "<title>$2 ([^<]*</title>" "$1" | head -n 1; }

KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim "$BUILD/tests/mangled_callers" 100 > /dev/null
"$KANALYZE" --flame=shim.svg shim 2> shim.err || fail "kanalyze --flame: $(cat shim.err)"
grep -qx "kanalyze: shim.svg: [0-9]* frames" shim.err || fail "message: $(cat shim.err)"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' shim.svg ||
	fail "shim.svg is not well-formed XML"
total=$(profile_json shim | jq .total.count)
[[ $(title shim.svg all) == "<title>all ($total calls, "* ]] ||
	fail "root frame: $(title shim.svg all), profile $total calls"
echo "ok: the root frame holds the profile's $total calls"
for want in "100 kprof_test::Caller::call(int)" "200 demo::caller" "300 demo::caller_v0"; do
	t=$(title shim.svg "mangled_callers\`${want#* }")
	[[ $t == *"(${want%% *} calls, "* ]] || fail "frame ${want#* }: $t"
done
echo "ok: each caller's frame holds its calls"
# by calls: getppid's 1000 of the total, as the widths say
"$KANALYZE" --flame=calls.svg --flame-weight=calls shim 2>/dev/null || fail "--flame-weight=calls"
w=$(grep -o '<g class="f" data-x="[^"]*" data-w="[^"]*" data-d="2"><title>getppid (' calls.svg |
	sed 's/.*data-w="\([^"]*\)".*/\1/' | awk '{ s += $1 } END { printf "%.6f", s }')
expect_eq "width of getppid's frames by calls" "$(awk -v t="$total" 'BEGIN { printf "%.6f", 1000 / t }')" "$w"
rc=0
"$KANALYZE" --flame=x.svg --flame-weight=size shim 2> bad.err || rc=$?
expect_eq "bad --flame-weight: exit" 2 "$rc"
grep -q "^kanalyze: --flame-weight is time or calls, not 'size'" bad.err || fail "message: $(cat bad.err)"

# kbpf-trace's whole stacks
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$BUILD/kbpf-trace" --stacks -o bpf -- "$BUILD/tests/bpf_stacks" 100 > /dev/null ||
		fail "kbpf-trace --stacks"
	"$KANALYZE" --flame=bpf.svg bpf 2>/dev/null || fail "kanalyze --flame (bpf)"
	t=$(title bpf.svg 'bpf_stacks`reader_function')
	[[ $t == *"(100 calls, "* ]] || fail "reader_function: $t"
	echo "ok: kbpf-trace: reader_function's frame holds its 100 reads"
fi

# in Chromium: search and zoom from the link, no script error
dom=$(browse "file://$PWD/calls.svg?s=getppid" p1)
! grep -q CONSOLE p1.log || fail "console: $(grep CONSOLE p1.log)"
grep -q 'data-ready="[1-9]' <<<"$dom" || fail "the script did not run: $(head -c 300 <<<"$dom")"
expect_eq "?s=getppid: the matched share" \
	"$(awk -v t="$total" 'BEGIN { printf "%.1f", 100000 / t }')" \
	"$(grep -o 'data-matched="[^"]*"' <<<"$dom" | cut -d'"' -f2)"
grep -q 'id="kf-matched"[^>]*>Matched: ' <<<"$dom" || fail "no Matched line"
[ "$(grep -o 'fill="rgb(230,0,230)"' <<<"$dom" | wc -l)" -ge 1 ] || fail "no frame marked"
frame='mangled_callers`demo::caller'
dom=$(browse "file://$PWD/calls.svg?z=$frame" p2)
! grep -q CONSOLE p2.log || fail "console: $(grep CONSOLE p2.log)"
grep -q "data-zoomed=\"$frame\"" <<<"$dom" || fail "?z did not zoom"
zoomed=$(grep -o "<g class=\"f\"[^>]*><title>$frame ([^<]*</title><rect[^>]*>" <<<"$dom")
grep -q 'width="1180.0"' <<<"$zoomed" || fail "the zoomed frame is not full width: $zoomed"
hidden=$(grep -o "<g class=\"f\"[^>]*style=\"display: none;\"[^>]*><title>mangled_callers\`demo::caller_v0 (" <<<"$dom" | wc -l)
expect_eq "a sibling hidden by the zoom" 1 "$hidden"
echo "ok: ?z=$frame zooms it to the full width"

# the HTML report holds the graph, and it runs there too
"$KANALYZE" --html=report.html shim
dom=$(browse "file://$PWD/report.html?s=getppid" p3)
! grep -q CONSOLE p3.log || fail "console: $(grep CONSOLE p3.log)"
grep -q '<div id="errors"></div>' <<<"$dom" || fail "page errors"
grep -q '<svg id="kprof-flame"[^>]*data-ready="[1-9]' <<<"$dom" || fail "no flame graph in the report"
grep -q 'data-matched="[1-9]' <<<"$dom" || fail "search in the report"
echo "ok: the report's flame graph runs in $("$CHROMIUM" --version 2>/dev/null | head -n 1)"
# nothing passes the filters: no file, exit 1, as --timeline
rc=0
"$KANALYZE" --flame=none.svg -e mount shim 2> none.err || rc=$?
expect_eq "no call passes: exit" 1 "$rc"
[ ! -e none.svg ] || fail "an empty flame graph was written"
expect_eq "no call passes: message" "kanalyze: --flame: no call passes the filters; none.svg not written" "$(cat none.err)"
