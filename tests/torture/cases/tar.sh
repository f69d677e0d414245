# SPDX-License-Identifier: MIT
# tar: a tree of regular files, a sparse file, symlinks, hard links, long
# names and modes, archived plain, with gzip and xz (tar forks the
# compressor and talks to it through pipes), listed, extracted elsewhere
# and compared (tar --compare and diff -r). Fixed times and numeric owners
# make the listings the same on every run.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
umask 022
mkdir -p tree/deep/er/still/deeper tree/empty
for i in $(seq 1 60); do
	head -c $((i * 997)) /dev/zero | tr '\0' "$(printf "\\$(printf '%03o' $((65 + i % 26)))")" > "tree/f$i"
done
seq 1 50000 > tree/deep/er/numbers
long=$(printf 'n%.0s' $(seq 1 150))
echo long > "tree/deep/$long"
ln -s ../f1 tree/deep/link-to-f1
ln -s /nonexistent tree/dangling
ln tree/f2 tree/deep/hardlink-to-f2
truncate -s 20M tree/sparse
printf 'end' >> tree/sparse
chmod 0600 tree/f3
chmod 0755 tree/f4
find tree -exec touch -h -d '2024-01-01 00:00:00' {} +
for z in "" z J; do
	name=a${z:+.$z}.tar
	status "create $name" tar --sort=name --numeric-owner --owner=0 --group=0 -S -c${z}f "$name" tree
	tar -t${z}vf "$name" --numeric-owner --full-time | md5sum
	rm -rf out
	mkdir out
	status "extract $name" tar -x${z}f "$name" -C out
	status "compare $name" tar -d${z}f "$name" -C out
	status "diff -r $name" diff -r --no-dereference tree out/tree
done
tar -tvf a.tar --numeric-owner --full-time | grep -E 'sparse|link|dangling|f3$|f4$' | sort -k6
stat -c '%s %b' out/tree/sparse | awk '{ print "sparse size " $1 (($2 * 512) < $1 ? " (holes kept)" : " (no holes)") }'
# an archive through a pipe, extracted by a second tar
status "pipe" sh -c 'tar -cf - -C tree deep | tar -xf - -C out && cmp out/deep/er/numbers tree/deep/er/numbers'
