# SPDX-License-Identifier: MIT
# sqlite3 (the command-line shell): a table of 20000 rows in one
# transaction, indexes, joins, aggregates, a WAL database written by four
# processes at once (fcntl locks, shared memory, busy timeout), VACUUM,
# integrity checks, .dump and .import.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
sqlite3 -batch t.db > q1.out 2>&1 <<'EOF'
PRAGMA journal_mode=DELETE;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t(k, v) SELECT x % 97, printf('value-%06d', x) FROM c;
COMMIT;
CREATE INDEX t_k ON t(k);
SELECT count(*), sum(k), min(v), max(v) FROM t;
SELECT k, count(*) FROM t WHERE k < 5 GROUP BY k ORDER BY k;
CREATE TABLE names(k INTEGER PRIMARY KEY, name TEXT);
INSERT INTO names SELECT DISTINCT k, 'name' || k FROM t;
SELECT n.name, count(*) FROM t JOIN names n USING (k) WHERE k BETWEEN 10 AND 12 GROUP BY n.name;
DELETE FROM t WHERE k = 3;
UPDATE t SET v = upper(v) WHERE k = 4;
SELECT changes();
VACUUM;
PRAGMA integrity_check;
SELECT count(*) FROM t;
EOF
status "sqlite3 batch" cat q1.out
sqlite3 t.db .dump | md5sum
sqlite3 t.db .dump > dump.sql
sqlite3 copy.db < dump.sql
sqlite3 copy.db 'SELECT count(*), sum(length(v)) FROM t;'

sqlite3 wal.db 'PRAGMA journal_mode=WAL; CREATE TABLE w(p INTEGER, n INTEGER);' > /dev/null
for p in 1 2 3 4; do
	(
		for n in $(seq 1 50); do
			echo "INSERT INTO w VALUES($p, $n);"
		done | sqlite3 -cmd '.timeout 20000' wal.db
	) &
done
wait
sqlite3 wal.db 'SELECT p, count(*), sum(n) FROM w GROUP BY p ORDER BY p; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA integrity_check;' | sed 's/^0|[0-9]*|[0-9]*$/checkpoint ok/'
printf 'a,b\n1,x\n2,y\n3,z\n' > in.csv
sqlite3 imp.db -cmd '.mode csv' '.import in.csv c' 'SELECT count(*), group_concat(b) FROM c;'
status "sqlite3 error" sqlite3 t.db 'SELECT * FROM missing;' 2>&1
