# SPDX-License-Identifier: MIT
# serial: snapshots on a 100 ms timer into a terminal, parsed per screen
# kanalyze --listen's live view. On a terminal of 24 rows (script(1)'s
# pty) every snapshot fits: its first line, the title, never scrolls off,
# whatever the producers send; a key typed on the terminal (n) orders the
# rows by name. Each snapshot has calls/s and ms/s since the one before:
# getppid, made 200,000 times at the start, has a rate while it is made
# and 0 once it is done (a rate, not a total), and the busiest processes
# are listed by the same rates. The final profile is the classic one.
. "$KPROF_ROOT/tests/lib.sh"
command -v script >/dev/null || fail "no script (Debian's bsdutils; make test installs it)"
# producer: 200,000 getppid at once, then 40 more images over 0.8 s
produce() {
	KPROF_OUT="unix:$PWD/$1" LD_PRELOAD=$SHIM dash -c \
		"$BUILD/tests/getppid_loop 200000 > /dev/null; i=0
		 while [ \$i -lt 40 ]; do ls / > /dev/null; sleep 0.02; i=\$((i + 1)); done"
}
wait_socket() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done; fail "no $1"; }

# on_terminal ROWS DIR: the live view on a terminal of ROWS rows and 160
# columns, n typed after 0.5 s, a producer; every snapshot fits (ROWS - 1
# lines and the cursor's) and starts with its title; DIR/screens holds
# the snapshots
on_terminal() {
	local rows=$1 dir=$2
	mkdir "$dir"
	( sleep 0.5; printf n; sleep 4 ) | script -qfec "stty rows $rows cols 160; exec $KANALYZE \
		--listen=unix:$PWD/$dir/tty.sock --refresh=100 --linger=400" "$dir/typescript" \
		> /dev/null 2>&1 &
	local sc=$!
	wait_socket "$dir/tty.sock"
	sleep 0.8 # the key is in before the first producer
	produce "$dir/tty.sock"
	wait $sc || true
	# the screens: what follows each "clear screen" up to the next, the
	# last up to its key line (the final profile follows it), each line as
	# the rows it takes on 160 columns
	awk '/^keys: / { last = NR } { l[NR] = $0 } END { for (i = 1; i <= last; i++) print l[i] }' \
		"$dir/typescript" > "$dir/screens"
	awk 'BEGIN { RS = "\033\\[H\033\\[2J" } NR > 1 { n = split($0, l, "\n"); rows = 0
		for (i = 1; i < n; i++) { w = length(l[i]); sub(/\r$/, "", l[i]); w = length(l[i])
			rows += w > 160 ? int((w + 159) / 160) : 1 }
		print rows }' "$dir/screens" > "$dir/heights"
	local screens
	screens=$(wc -l < "$dir/heights")
	[ "$screens" -ge 5 ] || fail "$rows rows: only $screens screens drawn: $(head -c 600 "$dir/typescript" | cat -v)"
	expect_eq "$rows rows: screens taller than $((rows - 1)) lines (of $screens)" 0 \
		"$(awk -v max=$((rows - 1)) '$1 > max' "$dir/heights" | wc -l)"
	expect_eq "$rows rows: screens that do not start with the title" 0 \
		"$(awk 'BEGIN { RS = "\033\\[H\033\\[2J" } NR > 1 && !/^--- kanalyze --listen / { n++ } END { print n + 0 }' "$dir/typescript")"
	expect_eq "$rows rows: screens without the key line" 0 \
		"$(awk 'BEGIN { RS = "\033\\[H\033\\[2J" } NR > 1 && !/\nkeys: t time/ { n++ } END { print n + 0 }' "$dir/screens")"
}

# ---- a terminal of 12 rows, too few for the footer and the busiest
# processes under one syscall row: the bottom of the body gives way ----
on_terminal 12 small
# ---- a terminal of 24 rows: every snapshot fits, n sorts by name ----
on_terminal 24 big
cp big/screens screens
# the last screen's rows, after the n key: by name
last=$(awk 'BEGIN { RS = "\033\\[H\033\\[2J" } { s = $0 } END { print s }' screens | tr -d '\r')
rows=$(awk '/^-----/ { d++; next } d == 1 && !/^\(/ { print $1 }' <<<"$last")
[ "$(wc -l <<<"$rows")" -ge 3 ] || fail "last screen: $(cat -v <<<"$last")"
expect_eq "rows sorted by name after the key n" "$(sort <<<"$rows")" "$rows"
grep -q "^keys: t time, c count" <<<"$last" || fail "no key help line"

# ---- rates, not totals ----
"$KANALYZE" --listen="unix:$PWD/rate.sock" --refresh=100 --linger=400 > live.txt 2> live.err &
k=$!
wait_socket rate.sock
produce rate.sock
wait $k || fail "kanalyze --listen: $(cat live.err)"
# getppid's Calls/s per snapshot (the tables with rate columns)
awk '/^Syscall / { r = /Calls\/s/ } r && /^getppid \(/ { print $4 }' live.txt > getppid_rates
[ "$(awk '$1 > 0' getppid_rates | wc -l)" -ge 1 ] || fail "getppid never had a rate: $(head getppid_rates)"
[ "$(tail -n 1 getppid_rates)" = 0 ] || fail "getppid's rate stayed: $(tail -n 3 getppid_rates)"
echo "ok: getppid's calls/s: $(sort -n getppid_rates | tail -n 1) at most, 0 at the end"
grep -q '^Busiest processes this interval' live.txt || fail "no process list"
grep -Eq '^  pid [0-9]+ +(ls|dash|getppid_loop) +[0-9]+ calls/s +[0-9.]+ ms/s$' live.txt ||
	fail "no busy process line: $(grep -A3 '^Busiest' live.txt | head -n 8)"
# the final profile: no rate columns, every call counted
final=$(awk '/^=== Syscall Profile ===/ { s = "" } { s = s $0 "\n" } END { printf "%s", s }' live.txt)
! grep -q 'Calls/s' <<<"$final" || fail "rates in the final profile"
# (200,000 and the shell's own getppid)
expect_eq "final: getppid, as the last snapshot counted it" \
	"$(awk '/^Syscall / { r = /Calls\/s/ } r && /^getppid \(/ { n = $3 } END { print n }' live.txt)" \
	"$(awk '/^getppid \(/ { print $3 }' <<<"$final")"
