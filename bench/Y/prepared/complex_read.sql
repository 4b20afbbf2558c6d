-- Benchmark Y, "complex" documents, prepared statements: complex_read.sql
-- with the keys computed in the statement (see large_read.sql here).
\set id random(1, :rows)
\set k random(0, 99)
\set p random(0, 2)
\set v random(0, 2)
SELECT jb->('k' || :k::int)->('p' || :p::int)->>('v' || :v::int) FROM :tab WHERE id = :id;
