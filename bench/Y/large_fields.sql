-- Benchmark Y, "large" documents: a projection of 10 fields, each chosen at
-- random (independently: a field may come twice), of one document.
-- By hand:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/large_fields.sql -D tab=y_large_stock_pglz -D rows=10000
\set id random(1, :rows)
\set f0 random(0, 99)
\set f1 random(0, 99)
\set f2 random(0, 99)
\set f3 random(0, 99)
\set f4 random(0, 99)
\set f5 random(0, 99)
\set f6 random(0, 99)
\set f7 random(0, 99)
\set f8 random(0, 99)
\set f9 random(0, 99)
SELECT jb->>'field:f0', jb->>'field:f1', jb->>'field:f2', jb->>'field:f3', jb->>'field:f4',
       jb->>'field:f5', jb->>'field:f6', jb->>'field:f7', jb->>'field:f8', jb->>'field:f9'
FROM :tab WHERE id = :id;
