# SPDX-License-Identifier: MIT
# kanalyze --pprof: the profile as pprof's profile.proto, read by Go's own
# pprof (Debian's golang-go, which make test installs). `go tool pprof
# -top` prints, for every syscall (the leaf `syscall:NAME`), exactly the
# calls and nanoseconds of kanalyze's profile, and nothing else has calls
# of its own: for a tree of processes under the shim, and for kbpf-trace
# with whole stacks. The labels pick one process; the filters apply; a
# file that cannot be made is said, with exit 1.
. "$KPROF_ROOT/tests/lib.sh"
command -v go >/dev/null || fail "no go (Debian's golang-go; make test installs it)"
export HOME=$PWD GOCACHE=$PWD/gocache PPROF_TMPDIR=$PWD

# top FILE INDEX [UNIT]: "NAME VALUE" of every node pprof -top shows with
# a flat value, sorted (syscall leaves without their prefix)
top() {
	go tool pprof -top -nodecount=0 -nodefraction=0 -edgefraction=0 -sample_index="$2" \
		${3:+-unit=$3} "$1" > "top-$2.txt" 2> "top-$2.err" ||
		fail "go tool pprof -top $1: $(cat "top-$2.err")"
	awk '/^ *flat/ {on = 1; next} on && $1 != "0" {
		v = $1; sub(/ns$/, "", v); n = $6; for (i = 7; i <= NF; i++) n = n " " $i
		sub(/^syscall:/, "", n); print n, v }' "top-$2.txt" | sort
}

# check NAME TRACE PPROF: both sample types against kanalyze's JSON
check() {
	local json
	json=$(profile_json "$2")
	expect_eq "$1: calls per syscall" \
		"$(jq -r '.syscalls[] | select(.count > 0) | "\(.name) \(.count)"' <<<"$json" | sort)" \
		"$(top "$3" calls)"
	expect_eq "$1: nanoseconds per syscall" \
		"$(jq -r '.syscalls[] | select(.time_ns > 0) | "\(.name) \(.time_ns)"' <<<"$json" | sort)" \
		"$(top "$3" time ns)"
	grep -q "^Type: time$" <(go tool pprof -top "$3" 2>/dev/null) ||
		fail "$1: the default sample type is not time"
}

# ---- the shim: a tree of processes, each call at its site ----
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/shim sh -c \
	"$BUILD/tests/getppid_loop 1000 > /dev/null; ls / > /dev/null; /bin/true" ||
	fail "the workload failed"
"$KANALYZE" --pprof=shim.pb.gz shim 2> shim.err || fail "kanalyze --pprof: $(cat shim.err)"
grep -qx "kanalyze: shim.pb.gz: [0-9]* samples" shim.err || fail "message: $(cat shim.err)"
gzip -t shim.pb.gz || fail "shim.pb.gz is not gzip"
check shim shim shim.pb.gz
# the site of the 1000 calls: the program's main, below the leaf
go tool pprof -traces -sample_index=calls shim.pb.gz 2>/dev/null > traces.txt
awk '$1 == 1000 && $2 == "syscall:getppid" {getline; print $1}' traces.txt | grep >/dev/null -x main || fail "no trace main -> syscall:getppid with 1000 calls: $(head -n 30 traces.txt)"
echo "ok: 1000 getppid under main"
# labels: one process by name, one by pid
pid=$(profile_json shim | jq -r '.processes[] | select((.exe // "") | test("getppid_loop")) | .pid')
expect_eq "tagfocus process=getppid_loop: getppid" "getppid 1000" \
	"$(go tool pprof -top -nodefraction=0 -sample_index=calls -tagfocus=process=getppid_loop shim.pb.gz 2>/dev/null |
		awk '$6 == "syscall:getppid" {print "getppid", $1}')"
expect_eq "tagfocus pid=$pid: calls" \
	"$(profile_json --pid="$pid" shim | jq .total.count)" \
	"$(go tool pprof -top -nodefraction=0 -sample_index=calls -tagfocus=pid="$pid" shim.pb.gz 2>/dev/null |
		sed -n 's/^Showing nodes accounting for \([0-9]*\), .*/\1/p')"
# the filters apply before the export
"$KANALYZE" --pprof=only.pb.gz -e getppid shim 2>/dev/null || fail "kanalyze --pprof -e"
expect_eq "-e getppid: the only syscall" "getppid $(profile_json -e getppid shim | jq .total.count)" \
	"$(top only.pb.gz calls)"

# ---- kbpf-trace with whole stacks ----
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
	"$BUILD/kbpf-trace" --stacks -o bpf -- "$BUILD/tests/getppid_loop" 500 > /dev/null ||
		fail "kbpf-trace --stacks failed"
	"$KANALYZE" --pprof=bpf.pb.gz bpf 2> bpf.err || fail "kanalyze --pprof (bpf): $(cat bpf.err)"
	check kbpf-trace bpf bpf.pb.gz
	# the stack: main below getppid's leaf (libc's wrapper between them)
	go tool pprof -traces -sample_index=calls bpf.pb.gz 2>/dev/null > bpf-traces.txt
	awk '$1 == 500 && $2 == "syscall:getppid" {on = 1; next} on && /^-/ {exit}
		on {print $1}' bpf-traces.txt | grep >/dev/null -x main ||
		fail "kbpf-trace: no stack from main to 500 getppid: $(head -n 40 bpf-traces.txt)"
	echo "ok: kbpf-trace: getppid's 500 calls in one stack that reaches main"
else
	echo "kbpf-trace part not run: it needs root and a kernel with BTF"
fi

# ---- a file that cannot be made ----
rc=0
"$KANALYZE" --pprof=no/such/dir/p.pb.gz shim 2> bad.err > /dev/null || rc=$?
expect_eq "unwritable path: exit" 1 "$rc"
expect_eq "unwritable path: message" \
	"kanalyze: cannot create no/such/dir/p.pb.gz: No such file or directory" "$(cat bad.err)"
# nothing passes the filters: no file, exit 1, as --timeline
rc=0
"$KANALYZE" --pprof=none.pb.gz -e mount shim 2> none.err || rc=$?
expect_eq "no call passes: exit" 1 "$rc"
[ ! -e none.pb.gz ] || fail "an empty profile was written"
expect_eq "no call passes: message" "kanalyze: --pprof: no call passes the filters; none.pb.gz not written" "$(cat none.err)"
