# SPDX-License-Identifier: MIT
# slow: a minute or more
# Chromium headless under the shim (tried as a new user would), as root
# with --no-sandbox and as nobody with its sandbox, in every hook mode
# that runs there: the DOM it dumps is the plain run's. Three causes were
# found and fixed:
#  - patch mode: a clone3 child started through a jump trampoline resumed
#    8 bytes too far (the dispatch trampolines' range was taken for theirs):
#    the browser died of SIGSEGV;
#  - the sandbox's chroot helper is a CLONE_VM|CLONE_VFORK|CLONE_SETTLS
#    child on a zeroed TLS: the shim attached a thread block there
#    (pthread_setspecific through a null TCB) and the zygote died;
#  - a renderer's seccomp filter killed it for the shim's own calls
#    (prctl PR_GET_SECCOMP, process_vm_readv): the shim now goes passive
#    when a filter goes in, and the stream says so in a `drop` record.
# The site cache is kept between runs (a cold sweep and plan of chromium
# take minutes); a run takes 5-20 s with it warm (48 s for the whole test here).
. "$KPROF_ROOT/tests/lib.sh"
command -v chromium >/dev/null || fail "chromium missing (make deps installs it)"
[ "$(id -u)" -eq 0 ] || skip "needs root (--no-sandbox as root, the sandbox as nobody)"
chmod 755 .
cat > page.html <<'HTML'
<html><body><p id=x>hello</p><script>document.getElementById('x').textContent='from script '+(6*7);</script></body></html>
HTML
chmod 644 page.html
url=file://$PWD/page.html
modes=(symbols)
if [ "$(uname -m)" = x86_64 ]; then modes+=(patch auto); fi
root_modes=("${modes[@]}")
[ "$(uname -m)" = x86_64 ] && root_modes+=(rewrite)
# run NAME CMD...: CMD (chromium's DOM on stdout) into NAME.txt; its exit status into NAME.rc
run() {
	local name=$1 rc=0
	shift
	timeout -s KILL 180 "$@" > "$name.txt" 2> "$name.err" || rc=$?
	echo "$rc" > "$name.rc"
}
chrome=(chromium --headless --disable-gpu --dump-dom "$url")
check() { # NAME PLAIN: same DOM and status as plain; a trace was written
	expect_eq "$1: exit status" "$(cat "$2.rc")" "$(cat "$1.rc")"
	cmp "$2.txt" "$1.txt" || fail "$1: the DOM differs: $(grep -v dbus "$1.err" | tail -3)"
	echo "ok: $1: the DOM of a plain run"
	ls "$1.trace"/chromium.* > /dev/null || fail "$1: no trace of chromium"
}

# as root, without its sandbox (which refuses root)
run root-plain "${chrome[@]}" --no-sandbox
grep -q 'from script 42' root-plain.txt || fail "plain chromium as root: $(tail -3 root-plain.err)"
for m in "${root_modes[@]}"; do
	run "root-$m" env KPROF_HOOK=$m LD_PRELOAD="$SHIM" KPROF_OUT="$PWD/root-$m.trace" \
		"${chrome[@]}" --no-sandbox
	check "root-$m" root-plain
done

# as nobody, with its sandbox: user namespaces (Debian's chromium uses them
# when it can, else chrome-sandbox, which Debian does not install)
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
"${nobody[@]}" unshare -U true 2>/dev/null || skip "as nobody: no user namespaces here"
mkdir -p home/tmp
chown -R nobody:nogroup home
# a site cache that outlives the test, seeded with root's, which the runs
# above filled (a cold sweep and plan of chromium take minutes)
cache=$BUILD/nobody-cache
mkdir -p "$cache/kprof/sites"
root_sites=${XDG_CACHE_HOME:-$HOME/.cache}/kprof/sites
if [ -d "$root_sites" ]; then cp -a "$root_sites/." "$cache/kprof/sites/"; fi
chown -R nobody:nogroup "$cache"
chmod -R go-rwx "$cache"
as_nobody=("${nobody[@]}" env HOME="$PWD/home" TMPDIR="$PWD/home/tmp"
	   XDG_CONFIG_HOME="$PWD/home/.config" XDG_CACHE_HOME="$cache")
run nobody-plain "${as_nobody[@]}" "${chrome[@]}"
grep -q 'from script 42' nobody-plain.txt || fail "plain chromium as nobody: $(tail -3 nobody-plain.err)"
for m in "${modes[@]}"; do
	mkdir -p "nobody-$m.trace"
	chown nobody:nogroup "nobody-$m.trace"
	run "nobody-$m" "${as_nobody[@]}" KPROF_HOOK=$m LD_PRELOAD="$SHIM" \
		KPROF_OUT="$PWD/nobody-$m.trace" "${chrome[@]}"
	check "nobody-$m" nobody-plain
	# the renderers' filter: their streams end passive, and say so
	reasons=$("$KANALYZE" --format=json "nobody-$m.trace" 2>/dev/null | jq -r '.drops.reasons[]')
	grep -q 'seccomp filter went in' <<<"$reasons" ||
		fail "nobody-$m: no stream says that the shim went passive: $reasons"
	echo "ok: nobody-$m: a stream says the shim went passive under the filter"
done
