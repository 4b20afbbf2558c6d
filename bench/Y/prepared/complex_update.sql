-- Benchmark Y, "complex" documents, prepared statements: complex_update.sql
-- with the path and the hashed text computed in the statement (see
-- large_read.sql here).
\set id random(1, :rows)
\set k random(0, 99)
\set p random(0, 2)
\set r random(1, 1000000000)
UPDATE :tab SET jb = jsonb_set(jb, ARRAY['k' || :k::int, 'p' || :p::int, 'v0'],
  to_jsonb(left(encode(sha512(convert_to(:r::int::text, 'UTF8')), 'hex'), 12)))
WHERE id = :id;
