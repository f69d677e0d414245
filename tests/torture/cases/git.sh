# SPDX-License-Identifier: MIT
# git: init, add 200 files, commits, branches and a merge, log, gc
# (pack-objects with threads), fsck, a local clone (upload-pack through a
# pipe pair), archive piped to tar. Fixed identities and dates make every
# object id the same on every run.
# torture: quick timeout=300
. "$TORTURE_CASES/lib.sh"
export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=torture GIT_AUTHOR_EMAIL=torture@example.invalid
export GIT_COMMITTER_NAME=torture GIT_COMMITTER_EMAIL=torture@example.invalid
export GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
git init -q -b main repo
cd repo
git config gc.autoDetach false
git config pack.threads 2
mkdir -p src/a src/b doc
for i in $(seq 1 200); do
	case $((i % 3)) in
	0) f=src/a/file$i.c ;;
	1) f=src/b/file$i.txt ;;
	2) f=doc/note$i.md ;;
	esac
	seq 1 $((i * 7)) | sed "s/^/line $i /" > "$f"
done
git add .
git commit -q -m "200 files"
for n in 1 2 3; do
	for i in $(seq $n 17 200); do
		f=$(git ls-files | sed -n "${i}p")
		echo "change $n" >> "$f"
	done
	git commit -q -a -m "change $n"
done
git checkout -q -b topic HEAD~1
echo topic > topic.txt
git add topic.txt
git commit -q -m topic
git checkout -q main
git merge -q --no-edit topic
git tag -a -m release v1
echo "log:"
git log --oneline --graph --decorate=short
git log --stat -n 2 | tail -n 5
echo "HEAD $(git rev-parse HEAD) tree $(git rev-parse 'HEAD^{tree}')"
git diff --stat HEAD~3 HEAD | tail -n 1
git grep -c 'change 2' | wc -l
status "gc" git gc -q --aggressive
git count-objects -v | grep -E '^(count|in-pack|packs|garbage)'
status "fsck" git fsck --full --strict --no-progress
cd ..
status "clone" git clone -q --no-local repo clone
git -C clone log --oneline | wc -l
git -C clone rev-parse HEAD
git -C repo archive --format=tar v1 | tar -t | sort | md5sum
status "status" git -C clone status --porcelain
