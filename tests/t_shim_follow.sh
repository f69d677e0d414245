# SPDX-License-Identifier: MIT
# tier: check
# Children started with an environment of their own (posix_spawn with
# LANG and PATH only; fork + chdir + execve with A=1 only) are still traced,
# all into the one trace directory; KPROF_FOLLOW=0 gives them exactly the
# environment they were given, and they are not traced.
. "$KPROF_ROOT/tests/lib.sh"
prog=$BUILD/tests/spawn_env
LD_PRELOAD=$SHIM KPROF_OUT=trace "$prog" > follow.out
json=$(profile_json trace)
# spawn_env, env (posix_spawn), fork child, sh after exec, and what sh ran
for exe in /usr/bin/env /usr/bin/dash /usr/bin/sort; do
	n=$(jq --arg e "$exe" '[.processes[] | select(.exe == $e)] | length' <<<"$json")
	[ "$n" -ge 1 ] || fail "no stream of $exe: $(jq -c '[.processes[].exe]' <<<"$json")"
done
echo "ok: $(jq '.processes | length' <<<"$json") streams, children followed"
grep -qx "KPROF_OUT=$PWD/trace" follow.out || fail "child did not get the absolute trace path: $(cat follow.out)"
[ ! -e /trace ] || fail "a child wrote into its own working directory"

rm -rf trace
LD_PRELOAD=$SHIM KPROF_OUT=trace KPROF_FOLLOW=0 "$prog" > nofollow.out
"$prog" > plain.out
cmp plain.out nofollow.out || { diff plain.out nofollow.out; fail "KPROF_FOLLOW=0 changed the children's environment"; }
expect_eq "streams with KPROF_FOLLOW=0 (parent and its fork child)" 2 "$(profile_json trace | jq '.processes | length')"
