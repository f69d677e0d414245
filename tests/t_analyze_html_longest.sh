#!/bin/bash
# SPDX-License-Identifier: MIT
# kanalyze --html keeps, per thread, only the calls its timeline can draw
# (the 4000 longest), not every event: the calls drawn are exactly the
# longest of the trace (checked against every event, from --timeline with
# no size limit), the counts and span in the timeline's caption are those
# of all the calls, and the report's memory does not grow with the
# trace's events (2 M events held in full took 193 MB, against 3 MB for
# the profile alone; now 5 MB).
source "$KPROF_ROOT/tests/lib.sh"
# check_drawn HTML JSON: the report's timeline draws exactly the 4,000
# longest calls of the 24 busiest threads of every event (JSON, from
# --timeline without its size limit), and its caption counts them all
check_drawn() {
	python3 - "$1" "$2" <<'PY'
import collections, json, re, sys
html = open(sys.argv[1]).read()
tl = html[html.index('id="timeline"'):]
tl = tl[:tl.index('</svg>')]
drawn = sorted(float(d) for d in re.findall(r'<title>[a-z0-9_]+: ([0-9.]+) ms at', tl))
lanes = collections.defaultdict(list)
for e in json.load(open(sys.argv[2]))['traceEvents']:
    if e['ph'] == 'X':
        lanes[(e['pid'], e['tid'])].append(round(e['dur'] * 1000))
busiest = sorted(lanes.values(), key=sum, reverse=True)[:24]
durs = sorted((d for l in busiest for d in l), reverse=True)[:4000]
want = sorted(float('%.3f' % (d / 1e6)) for d in durs)
if drawn != want:
    sys.exit('FAIL: %d drawn, not the %d longest of the 24 busiest of %d threads: '
             '%s ... against %s ...' % (len(drawn), len(want), len(lanes), drawn[-3:],
                                        want[-3:]))
calls = sum(len(l) for l in lanes.values())
m = re.search(r'<p>([0-9]+) calls of ([0-9]+) threads', html)
if not m or int(m.group(1)) != calls:
    sys.exit('FAIL: caption %s, want %d calls' % (m and m.group(0), calls))
print('ok: the %d longest calls of the 24 busiest of %d threads drawn, of %d calls'
      % (len(drawn), len(lanes), calls))
PY
}
KPROF_EVENTS=1 KPROF_GZIP=0 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/trace \
	"$BUILD/tests/threads_calls" 4 250000 > /dev/null
"$KANALYZE" --html=report.html trace
"$KANALYZE" --timeline=all.json --timeline-max=0 trace 2> /dev/null
check_drawn report.html all.json
# peak memory, in KiB, of kanalyze with ARGS; a sanitizer build holds
# what is freed in its quarantine, which would count as kept: none here
if ldd "$KANALYZE" | grep >/dev/null libasan; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
fi
peak_kb() {
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$KANALYZE" "$@"
}
# one thread, 1 M calls: every one an event (56 MB held in full)
KPROF_EVENTS=1 KPROF_GZIP=0 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/one \
	"$BUILD/programs/overhead" --workload=getppid --calls=1000000 > /dev/null
events=$("$KANALYZE" --format=json one | jq '.syscalls[] | select(.name == "getppid") | .count')
plain=$(peak_kb one)
html=$(peak_kb --html=one.html one)
echo "peak memory, $events getppid events: profile $plain KiB, with --html $html KiB"
[ $((html - plain)) -lt 20000 ] ||
	fail "--html took $((html - plain)) KiB more than the profile: it holds the events"
"$KANALYZE" --html=again.html trace
cmp -s report.html again.html || fail "two reports of one trace differ"
echo "ok: --html took $((html - plain)) KiB beside the profile's $plain KiB"

# 400 processes of a thread making 2,000 calls each: the threads of ended
# processes below the 24 busiest let their longest calls go while the
# trace is read (they can no longer be drawn), so memory does not grow
# with the processes either (500 such processes took 63 MB more than the
# profile when every thread kept its 4,000 longest; now 20 MB); the calls
# drawn are still exactly the longest of the 24 busiest threads
for i in $(seq 1 400); do
	KPROF_EVENTS=1 KPROF_GZIP=0 LD_PRELOAD=$SHIM KPROF_OUT=$PWD/many \
		"$BUILD/tests/threads_calls" 1 2000 > /dev/null
done
"$KANALYZE" --html=many.html many 2> /dev/null
"$KANALYZE" --timeline=many.json --timeline-max=0 many 2> /dev/null
check_drawn many.html many.json
plain=$(peak_kb many)
html=$(peak_kb --html=many2.html many)
echo "peak memory, 400 processes: profile $plain KiB, with --html $html KiB"
[ $((html - plain)) -lt 40000 ] ||
	fail "--html took $((html - plain)) KiB more than the profile for 400 processes"
cmp -s many.html many2.html || fail "two reports of one trace differ"
echo "ok: --html took $((html - plain)) KiB beside the profile's $plain KiB"
