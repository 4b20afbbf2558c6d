-- Benchmark Y, "complex" documents: a projection of 10 values of one
-- document, each at a path chosen at random (kN and pN at random, vN in
-- turn v0, v1, v2, ...).
-- By hand:
--   pgbench -n -c 4 -j 2 -T 10 -f bench/Y/complex_fields.sql -D tab=y_complex_stock_pglz -D rows=10000
\set id random(1, :rows)
\set k0 random(0, 99)
\set k1 random(0, 99)
\set k2 random(0, 99)
\set k3 random(0, 99)
\set k4 random(0, 99)
\set k5 random(0, 99)
\set k6 random(0, 99)
\set k7 random(0, 99)
\set k8 random(0, 99)
\set k9 random(0, 99)
\set p0 random(0, 2)
\set p1 random(0, 2)
\set p2 random(0, 2)
\set p3 random(0, 2)
\set p4 random(0, 2)
\set p5 random(0, 2)
\set p6 random(0, 2)
\set p7 random(0, 2)
\set p8 random(0, 2)
\set p9 random(0, 2)
SELECT jb->'k:k0'->'p:p0'->>'v0', jb->'k:k1'->'p:p1'->>'v1', jb->'k:k2'->'p:p2'->>'v2',
       jb->'k:k3'->'p:p3'->>'v0', jb->'k:k4'->'p:p4'->>'v1', jb->'k:k5'->'p:p5'->>'v2',
       jb->'k:k6'->'p:p6'->>'v0', jb->'k:k7'->'p:p7'->>'v1', jb->'k:k8'->'p:p8'->>'v2',
       jb->'k:k9'->'p:p9'->>'v0'
FROM :tab WHERE id = :id;
