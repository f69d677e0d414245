# SPDX-License-Identifier: MIT
# PostgreSQL 15: initdb, the server started by pg_ctl on a unix socket in
# the case's own directory (no TCP), pgbench -i, a pgbench run of 4
# clients on 2 threads with a fixed number of transactions, checks that
# the balances add up, a parallel query (background workers forked by the
# postmaster), pg_dump and pg_restore into a second database, and a fast
# shutdown. The server runs as an ordinary user: nobody when the suite
# runs as root (setpriv), the suite's own user otherwise.
# torture: timeout=300
. "$TORTURE_CASES/lib.sh"
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/initdb" ] || { echo "postgresql-15 missing (scripts/install-deps.sh test)"; exit 1; }
mkdir pg
if [ "$(id -u)" = 0 ]; then
	chown nobody:nogroup pg
	# The trace directory the shim created is the root user's (mode 700):
	# the server's processes, nobody's, may write their traces in it too.
	[ -n "${KPROF_OUT:-}" ] && mkdir -p "$KPROF_OUT" && chmod 1777 "$KPROF_OUT"
	# HOME is the server user's own, as su or a service manager would
	# set it (setpriv keeps root's): the shim keeps its per-user cache
	# of patch sites there.
	as_pg() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- env HOME="$PWD/pg" "$@"; }
else
	as_pg() { "$@"; }
fi
chmod 700 pg
export PGHOST=$PWD/pg PGUSER=bench PGDATABASE=bench
export TMPDIR=$PWD/pg
pg() { as_pg "$PGBIN/$@"; }

pg initdb -D pg/data -U bench --auth=trust --no-sync -E UTF8 --locale=C > pg/initdb.log 2>&1
echo "initdb: exit $?"
cat >> pg/data/postgresql.conf <<EOF
listen_addresses = ''
unix_socket_directories = '$PWD/pg'
max_connections = 20
shared_buffers = 32MB
max_worker_processes = 4
max_parallel_workers = 2
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
EOF
pg pg_ctl -D pg/data -l pg/server.log -w -t 120 start > pg/pg_ctl.log 2>&1
echo "pg_ctl start: exit $?"
status "createdb" pg createdb bench
pg pgbench -i -q -s 1 > pg/init.log 2>&1
echo "pgbench -i: exit $?"
pg pgbench -c 4 -j 2 -t 150 > pg/bench.log 2>&1
echo "pgbench: exit $?"
grep -E '^(transaction type|scaling factor|query mode|number of clients|number of threads|number of transactions|maximum number of tries|number of failed)' pg/bench.log
sql() { pg psql -X -A -t -q -c "$@" 2>&1; }
echo "history rows: $(sql 'select count(*) from pgbench_history')"
echo "accounts add up: $(sql 'select (select sum(abalance) from pgbench_accounts) = (select sum(delta) from pgbench_history)')"
echo "tellers add up: $(sql 'select (select sum(tbalance) from pgbench_tellers) = (select sum(delta) from pgbench_history)')"
echo "branches add up: $(sql 'select (select sum(bbalance) from pgbench_branches) = (select sum(delta) from pgbench_history)')"
# A parallel sequential scan: the postmaster forks background workers.
sql 'explain (costs off) select count(*) from pgbench_accounts where aid % 7 = 3' | grep -o -E 'Workers Planned: [0-9]+|Parallel Seq Scan.*'
echo "parallel count: $(sql 'select count(*) from pgbench_accounts where aid % 7 = 3')"
pg pg_dump -Fc -f pg/bench.dump bench
echo "pg_dump: exit $?"
status "createdb copy" pg createdb copy
pg pg_restore -d copy pg/bench.dump
echo "pg_restore: exit $?"
# pgbench's deltas are random: the copy must hold the same sums
q='select count(*), sum(abalance), (select sum(delta) from pgbench_history) from pgbench_accounts'
orig=$(sql "$q") copy=$(pg psql -X -A -t -q -d copy -c "$q" 2>&1)
if [ "$orig" = "$copy" ]; then echo "copy: same rows and sums"; else echo "copy differs: $orig, $copy"; fi
pg pg_ctl -D pg/data -m fast -w -t 120 stop >> pg/pg_ctl.log 2>&1
echo "pg_ctl stop: exit $?"
# A server process that crashed is in the log ("terminated by signal").
echo "server log: $(grep -c -E 'terminated by signal|PANIC|was terminated by' pg/server.log) crashes"
