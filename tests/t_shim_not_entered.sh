# SPDX-License-Identifier: MIT
# Processes LD_PRELOAD cannot enter are named, with what to do instead.
# A static Go daemon (CGO_ENABLED=0) that spawns /bin/true twice: its
# children are traced, and their headers name it (untraced_parent) as the
# root of the run that was not traced; the same program started by a
# traced shell is named from the shell's fork or exec record
# (not_entered). A setuid program run by a traced shell (root). And a cgo
# Go program in symbol mode: kanalyze says what that mode cannot see.
. "$KPROF_ROOT/tests/lib.sh"
command -v go >/dev/null || skip "go not installed (apt-get install golang-go)"
command -v jq >/dev/null || fail "jq is needed"
export GOCACHE=$TMPDIR/gocache GOPATH=$TMPDIR/gopath GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local
src=$KPROF_ROOT/tests/go/kspawn
(cd "$src" && CGO_ENABLED=0 go build -o "$TMPDIR/kspawn" .) || fail "go build (static) failed"
case $(file -b "$TMPDIR/kspawn") in *statically*) ;; *) fail "kspawn is not static";; esac

# the root of the run not traced: its children say so
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t1 "$TMPDIR/kspawn" /bin/true /bin/true > k1.out || rc=$?
expect_eq "static daemon: status" 0 "$rc"
pid=$(awk '/^kspawn pid/ { print $3 }' k1.out)
expect_eq "trace files (the two children)" 2 "$(ls t1 | grep -c '^true\.')"
rc=0; "$KANALYZE" t1 > r1.txt 2> r1.err || rc=$?
cat r1.txt r1.err
expect_eq "kanalyze status (losses are warnings)" 0 "$rc"
expect_eq "coverage line" "coverage: incomplete: 1 process of the run not traced (named below)" \
	"$(grep '^coverage:' r1.txt)"
grep -q "^coverage of the traced processes: complete after start-up" r1.txt ||
	fail "no coverage line for the traced processes"
grep -Fq "  pid $pid ($TMPDIR/kspawn), the parent of pid " r1.txt || fail "the root is not named"
grep -Fq "was not traced: static binary, LD_PRELOAD cannot enter it; trace it with kbpf-trace -- CMD (or kbpf-trace -p $pid while it runs)" r1.txt ||
	fail "no reason or advice"
expect_eq "named once" 1 "$(grep -c "pid $pid (" r1.txt)"
grep -q "warning: the inputs hold" r1.err && fail "its children counted as two runs"
rc=0; "$KANALYZE" --strict t1 > /dev/null 2> r1s.err || rc=$?
expect_eq "--strict status" 3 "$rc"
grep -q "1 untraced parents" r1s.err || fail "--strict does not say why: $(cat r1s.err)"
json=$(profile_json t1)
expect_eq "JSON not_traced" "[{\"pid\":$pid,\"why\":\"static\",\"seen\":\"parent\"}]" \
	"$(jq -c '[.not_traced[] | {pid, why, seen}]' <<<"$json")"

# started by a traced shell: named from the shell's own records
for mode in symbols auto; do
	rc=0; KPROF_HOOK=$mode LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t2-$mode \
		sh -c '"$1" /bin/true; /bin/true' sh "$TMPDIR/kspawn" > k2.out || rc=$?
	expect_eq "$mode: status" 0 "$rc"
	pid=$(awk '/^kspawn pid/ { print $3 }' k2.out)
	json=$(profile_json t2-$mode 2> r2.err)
	cat r2.err
	expect_eq "$mode: not_traced" "[{\"pid\":$pid,\"why\":\"static\"}]" \
		"$(jq -c '[.not_traced[] | {pid, why}]' <<<"$json")"
	"$KANALYZE" t2-$mode > r2.txt 2> /dev/null
	grep -q "^coverage: incomplete: 1 process of the run not traced" r2.txt ||
		fail "$mode: coverage said complete: $(grep coverage r2.txt)"
	grep -q "warning: the inputs hold" r2.err && fail "$mode: counted as two runs"
done

# a traced run without such a process stays complete
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t0 sh -c '/bin/true; /bin/true'
expect_eq "control: not_traced" 0 "$(profile_json t0 | jq '.not_traced | length')"
"$KANALYZE" t0 | grep >/dev/null '^coverage: complete after start-up' || fail "control: not complete"

# symbol mode over a cgo Go program: what it cannot see
(cd "$src" && CGO_ENABLED=1 go build -o "$TMPDIR/kspawn-cgo" .) || fail "go build (cgo) failed"
KPROF_HOOK=symbols LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t4 "$TMPDIR/kspawn-cgo" /bin/true > k4.out
pid=$(awk '/^kspawn pid/ { print $3 }' k4.out)
"$KANALYZE" t4 > r4.txt
cat r4.txt
expect_eq "Go note" "coverage: symbol mode sees only libc calls; pid $pid (kspawn-cgo) is a Go program whose runtime makes its syscalls directly: use KPROF_HOOK=rewrite or patch (or auto) or kbpf-trace" \
	"$(grep 'Go program' r4.txt)"
expect_eq "JSON runtime" go "$(profile_json t4 | jq -r ".processes[] | select(.pid == $pid) | .runtime")"
expect_eq "not a Go program: runtime" null "$(profile_json t4 | jq -r ".processes[] | select(.pid != $pid) | .runtime")"
LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t5 "$TMPDIR/kspawn-cgo" > /dev/null
"$KANALYZE" t5 | grep >/dev/null 'Go program' && fail "the Go note without symbol mode"

# a setuid program run by a traced shell (as root: to another user)
[ "$(id -u)" = 0 ] || skip "setuid part needs root (chown)"
case $(findmnt -no OPTIONS --target .) in *nosuid*) skip "test directory is mounted nosuid";; esac
chmod 0755 .
cp "$BUILD/tests/getppid_loop" suid; chown 65534:65534 suid; chmod 4755 suid
rc=0; LD_PRELOAD=$SHIM KPROF_OUT=$PWD/t3 sh -c './suid 10; ./suid 10 > /dev/null' > /dev/null || rc=$?
expect_eq "setuid: status" 0 "$rc"
json=$(profile_json t3 2> r3.err)
cat r3.err
expect_eq "setuid: not_traced" '["setuid","setuid"]' "$(jq -c '[.not_traced[].why]' <<<"$json")"
"$KANALYZE" t3 | grep -Fq "(./suid), started by pid " || fail "setuid: not named"
