--
-- A corrupt lz4 stream whose error only the bound on a match's length
-- catches: the partial-access path must raise an ERROR, as core's
-- decompression does, not return the bytes the match would copy.
--
-- The stream is forged as in corruption.sql: the chunks of a bytea stored
-- uncompressed in TOAST, read through a jsonb TOAST pointer that says lz4
-- (jsonb_toaster_test, a test-only module).
--
CREATE SCHEMA jt_lz4;
CREATE EXTENSION jsonb_toaster SCHEMA jt_lz4;
CREATE EXTENSION jsonb_toaster_test SCHEMA jt_lz4;
SET search_path = public, jt_lz4;

-- Run a query, report its result or its error in a stable form: SQLSTATE
-- and message with numbers and TOAST relation names masked.
CREATE FUNCTION try_lz4(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE query INTO result;
  RETURN 'ok: ' || coalesce(left(result, 30), 'NULL');
EXCEPTION WHEN OTHERS THEN
  DECLARE
    detail text;
  BEGIN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' ||
      regexp_replace(regexp_replace(SQLERRM || coalesce(' (' || nullif(detail, '') || ')', ''),
                                    'pg_toast_[0-9]+', 'pg_toast_N', 'g'),
                     '\m[0-9]+\M', 'N', 'g');
  END;
END $$;

-- The document {"k": S}, 9551 bytes, S a string of 9538 bytes, as three
-- sequences.  The first holds the jsonb header, its JEntries, the key and
-- 2100 literal bytes of S, and a valid match of 4 bytes; it runs past the
-- first TOAST chunk.  The second, read with all its input present, is a
-- match of 7430 bytes, 4 bytes back, that ends 4 bytes before the end of
-- the output: the lz4 block format wants the last 5 bytes to be literals,
-- and LZ4_decompress_safe rejects it.  The third holds the last 4
-- literals.  Its match length has 30 extra bytes, so that the decoder's
-- fast path, not the general code, parses it.
CREATE TABLE lz4_blobs (name text PRIMARY KEY, rawsize int, b bytea);
ALTER TABLE lz4_blobs ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO lz4_blobs
SELECT 'match_into_last_literals', 9551,
  -- raw size word: 9551, lz4
  '\x4f250040'::bytea ||
  -- token: 15+ literals, match of 4; literal length 15 + 8 * 255 + 58
  '\xf0ffffffffffffffff3a'::bytea ||
  -- literals: object of one pair, key length 1, value a 9538-byte string,
  -- "k", then 2100 bytes of S
  '\x0100002001000000422500006b'::bytea ||
  convert_to(left((SELECT string_agg(md5(i::text), '') FROM generate_series(1, 70) i), 2100), 'UTF8') ||
  -- distance 4
  '\x0400'::bytea ||
  -- token: no literals, match of 15+ bytes, distance 4, then 29 * 255 + 16
  '\x0f0400'::bytea || decode(repeat('ff', 29), 'hex') || '\x10'::bytea ||
  -- token: 4 literals, the last sequence
  '\x40'::bytea || convert_to('wxyz', 'UTF8');
SELECT name, length(b) AS stored, length(b) > 1996 AS two_chunks FROM lz4_blobs;

-- the accessor raises an ERROR, like the builtin cast that de-TOASTs the
-- whole value with core's decompression
SELECT name,
  try_lz4(format($$SELECT md5(jt_object_field_text(jt_test_toast_pointer(b, %s, %s, 'lz4'), 'k')) FROM lz4_blobs WHERE name = %L$$,
                 rawsize, length(b), name)) AS accessor,
  try_lz4(format($$SELECT md5(jt_test_toast_pointer(b, %s, %s, 'lz4')::text) FROM lz4_blobs WHERE name = %L$$,
                 rawsize, length(b), name)) AS whole
FROM lz4_blobs ORDER BY name;

DROP SCHEMA jt_lz4 CASCADE;
DROP TABLE lz4_blobs;
DROP FUNCTION try_lz4(text);
