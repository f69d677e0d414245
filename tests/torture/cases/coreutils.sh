# SPDX-License-Identifier: MIT
# coreutils, findutils and friends in parallel: sort --parallel (threads)
# with a temporary directory, xargs -P4 running many processes, split and
# cat back, find with -exec +, md5sum -c, a pipeline of a dozen stages,
# awk and sed on a large file.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
seq 1 300000 | awk '{ print ($1 * 7919) % 1000003, $1 }' > big.txt
status "sort --parallel" sort --parallel=2 -S 1M -T "$TMPDIR" -n -k1,1 -k2,2 -o sorted.txt big.txt
md5sum sorted.txt
sort -c -n -k1,1 sorted.txt && echo "sorted"
mkdir parts
split -l 25000 -d big.txt parts/x
ls parts | wc -l
cat parts/x* | cmp - big.txt && echo "split and cat back the same"
status "xargs -P4" sh -c 'ls parts | xargs -P4 -n1 -I{} sh -c "wc -l < parts/{} > parts/{}.n"'
cat parts/*.n | sort | uniq -c
find parts -name 'x*' ! -name '*.n' -exec md5sum {} + | sort -k2 > sums
status "md5sum -c" md5sum -c --quiet sums
seq 1 100000 | sed 's/1/one/' | grep -v 9 | tr a-z A-Z | cut -c1-5 | sort | uniq | sort -r | head -n 1000 | tail -n 10 | rev | tac | nl | md5sum
awk '{ s += $1 } END { print s, NR }' big.txt
status "timeout" timeout 0.3 sleep 5
