--
-- Damaged TOAST values: the partial-access path raises an ERROR naming the
-- value, never crashes, and never returns a wrong answer silently.
--
-- TOAST relations cannot be edited from SQL, so the damage is done with
-- forged TOAST pointers (jsonb_toaster_test, a test-only module): a jsonb
-- pointer to a genuine value's chunks with sizes that disagree with them,
-- or to the chunks of a bytea whose bytes the test chooses.
--
CREATE SCHEMA jt;
CREATE EXTENSION jsonb_toaster SCHEMA jt;
CREATE EXTENSION jsonb_toaster_test SCHEMA jt;
SET search_path = public, jt;

-- Run a query, report its result or its error in a stable form: SQLSTATE
-- and message with numbers and TOAST relation names masked.
CREATE FUNCTION try(query text) RETURNS text LANGUAGE plpgsql AS $$
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

-- Genuine documents, more than 16 chunks long even when compressed, so
-- that the iterator reads them in several bounded batches.  Keys sort
-- by length, so the value of "a" comes first, in chunk 0, and the value of
-- "pad" runs to the end.
CREATE TABLE docs (name text PRIMARY KEY, jb jsonb);
INSERT INTO docs
SELECT m, jsonb_build_object('a', 1, 'pad',
  (SELECT string_agg(md5(i::text) || repeat(' x', 20), ' ') FROM generate_series(1, 3000) i))
FROM unnest('{pglz,lz4}'::text[]) m;
ALTER TABLE docs ALTER COLUMN jb SET COMPRESSION lz4;
UPDATE docs SET jb = jb::text::jsonb WHERE name = 'lz4';
CREATE TABLE plain_docs (name text PRIMARY KEY, jb jsonb);
ALTER TABLE plain_docs ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO plain_docs SELECT 'none', jb::text::jsonb FROM docs WHERE name = 'pglz';

CREATE VIEW genuine AS
  SELECT name, jb, s.raw_size - 4 AS rawsize, s.stored_size AS extsize, s.chunks
  FROM (SELECT * FROM docs UNION ALL SELECT * FROM plain_docs) d,
       jsonb_toaster_storage(jb) s;
SELECT name, chunks > 16 AS several_batches, extsize < rawsize AS compressed FROM genuine ORDER BY name;

-- A forged pointer with the genuine sizes reads like the original.
SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'a') FROM genuine WHERE name = %L$$,
             rawsize, extsize, name, name)) AS a,
  try(format($$SELECT md5(jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'pad')) = md5(jb ->> 'pad') FROM genuine WHERE name = %L$$,
             rawsize, extsize, name, name)) AS pad_equal
FROM genuine ORDER BY name;

-- The pointer claims one chunk more than there is: the last chunk is
-- missing.  "a" is found without reading that far; "pad" is not, and
-- neither is anything that de-TOASTs the whole value first, as the builtin
-- accessors do (on a patched server they are overridden by ours, so the
-- cast to text stands for them).
SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'a') FROM genuine WHERE name = %L$$,
             rawsize + grow, extsize + 1996, name, name)) AS a,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'pad') FROM genuine WHERE name = %L$$,
             rawsize + grow, extsize + 1996, name, name)) AS pad,
  try(format($$SELECT left(jt_test_toast_pointer(jb, %s, %s, %L)::text, 1) FROM genuine WHERE name = %L$$,
             rawsize + grow, extsize + 1996, name, name)) AS whole
FROM genuine, LATERAL (SELECT CASE WHEN name = 'none' THEN 1996 ELSE 0 END AS grow) g
ORDER BY name;

-- The pointer claims a longer last chunk than is stored (a short chunk),
-- and a shorter one (an oversized chunk).
SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'pad') FROM genuine WHERE name = %L$$,
             rawsize + grow / 1996, extsize + 1, name, name)) AS short_chunk,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'pad') FROM genuine WHERE name = %L$$,
             rawsize - grow / 1996, extsize - 1, name, name)) AS oversized_chunk
FROM genuine, LATERAL (SELECT CASE WHEN name = 'none' THEN 1996 ELSE 0 END AS grow) g
ORDER BY name;

-- The pointer claims one chunk fewer than there is: one chunk too many.
SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'pad') FROM genuine WHERE name = %L$$,
             rawsize - grow, extsize - 1996, name, name)) AS extra_chunk
FROM genuine, LATERAL (SELECT CASE WHEN name = 'none' THEN 1996 ELSE 0 END AS grow) g
ORDER BY name;

-- A compressed raw size that disagrees with the stream's own header word.
SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(jb, %s, %s, %L), 'a') FROM genuine WHERE name = %L$$,
             rawsize + 10, extsize, name, name)) AS raw_size_mismatch
FROM genuine WHERE name <> 'none' ORDER BY name;

-- Chosen bytes: a bytea stored uncompressed in TOAST serves as the stream
-- (more than 2 kB, so that it is TOASTed).
CREATE TABLE blobs (name text PRIMARY KEY, rawsize int, b bytea);
ALTER TABLE blobs ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO blobs VALUES
  -- raw size word 100000, then 0xff: every pglz item is a back-reference
  -- before any output; every lz4 token claims long runs
  ('ff', 100000, '\xa0860100'::bytea || decode(repeat('ff', 3000), 'hex')),
  -- raw size word 100000, then literals that stop well before that
  ('ends_early', 100000, '\xa0860100'::bytea || decode(repeat('00', 3000), 'hex')),
  -- an uncompressed object of 1 pair whose JEntries point far away
  ('far_jentry', 3012, '\x01000020ffffff0fffffff0f'::bytea || decode(repeat('61', 3000), 'hex')),
  -- a container header with both the object and the array flag
  ('bad_header', 3004, '\x01000060'::bytea || decode(repeat('00', 3000), 'hex')),
  -- an object whose value has an unknown JEntry type (0x60000000)
  ('bad_type', 3013, '\x0100002001000000040000606b'::bytea || decode(repeat('00', 3000), 'hex'));
SELECT name, length(b) = rawsize OR name IN ('ff', 'ends_early') AS sizes_ok FROM blobs ORDER BY 1;

SELECT name, m,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(b, %s, %s, %L), 'k') FROM blobs WHERE name = %L$$,
             rawsize, length(b), m, name)) AS result
FROM blobs, unnest('{pglz,lz4}'::text[]) m
WHERE name IN ('ff', 'ends_early') ORDER BY 1, 2;

SELECT name,
  try(format($$SELECT jt_object_field_text(jt_test_toast_pointer(b, %s, %s, 'none'), 'k') FROM blobs WHERE name = %L$$,
             rawsize, rawsize, name)) AS object_field,
  try(format($$SELECT jt_exists(jt_test_toast_pointer(b, %s, %s, 'none'), 'zz')::text FROM blobs WHERE name = %L$$,
             rawsize, rawsize, name)) AS exists,
  try(format($$SELECT jt_array_element_text(jt_test_toast_pointer(b, %s, %s, 'none'), 0) FROM blobs WHERE name = %L$$,
             rawsize, rawsize, name)) AS array_element
FROM blobs WHERE name NOT IN ('ff', 'ends_early') ORDER BY 1;

DROP SCHEMA jt CASCADE;
DROP TABLE docs, plain_docs, blobs CASCADE;
DROP FUNCTION try(text);
