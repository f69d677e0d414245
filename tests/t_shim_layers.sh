# SPDX-License-Identifier: MIT
# tier: check
# The shim's layers (SHIM_LAYERS in the Makefile, docs/ARCHITECTURE.md)
# call only the layers below them: every kp_ symbol an object of a layer
# uses is defined in that layer or one below it. Read from the objects
# themselves (nm), so that a call hidden behind a macro or an inline
# function counts too. The check is shown to fail: a symbol of the top
# layer is looked for among the bottom layer's definitions.
. "$KPROF_ROOT/tests/lib.sh"
layers=$(sed -n 's/^SHIM_LAYERS := //p' "$KPROF_ROOT/Makefile")
[ -n "$layers" ] || fail "no SHIM_LAYERS in the Makefile"
objects_of() { # the objects built from preload/$1's sources
	local src
	for src in "$KPROF_ROOT"/preload/"$1"/*.c "$KPROF_ROOT"/preload/"$1"/*.S; do
		[ -e "$src" ] || continue
		src=${src#"$KPROF_ROOT"/}
		echo "$BUILD/pic/${src%.*}.o"
	done
}
# common/ (and the generated tables) is below every layer
nm --defined-only "$BUILD/libkcommon-pic.a" 2>/dev/null | awk 'NF == 3 { print $3 }' |
	grep '^kp_' > below.txt || fail "nothing defined in $BUILD/libkcommon-pic.a"
checked=0
for layer in $layers; do
	objs=$(objects_of "$layer")
	[ -n "$objs" ] || fail "layer $layer: no sources"
	for o in $objs; do
		[ -f "$o" ] || fail "$o not built"
	done
	# shellcheck disable=SC2086
	nm --defined-only $objs | awk 'NF == 3 { print $3 }' | grep '^kp_' >> below.txt || true
	sort -u -o below.txt below.txt
	for o in $objs; do
		nm -u "$o" | awk '{ print $2 }' | grep '^kp_' | sort -u > used.txt || true
		up=$(comm -23 used.txt below.txt)
		[ -z "$up" ] || fail "layer $layer: $(basename "$o") uses what no layer at or below it defines: $(echo $up)"
		checked=$((checked + $(wc -l < used.txt)))
	done
	echo "ok: layer $layer"
done
[ "$checked" -gt 100 ] || fail "only $checked uses of kp_ symbols seen: the check read nothing"
# the check can fail: symbols layer's own definitions are not core's
first=${layers%% *} last=${layers##* }
nm --defined-only $(objects_of "$first") | awk 'NF == 3 { print $3 }' | grep '^kp_' | sort -u > core.txt
nm --defined-only $(objects_of "$last") | awk 'NF == 3 { print $3 }' | grep '^kp_' | sort -u > top.txt
[ -n "$(comm -23 top.txt core.txt)" ] || fail "the check cannot fail: $last defines nothing $first does not"
echo "ok: $checked uses of kp_ symbols, each defined at or below its layer"
