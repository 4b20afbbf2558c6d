-- Benchmark Y, "large" documents, extended query protocol with prepared
-- statements (pgbench -M prepared): large_read.sql with the key computed
-- in the statement, since pgbench sends a variable as a parameter and a
-- parameter cannot be part of a literal.  The table is a name, which no
-- parameter can be either: the runner writes a copy of this script with
-- :tab replaced.  By hand:
--   sed 's/:tab/y_large_stock_pglz/' bench/Y/prepared/large_read.sql > /tmp/r.sql
--   pgbench -n -M prepared -c 4 -j 2 -T 10 -f /tmp/r.sql -D rows=10000
\set id random(1, :rows)
\set f random(0, 99)
SELECT jb->>('field' || :f::int) FROM :tab WHERE id = :id;
