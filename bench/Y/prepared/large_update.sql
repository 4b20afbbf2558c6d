-- Benchmark Y, "large" documents, prepared statements: large_update.sql
-- with the path and the hashed text computed in the statement (see
-- large_read.sql here for why and how to run it by hand).
\set id random(1, :rows)
\set f random(0, 99)
\set r random(1, 1000000000)
UPDATE :tab SET jb = jsonb_set(jb, ARRAY['field' || :f::int],
  to_jsonb(left(encode(sha512(convert_to(:r::int || '/1', 'UTF8')), 'hex')
                || encode(sha512(convert_to(:r::int || '/2', 'UTF8')), 'hex'), 200)))
WHERE id = :id;
