--
-- jsonb_toaster_storage(): how a jsonb value is stored, without de-TOASTing.
--
-- Every storage form a jsonb column value can take is produced here and
-- described, and the description is checked against what core reports
-- (pg_column_size, pg_column_compression) and
-- against the chunks actually present in the TOAST relation.
--
CREATE EXTENSION jsonb_toaster;

-- Documents of a chosen size: a compressible one (a run of zeros) and an
-- incompressible one (hex digits of md5 sums, which pglz and lz4 cannot
-- shrink by the required margin).
CREATE FUNCTION compressible_doc(n int) RETURNS jsonb LANGUAGE sql
  RETURN jsonb_build_object('id', n, 'pad', repeat('0', n));
CREATE FUNCTION incompressible_doc(n int) RETURNS jsonb LANGUAGE sql
  RETURN jsonb_build_object('id', n, 'pad',
    left((SELECT string_agg(md5(i::text), '') FROM generate_series(1, n / 32 + 1) i), n));

-- A value that is not from a table: plain, 4-byte header.
SELECT form, compressed, compression, raw_size, stored_size,
       toast_relid, value_id, chunks
FROM jsonb_toaster_storage('{"a": 1}');
SELECT jsonb_toaster_storage(NULL) IS NULL AS null_in_null_out;

CREATE TABLE docs (name text PRIMARY KEY, jb jsonb);

-- pglz: plain (short and 4-byte header), compressed inline, external
-- compressed, external uncompressed (incompressible).
SET default_toast_compression = pglz;
INSERT INTO docs VALUES
  ('tiny', '{"a": 1}'),
  ('plain_1k', incompressible_doc(1000)),
  ('pglz_inline', compressible_doc(10000)),
  ('pglz_external', jsonb_build_array(compressible_doc(400000), incompressible_doc(4000))),
  ('pglz_incompressible', incompressible_doc(20000));

-- lz4: compressed inline and external compressed.
SET default_toast_compression = lz4;
INSERT INTO docs VALUES
  ('lz4_inline', compressible_doc(10000)),
  ('lz4_external', jsonb_build_array(compressible_doc(400000), incompressible_doc(4000)));
RESET default_toast_compression;

-- STORAGE EXTERNAL: never compressed; around the 2 kB threshold the value
-- stays inline below it and moves out above it.
CREATE TABLE ext (name text PRIMARY KEY, jb jsonb);
ALTER TABLE ext ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO ext VALUES
  ('below_threshold', compressible_doc(1900)),
  ('above_threshold', compressible_doc(2100)),
  ('big', compressible_doc(100000));

-- STORAGE MAIN: compressed, and kept inline as long as the row fits a page.
CREATE TABLE main_storage (name text PRIMARY KEY, jb jsonb);
ALTER TABLE main_storage ALTER COLUMN jb SET STORAGE MAIN;
INSERT INTO main_storage VALUES ('main_compressed', compressible_doc(100000));

CREATE VIEW all_docs AS
  SELECT 'docs' AS tab, name, jb FROM docs
  UNION ALL SELECT 'ext', name, jb FROM ext
  UNION ALL SELECT 'main_storage', name, jb FROM main_storage;

-- The description of every stored form.
SELECT tab, name, s.form, s.compressed, s.compression,
       s.toast_relid IS NOT NULL AS has_toast_relid,
       s.value_id IS NOT NULL AS has_value_id,
       s.chunks
FROM all_docs, jsonb_toaster_storage(jb) s
ORDER BY tab, name;

-- Sizes agree with core's view of the same datum: stored_size with
-- pg_column_size(), raw_size with the size of a fresh uncompressed copy.
SELECT tab, name,
       s.stored_size = pg_column_size(jb) AS stored_size_ok,
       s.raw_size = pg_column_size(jb::text::jsonb) AS raw_size_ok,
       s.stored_size <= s.raw_size AS not_bigger,
       s.compression IS NOT DISTINCT FROM pg_column_compression(jb) AS compression_ok
FROM all_docs, jsonb_toaster_storage(jb) s
ORDER BY tab, name;

-- External values: the TOAST relation is the table's, and it holds exactly
-- the reported number of chunks under the reported value id.
SELECT tab, name,
       s.toast_relid = (SELECT reltoastrelid FROM pg_class WHERE oid = tab::regclass)
         AS toast_relid_ok
FROM all_docs, jsonb_toaster_storage(jb) s
WHERE s.form = 'external'
ORDER BY tab, name;

CREATE FUNCTION toast_chunks_of(rel regclass, valueid oid) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s WHERE chunk_id = $1', rel)
    INTO n USING valueid;
  RETURN n;
END $$;

SELECT tab, name, s.chunks,
       s.chunks = toast_chunks_of(s.toast_relid, s.value_id) AS chunks_ok
FROM all_docs, jsonb_toaster_storage(jb) s
WHERE s.form = 'external'
ORDER BY tab, name;

-- Describing a value reads no TOAST block: the TOAST relation's block
-- counters do not move.
SELECT pg_stat_force_next_flush();
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) AS toast_blocks_before
FROM pg_statio_user_tables WHERE relname = 'docs' \gset
SELECT count(*) FROM docs, jsonb_toaster_storage(jb) s WHERE s.form = 'external';
SELECT pg_stat_force_next_flush();
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) - :toast_blocks_before
         AS toast_blocks_read_by_storage
FROM pg_statio_user_tables WHERE relname = 'docs';

-- Control: de-TOASTing the same values does move the counters.
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) AS toast_blocks_before
FROM pg_statio_user_tables WHERE relname = 'docs' \gset
SELECT count(jb::text) FROM docs, jsonb_toaster_storage(jb) s WHERE s.form = 'external';
SELECT pg_stat_force_next_flush();
SELECT coalesce(toast_blks_read, 0) + coalesce(toast_blks_hit, 0) - :toast_blocks_before > 0
         AS toast_blocks_read_by_detoasting
FROM pg_statio_user_tables WHERE relname = 'docs';

-- The same value in memory (after a de-TOASTing operation) is plain.
SELECT s.form, s.compressed
FROM docs, jsonb_toaster_storage(jb || '{}') s
WHERE name = 'pglz_external';

DROP VIEW all_docs;
DROP TABLE docs, ext, main_storage;
DROP FUNCTION compressible_doc(int), incompressible_doc(int), toast_chunks_of(regclass, oid);
DROP EXTENSION jsonb_toaster;
