# SPDX-License-Identifier: MIT
# tier: check
# make install DESTDIR=... PREFIX=/usr gives tools that work from where
# they are installed, none of them reaching back into the build: kprof
# finds the shim in lib/kprof and counts exactly, the shim finds its
# helper beside it (patch mode, no privilege needed), krunner finds its
# benchmark programs and their inputs and writes results to the working
# directory; the man pages and completions are in place.
. "$KPROF_ROOT/tests/lib.sh"
make -s -C "$KPROF_ROOT" BUILD="$BUILD" install DESTDIR="$PWD/root" PREFIX=/usr > make.log 2>&1 ||
	fail "make install: $(tail -n 5 make.log)"
r=$PWD/root/usr
for f in bin/kprof bin/kanalyze bin/krunner lib/kprof/libkprof.so lib/kprof/kprof-sites \
	lib/kprof/programs/syscall_io share/kprof/programs/erlang/ring.erl \
	share/man/man1/kprof.1 share/man/man1/kanalyze.1 share/man/man1/kbpf-trace.1 \
	share/man/man1/krunner.1 share/man/man7/libkprof.7 \
	share/bash-completion/completions/kprof; do
	[ -e "$r/$f" ] || fail "not installed: $f"
done
echo "ok: installed in $r"
# the build directory out of reach: the installed tools run from a copy
cp "$BUILD/tests/getppid_loop" .
export XDG_CACHE_HOME=$PWD/cache # an empty site cache: the helper runs
mkdir -m 700 cache
# which shim and helper ran: the installed ones (strace sees the paths;
# LeakSanitizer refuses to run under ptrace in a sanitized build)
ASAN_OPTIONS=detect_leaks=0 KPROF_HOOK=patch strace -f -qq -e trace=openat,execve -o st.txt \
	"$r/bin/kprof" -- ./getppid_loop 10 > kprof-strace.txt 2>&1 ||
	fail "installed kprof under strace: $(tail -n 3 kprof-strace.txt)"
grep -q "openat(.*\"$r/lib/kprof/libkprof.so\"" st.txt || fail "the installed shim was not loaded"
! grep -q "$BUILD/libkprof.so" st.txt || fail "the build's shim was loaded"
# the helper runs untraced (CLONE_UNTRACED): its plans in the empty cache
# say that it ran, the shim beside it being the installed one
ls cache/kprof/sites/*.plan* > /dev/null 2>&1 || fail "no plan in the site cache: the helper did not run"
echo "ok: the installed shim and its helper ran"
KPROF_HOOK=patch "$r/bin/kprof" -o t -- ./getppid_loop 700 > /dev/null 2> kprof.txt ||
	fail "installed kprof: $(cat kprof.txt)"
expect_eq "installed kprof: getppid" 700 "$(awk '$NF == "getppid" { print $4 }' kprof.txt)"
expect_eq "installed kanalyze reads it" 700 \
	"$(syscall_field "$("$r/bin/kanalyze" --format=json t)" getppid count)"
"$r/bin/krunner" list > list.txt || fail "installed krunner list"
grep -q '^syscall-io' list.txt || fail "no syscall-io suite: $(head list.txt)"
(cd "$PWD" && "$r/bin/krunner" run --suite=process-lifecycle --rounds=1 > run.txt 2>&1) ||
	fail "installed krunner run: $(tail -n 5 run.txt)"
ls results/*-process-lifecycle.json > /dev/null || fail "no result in the working directory"
echo "ok: installed krunner ran a suite: $(ls results)"
