# SPDX-License-Identifier: MIT
# tier: check
# Every entry point that parses input rejects bad input with a message
# naming the tool and a non-zero status, never a signal or a sanitizer
# report: kanalyze on damaged, foreign and missing traces and bad flags
# (1: nothing usable, 2: a usage error, 5: profile of what was readable
# before the damage),
# krunner's options and result files, kbpf-trace's options (before any
# privilege is needed). krunner's suite errors: t_runner_errors.sh.
. "$KPROF_ROOT/tests/lib.sh"
head -c 3000 /dev/urandom > random.msgpack
echo '{"not": "msgpack"}' > json.msgpack
printf '\x1f\x8b\x08\x00garbage' > corrupt.msgpack.gz
printf '\x81\xa4type\xa6header\xc1' > bad-header.msgpack
printf '\xdf\xff\xff\xff\xff' > huge-map.msgpack   # a map claiming 2^32-1 entries
printf '\xdd\x7f\xff\xff\xff\xc0' > huge-array.msgpack
mkdir empty-dir
# check CODE TOOL-PREFIX CMD...: exit CODE, stderr starts with the tool's name
check() {
	local code=$1 prefix=$2 rc=0
	shift 2
	"$@" > out.txt 2> err.txt || rc=$?
	[ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code: $(head -c 300 err.txt)"
	grep -q "^$prefix: " err.txt || fail "$*: no '$prefix: ...' message: $(head -c 300 err.txt)"
	! grep -q -e Sanitizer -e 'runtime error' err.txt || fail "$*: sanitizer report: $(head -c 300 err.txt)"
	echo "ok: $* -> $rc: $(head -n 1 err.txt)"
}
K=$KANALYZE
check 5 kanalyze "$K" random.msgpack
check 5 kanalyze "$K" json.msgpack
check 5 kanalyze "$K" corrupt.msgpack.gz
check 5 kanalyze "$K" bad-header.msgpack
check 5 kanalyze "$K" huge-map.msgpack
check 5 kanalyze "$K" huge-array.msgpack
check 5 kanalyze "$K" --format=json random.msgpack
check 1 kanalyze "$K" empty-dir
check 1 kanalyze "$K" no-such-file
check 2 kanalyze "$K"
check 2 kanalyze "$K" --format=xml random.msgpack
check 2 kanalyze "$K" --top=abc random.msgpack
check 2 kanalyze "$K" --by=nothing random.msgpack
check 2 kanalyze "$K" --no-such-option
if [ -x "$BUILD/krunner" ]; then
	R=$BUILD/krunner
	check 2 krunner "$R" --rounds=abc --suite=syscall-io --out="$PWD/r"
	check 2 krunner "$R" --rounds=-3 --suite=syscall-io --out="$PWD/r"
	check 2 krunner "$R" --suite= --out="$PWD/r"
	check 2 krunner "$R" compare
	check 1 krunner "$R" compare random.msgpack random.msgpack
	check 1 krunner "$R" compare json.msgpack json.msgpack
	[ ! -e r ] || fail "krunner wrote results on bad input: $(ls r)"
fi
if [ -x "$BUILD/kbpf-trace" ]; then
	B=$BUILD/kbpf-trace
	check 2 kbpf-trace "$B" -p abc
	check 2 kbpf-trace "$B" -p 0
	check 2 kbpf-trace "$B" -d -5 -p 1
	check 2 kbpf-trace "$B"
fi
