# SPDX-License-Identifier: MIT
# A site cache the shim cannot use is said, and a fallback is used. As
# nobody with HOME=/root (root's: nobody cannot make ~/.cache there) each
# process used to run the helper over every library again, silently
# (1-1.5 s more per process start for a large program). Now KPROF_DEBUG=1
# says it once per process, the header has site_cache_note (kanalyze
# shows it), the cache goes to $TMPDIR/kprof-UID/sites (0700), and a
# second run finds it there: 0 helper runs. A fallback directory someone
# else made, or a link planted in its place, is refused.
. "$KPROF_ROOT/tests/rewrite_lib.sh"
[ "$(uname -m)" = x86_64 ] || skip "patch mode is x86_64 only"
[ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody"
[ "$(cat /proc/sys/vm/mmap_min_addr)" != 0 ] || skip "vm.mmap_min_addr is 0: anyone may map the lowest page"
command -v setpriv >/dev/null || fail "setpriv missing"
[ "$(stat -c %U /root)" = root ] || skip "/root is not root's"
as_nobody_setup
mkdir -m 1777 tmp out
uid=$(id -u nobody)
run() { # run NAME TMPDIR: /bin/true as nobody, its debug lines in NAME.err
	"${AS_NOBODY[@]}" env -i HOME=/root TMPDIR="$2" PATH=/usr/bin:/bin KPROF_DEBUG=1 \
		LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/out/$1" /bin/true 2> "$1.err" ||
		fail "$1: /bin/true failed: $(cat "$1.err")"
	cat "$1.err"
}
helper_runs() { sed -n 's/^kprof: patch mode: .*, \([0-9]*\) helper runs;.*/\1/p' "$1.err"; }

note="cannot use /root/.cache/kprof/sites (/root belongs to uid 0, not $uid): using $PWD/tmp/kprof-$uid/sites instead"
run first "$PWD/tmp"
expect_eq "said once with KPROF_DEBUG=1" 1 "$(grep -c "^kprof: $note$" first.err)"
[ "$(helper_runs first)" -gt 0 ] || fail "the first run ran no helper: $(cat first.err)"
expect_eq "fallback owner and mode" "nobody 700" "$(stat -c '%U %a' "tmp/kprof-$uid/sites")"
expect_eq "fallback parent mode" "700" "$(stat -c '%a' "tmp/kprof-$uid")"
[ ! -e /root/.cache/kprof/sites ] || [ "$(stat -c %U /root/.cache/kprof/sites)" = root ] ||
	fail "a cache made under /root"
run second "$PWD/tmp"
expect_eq "second run: helper runs" 0 "$(helper_runs second)"
"$KANALYZE" out/second > r.txt
expect_eq "kanalyze shows the note" "site cache: $note" "$(grep '^site cache:' r.txt)"
expect_eq "JSON site_cache_note" "$note" \
	"$("$KANALYZE" --format=json out/second | jq -r '.processes[0].site_cache_note')"

# someone else's directory in the fallback's place: refused, said
mkdir -m 1777 tmp2 && mkdir -m 777 "tmp2/kprof-$uid"
run planted "$PWD/tmp2"
grep -q "^kprof: cannot use /root/.cache/kprof/sites (.*); $PWD/tmp2/kprof-$uid is not a directory of ours (0700) either: no site cache" planted.err ||
	fail "a planted directory was not refused"
expect_eq "nothing written into it" 0 "$(ls -A "tmp2/kprof-$uid" | wc -l)"
# and a link to a directory of nobody's own
mkdir -m 1777 tmp3 && mkdir -m 700 elsewhere && chown nobody elsewhere
ln -s "$PWD/elsewhere" "tmp3/kprof-$uid"
run linked "$PWD/tmp3"
grep -q "$PWD/tmp3/kprof-$uid is not a directory of ours (0700) either" linked.err ||
	fail "a planted link was followed"
expect_eq "nothing written through the link" 0 "$(ls -A elsewhere | wc -l)"

# a usable home: no note
"${AS_NOBODY[@]}" env -i HOME="$PWD/home" PATH=/usr/bin:/bin KPROF_DEBUG=1 \
	LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/out/home" /bin/true 2> home.err
grep -q "cannot use" home.err && fail "a note with a usable home: $(cat home.err)"
expect_eq "no note in the header" null \
	"$("$KANALYZE" --format=json out/home | jq -r '.processes[0].site_cache_note')"
