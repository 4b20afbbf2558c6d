--
-- The jsonb toaster (patched servers only): storage, byte-exact flatten,
-- and the life of the parts through every way rows change.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- TOAST rows of a table, and the chunks its live values account for
CREATE FUNCTION toast_rows(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
		INTO n;
	RETURN n;
END $$;
CREATE FUNCTION live_chunks(rel regclass, col text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT coalesce(sum((jsonb_toaster_storage(%I)).chunks), 0) FROM %s',
				   col, rel) INTO n;
	RETURN n;
END $$;
-- do the TOAST rows match the live values exactly?
CREATE FUNCTION toast_ok(rel regclass, col text) RETURNS text LANGUAGE sql AS $$
	SELECT CASE WHEN toast_rows(rel) = live_chunks(rel, col) THEN 'ok'
		ELSE format('%s TOAST rows, %s live chunks', toast_rows(rel), live_chunks(rel, col)) END
$$;

-- Documents of many shapes; "ref" keeps them as standard jsonb.
CREATE TABLE ref (id int PRIMARY KEY, jb jsonb);
ALTER TABLE ref ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO ref
SELECT i, jsonb_build_object(
	'key1', i,
	'key2', (SELECT jsonb_agg(0) FROM generate_series(1, pow(10, 1 + 5.0 * i / 25.0)::int)),
	'key3', i,
	'key4', (SELECT jsonb_agg(0) FROM generate_series(1, pow(10, 0 + 5.0 * i / 25.0)::int)))
FROM generate_series(1, 20) i;
-- nested objects and arrays, long strings, numerics, empty containers,
-- unicode, keys that differ only in length or last byte
INSERT INTO ref
SELECT 100 + i, jsonb_build_object(
	'id', 'name ' || i,
	'imdb_id', i * 1000003,
	'height', 1.5 + i / 100.0,
	'bio', repeat('lorem ipsum ' || i || ' ', 20 * i),
	'ünïcødé', repeat('ß', 100 * i),
	'empty', '{}'::jsonb, 'none', '[]'::jsonb, 'null', NULL::jsonb,
	'k', 1, 'kk', 2, 'ka', 3, 'kb', 4,
	'roles', (SELECT jsonb_agg(jsonb_build_object(
				'title', 'Title ' || j || ' (' || (1900 + j % 120) || ')',
				'role', CASE WHEN j % 3 = 0 THEN 'actor' ELSE 'writer' END,
				'ranks', (SELECT jsonb_agg(k * 1.25) FROM generate_series(1, j % 7) k)))
			  FROM generate_series(1, 40 * i) j),
	'nested', jsonb_build_object('a', jsonb_build_object('b',
				jsonb_build_object('c', repeat('deep', 300 * i)))))
FROM generate_series(1, 10) i;
-- an object of many short fields, and an array of long strings
INSERT INTO ref
SELECT 200 + i, (SELECT jsonb_object_agg(j, j) FROM generate_series(1, 300 * i) j)
FROM generate_series(1, 4) i;
INSERT INTO ref
SELECT 300 + i, (SELECT jsonb_agg(repeat(md5(j::text), 10 + j % 5)) FROM generate_series(1, 30 * i) j)
FROM generate_series(1, 4) i;
-- documents that stay standard: small ones, and raw scalars
INSERT INTO ref VALUES (400, '{"small": true}'), (401, '[1, 2, 3]'),
	(402, to_jsonb(repeat('a long string scalar ', 500))),
	(403, to_jsonb(repeat('9', 1000)::numeric));

CREATE TABLE t (id int PRIMARY KEY, other int DEFAULT 0, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t (id, jb) SELECT id, jb FROM ref;

-- storage forms (300 short fields, 201, whose skeleton would be a lone
-- reference, fit in the row compressed: left to core, folded.sql)
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM t GROUP BY 1 ORDER BY 1;
SELECT id, (jsonb_toaster_storage(jb)).form FROM t WHERE id >= 400 ORDER BY id;

-- a call site reading skeletons keeps one buffer for the parts it reads:
-- what it holds after 500 calls is what it held after 10 (it once lost
-- the buffer after every call, and allocated another)
SELECT f.fn, f.arg,
	jt_test_call_site_memory(f.fn, t.jb, f.arg, 10) =
	jt_test_call_site_memory(f.fn, t.jb, f.arg, 500) AS steady
FROM t, (VALUES ('jt_extract_path(jsonb,text[])'::regprocedure, '{roles,0,title}'::text[]),
				('jt_extract_path_text(jsonb,text[])', '{nested,a,b,c}'),
				('jt_extract_path(jsonb,text[])', '{id}')) f(fn, arg)
WHERE t.id = 105 ORDER BY 1, 2;

-- flatten is byte-exact, and pg_column_size/octet_length agree with the header
SELECT count(*) AS same_bytes FROM t JOIN ref USING (id)
WHERE jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(ref.jb);
SELECT count(*) AS differ FROM t JOIN ref USING (id)
WHERE t.jb::text <> ref.jb::text OR octet_length(t.jb::text) <> octet_length(ref.jb::text);

-- short fields stay in the skeleton, long values leave it
SELECT id, s.inline_size <= 2000 AS fits, s.parts > 0 AS has_parts
FROM t, jsonb_toaster_storage(jb) s WHERE id IN (20, 105, 204) ORDER BY id;
SELECT path, range, kind, count FROM t, jsonb_toaster_parts(jb) WHERE id = 105 ORDER BY path, range;

-- accessors and builtins give the same results through the skeleton
SELECT count(*) AS differ FROM t JOIN ref USING (id)
WHERE (t.jb -> 'key1') IS DISTINCT FROM (ref.jb -> 'key1')
   OR (t.jb ->> 'id') IS DISTINCT FROM (ref.jb ->> 'id')
   OR (t.jb #> '{roles,3,title}') IS DISTINCT FROM (ref.jb #> '{roles,3,title}')
   OR (t.jb #>> '{nested,a,b,c}') IS DISTINCT FROM (ref.jb #>> '{nested,a,b,c}')
   OR (t.jb -> 'roles') IS DISTINCT FROM (ref.jb -> 'roles')
   OR (t.jb -> 5) IS DISTINCT FROM (ref.jb -> 5)
   OR (t.jb ? 'bio') IS DISTINCT FROM (ref.jb ? 'bio')
   OR t.jb @> '{"k": 1}' IS DISTINCT FROM ref.jb @> '{"k": 1}'
   OR jsonb_path_query_array(t.jb, '$.roles[*] ? (@.role == "actor").title')
	  IS DISTINCT FROM jsonb_path_query_array(ref.jb, '$.roles[*] ? (@.role == "actor").title');

-- every TOAST row belongs to a live value
SELECT toast_ok('t', 'jb');

-- Buffers the plan's top node touched: what reads cost, exactly.
CREATE FUNCTION buffers(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q
		INTO plan;
	RETURN (plan->0->'Plan'->>'Shared Hit Blocks')::bigint +
		(plan->0->'Plan'->>'Shared Read Blocks')::bigint;
END $$;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- the builtin accessors are overridden: on standard TOAST, -> reads a prefix
SELECT buffers($$SELECT jb -> 'key1' FROM ref WHERE id = 20$$) * 5 <
	buffers($$SELECT length(jb::text) FROM ref WHERE id = 20$$) AS prefix_only;
-- ... unless the session turns the overrides off: then the builtin reads
-- it all, with the same results, through skeletons too
SET jsonb_toaster.override_builtins = off;
SELECT buffers($$SELECT jb -> 'key1' FROM ref WHERE id = 20$$) =
	buffers($$SELECT length(jb::text) FROM ref WHERE id = 20$$) AS builtin_reads_all;
SELECT count(*) AS differ FROM t JOIN ref USING (id)
WHERE (t.jb -> 'key1') IS DISTINCT FROM (ref.jb -> 'key1')
   OR (t.jb #>> '{nested,a,b,c}') IS DISTINCT FROM (ref.jb #>> '{nested,a,b,c}')
   OR (t.jb -> 'roles') IS DISTINCT FROM (ref.jb -> 'roles')
   OR (t.jb ? 'bio') IS DISTINCT FROM (ref.jb ? 'bio');
RESET jsonb_toaster.override_builtins;
-- in a skeleton, a short field costs no TOAST access at all; a long
-- container kept whole in a part is read from it and returned plain, as
-- the builtin returns it (same pg_column_size(), no compression)
SELECT buffers($$SELECT jb -> 'key1' FROM t WHERE id = 20$$) =
	buffers($$SELECT id FROM t WHERE id = 20$$) AS inline_hit,
	buffers($$SELECT jb ->> 'key3' FROM t WHERE id = 20$$) =
	buffers($$SELECT id FROM t WHERE id = 20$$) AS inline_hit_text,
	buffers($$SELECT jb -> 'nested' IS NOT NULL FROM t WHERE id = 105$$) >
	buffers($$SELECT id FROM t WHERE id = 105$$) AS container_read,
	buffers($$SELECT jb -> 'nested' -> 'a' IS NOT NULL FROM t WHERE id = 105$$) >
	buffers($$SELECT id FROM t WHERE id = 105$$) AS part_read;
SELECT s.form, s.raw_size = p.raw_size AS same_size
FROM t, jsonb_toaster_storage(jb -> 'nested') s, jsonb_toaster_parts(jb) p
WHERE id = 105 AND p.path = '{nested}';
RESET enable_indexscan;
RESET enable_bitmapscan;

-- wide containers split into ranges
SET jsonb_toaster.range_size = 1024;
CREATE TABLE ranged (id int, jb jsonb);
ALTER TABLE ranged ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO ranged SELECT id, jb FROM ref WHERE id IN (12, 106, 203, 303);
RESET jsonb_toaster.range_size;
SELECT id, path, count(*) AS ranges, sum(count) AS entries, min(count) > 0 AS nonempty
FROM ranged, jsonb_toaster_parts(jb) GROUP BY id, path HAVING count(*) > 1 ORDER BY id, path;
SELECT count(*) AS same_bytes FROM ranged JOIN ref USING (id)
WHERE jt_test_flat_bytes(ranged.jb) = jt_test_flat_bytes(ref.jb);
-- the compressed ranges of an array are decompressed where their bytes go
-- in the document: after a range whose data ends off a 4-byte boundary, a
-- range starting with a container or a numeric gets more padding before
-- it, one starting with strings goes through a buffer of its own; arrays
-- of objects, of strings and numerics taking turns, of strings, of
-- numerics, of strings and objects, and a ranged array below the root
SET jsonb_toaster.range_size = 1024;
SET jsonb_toaster.unit_size = 0;
CREATE TABLE steps_ref (id int, jb jsonb);
ALTER TABLE steps_ref ALTER COLUMN jb SET STORAGE EXTERNAL;
CREATE FUNCTION step_str(j int, len int) RETURNS text LANGUAGE sql AS $$
	SELECT substr(repeat(md5((j % 40)::text), 3), 1, len) $$;
INSERT INTO steps_ref
SELECT 1, jsonb_agg(jsonb_build_object('s', step_str(j, j % 7), 't', step_str(j, 20 + j % 11), 'n', j))
	FROM generate_series(1, 900) j
UNION ALL SELECT 2, jsonb_agg(CASE WHEN j % 2 = 0 THEN to_jsonb(step_str(j, 10 + j % 13)) ELSE to_jsonb(j * 1.5) END)
	FROM generate_series(1, 1500) j
UNION ALL SELECT 3, jsonb_agg(step_str(j, 10 + j % 17)) FROM generate_series(1, 1500) j
UNION ALL SELECT 4, jsonb_agg(j * 10.25 ^ (j % 4)) FROM generate_series(1, 1500) j
UNION ALL SELECT 5, jsonb_agg(CASE WHEN j % 3 = 0 THEN jsonb_build_object('k', step_str(j, 5 + j % 3) || j)
	ELSE to_jsonb(step_str(j, 10 + j % 6) || j) END) FROM generate_series(1, 1500) j
UNION ALL SELECT 6, jsonb_build_object('a', jsonb_agg(jsonb_build_array(step_str(j, 10 + j % 5), j)), 'b', 1)
	FROM generate_series(1, 1200) j;
CREATE TABLE steps_pglz (id int, jb jsonb COMPRESSION pglz);
CREATE TABLE steps_lz4 (id int, jb jsonb COMPRESSION lz4);
ALTER TABLE steps_pglz ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE steps_lz4 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO steps_pglz SELECT * FROM steps_ref;
INSERT INTO steps_lz4 SELECT * FROM steps_ref;
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.unit_size;
SELECT 'pglz' AS method, id, count(*) > 4 AS ranged, bool_and(p.compression = 'pglz') AS compressed
FROM steps_pglz, jsonb_toaster_parts(jb) p GROUP BY id
UNION ALL
SELECT 'lz4', id, count(*) > 4, bool_and(p.compression = 'lz4')
FROM steps_lz4, jsonb_toaster_parts(jb) p GROUP BY id ORDER BY 1, 2;
SELECT 'pglz' AS method, count(*) AS same_bytes FROM steps_pglz t JOIN steps_ref r USING (id)
WHERE jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(r.jb)
UNION ALL
SELECT 'lz4', count(*) FROM steps_lz4 t JOIN steps_ref r USING (id)
WHERE jt_test_flat_bytes(t.jb) = jt_test_flat_bytes(r.jb);
DROP TABLE steps_ref, steps_pglz, steps_lz4;
DROP FUNCTION step_str(int, int);
-- content-defined boundaries: a local edit (set, insert or delete one
-- entry, append) changes only the ranges around it, arrays and objects alike
SET jsonb_toaster.range_size = 1024;
CREATE TABLE edits_src AS
WITH base AS (
	SELECT jsonb_agg(md5(i::text) || repeat('x', i % 50) ORDER BY i) a,
		jsonb_object_agg('key' || i, md5(i::text) || repeat('y', i % 40)) o
	FROM generate_series(1, 3000) i)
SELECT 'array base' AS name, jsonb_build_object('id', 1, 'arr', a) AS jb FROM base
UNION ALL SELECT 'array set', jsonb_build_object('id', 1, 'arr', jsonb_set(a, '{1500}', '"changed"')) FROM base
UNION ALL SELECT 'array insert', jsonb_build_object('id', 1, 'arr', jsonb_insert(a, '{1500}', '"new"')) FROM base
UNION ALL SELECT 'array delete', jsonb_build_object('id', 1, 'arr', a - 1500) FROM base
UNION ALL SELECT 'array append', jsonb_build_object('id', 1, 'arr', a || '"last"') FROM base
UNION ALL SELECT 'object base', jsonb_build_object('id', 1, 'obj', o) FROM base
UNION ALL SELECT 'object set', jsonb_build_object('id', 1, 'obj', o || '{"key1500": 0}') FROM base
UNION ALL SELECT 'object insert', jsonb_build_object('id', 1, 'obj', o || '{"key1500a": 0}') FROM base
UNION ALL SELECT 'object delete', jsonb_build_object('id', 1, 'obj', o - 'key1500') FROM base;
CREATE TABLE edits (name text, jb jsonb);
ALTER TABLE edits ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO edits SELECT * FROM edits_src;
RESET jsonb_toaster.range_size;
SELECT e.name, count(*) >= 8 AS many_ranges,
	count(*) FILTER (WHERE p.hash NOT IN
		(SELECT q.hash FROM edits b, jsonb_toaster_parts(b.jb) q
		 WHERE b.name = split_part(e.name, ' ', 1) || ' base')) <= 2 AS local
FROM edits e, jsonb_toaster_parts(e.jb) p
WHERE e.name NOT LIKE '% base' GROUP BY e.name ORDER BY e.name;
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(e.jb)).form = 'skeleton') AS skeletons,
	count(*) FILTER (WHERE jt_test_flat_bytes(e.jb) <> jt_test_flat_bytes(s.jb)) AS differ
FROM edits e JOIN edits_src s USING (name);
DROP TABLE edits, edits_src;
-- one key of an object split into ranges: one range is read.  Counted in
-- chunks fetched through the TOAST index, since a whole read fetches all
-- the parts of a reference in one scan, and they share pages.
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- (The tree, one reference, lies outside the row: it is read first, and a
-- whole read fetches its chunks once more with the parts.)
CREATE TEMP VIEW ranged_parts AS
	SELECT p.* FROM ranged, jsonb_toaster_parts(jb) p WHERE id = 203;
SELECT (SELECT count(*) FROM ranged_parts WHERE kind <> 'tree') AS parts,
	(SELECT count(*) FROM ranged_parts WHERE kind = 'tree') AS tree_parts,
	jt_test_toast_fetches('ranged', $$SELECT jb -> '250' FROM ranged WHERE id = 203$$) <=
		(SELECT max(chunks) FILTER (WHERE kind <> 'tree') +
			sum(chunks) FILTER (WHERE kind = 'tree') FROM ranged_parts) AS one_key;
-- (in a transaction of its own: a tree read in is kept for the transaction;
-- the tree's last chunk may also hold a part, then fetched with the parts)
SELECT jt_test_toast_fetches('ranged', $$SELECT length(jb::text) FROM ranged WHERE id = 203$$)
	BETWEEN (SELECT (jsonb_toaster_storage(jb)).chunks FROM ranged WHERE id = 203) + 1
	AND (SELECT (jsonb_toaster_storage(jb)).chunks FROM ranged WHERE id = 203) +
		(SELECT chunks FROM ranged_parts WHERE kind = 'tree') AS whole_reads_all;
DROP VIEW ranged_parts;
RESET enable_indexscan;
RESET enable_bitmapscan;
SELECT count(*) AS differ FROM ranged JOIN ref USING (id)
WHERE (ranged.jb -> '250') IS DISTINCT FROM (ref.jb -> '250')
   OR (ranged.jb -> 77) IS DISTINCT FROM (ref.jb -> 77)
   OR (ranged.jb #> '{roles,100}') IS DISTINCT FROM (ref.jb #> '{roles,100}')
   OR (ranged.jb -> '1') IS DISTINCT FROM (ref.jb -> '1')
   OR (ranged.jb -> '900') IS DISTINCT FROM (ref.jb -> '900')
   OR (ranged.jb -> '0') IS DISTINCT FROM (ref.jb -> '0')
   OR (ranged.jb -> '99999') IS DISTINCT FROM (ref.jb -> '99999')
   OR (ranged.jb -> -1) IS DISTINCT FROM (ref.jb -> -1)
   OR (ranged.jb ->> 89) IS DISTINCT FROM (ref.jb ->> 89)
   OR (ranged.jb #>> '{roles,-1,title}') IS DISTINCT FROM (ref.jb #>> '{roles,-1,title}')
   OR (ranged.jb -> 'key2' -> 2000) IS DISTINCT FROM (ref.jb -> 'key2' -> 2000)
   OR (ranged.jb ?| '{nope,777}') IS DISTINCT FROM (ref.jb ?| '{nope,777}')
   OR (ranged.jb ?& '{1,777,900}') IS DISTINCT FROM (ref.jb ?& '{1,777,900}')
   OR (ranged.jb ? (ref.jb ->> 5)) IS DISTINCT FROM (ref.jb ? (ref.jb ->> 5));

-- a tiny inline budget: the whole document leaves
SET jsonb_toaster.inline_budget = 0;
CREATE TABLE tiny (id int, jb jsonb);
ALTER TABLE tiny ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO tiny SELECT id, jb FROM ref;
RESET jsonb_toaster.inline_budget;
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM tiny GROUP BY 1 ORDER BY 1;
SELECT DISTINCT path FROM tiny, jsonb_toaster_parts(jb);
SELECT count(*) AS same_bytes FROM tiny JOIN ref USING (id)
WHERE jt_test_flat_bytes(tiny.jb) = jt_test_flat_bytes(ref.jb);

-- parts are compressed with the column's method in its standard format
-- (read back by core's own decompression), alone or with others in a unit,
-- or stored as they are when that would not make them smaller: stored in
-- fewer bytes than they (the parts of their unit) hold
CREATE TABLE comp_pglz (id int, jb jsonb COMPRESSION pglz);
CREATE TABLE comp_lz4 (id int, jb jsonb COMPRESSION lz4);
ALTER TABLE comp_pglz ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE comp_lz4 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO comp_pglz SELECT id, jb FROM ref;
INSERT INTO comp_lz4 SELECT id, jb FROM ref;
-- hex digests: pglz saves less than the 25% it asks of itself
INSERT INTO comp_pglz SELECT 0, jsonb_build_object('k', 1, 'digests',
	(SELECT jsonb_agg(sha256(int4send(j))::text) FROM generate_series(1, 300) j));
CREATE FUNCTION held(tab regclass) RETURNS TABLE (compression text, stored int, held bigint)
LANGUAGE plpgsql AS $$
BEGIN
	RETURN QUERY EXECUTE format('SELECT p.compression, p.stored_size,
		sum(p.raw_size - 4) OVER (PARTITION BY t.id, p.value_id, p.stored_offset)
		FROM %s t, jsonb_toaster_parts(t.jb) p', tab);
END $$;
SELECT 'pglz' AS col, compression, count(*) AS parts,
	   count(*) FILTER (WHERE stored < held) AS smaller
FROM held('comp_pglz') GROUP BY 1, 2
UNION ALL
SELECT 'lz4', compression, count(*), count(*) FILTER (WHERE stored < held)
FROM held('comp_lz4') GROUP BY 1, 2 ORDER BY 1, 2;
DROP FUNCTION held(regclass);
SELECT count(*) AS same_bytes FROM comp_pglz JOIN ref USING (id)
WHERE jt_test_flat_bytes(comp_pglz.jb) = jt_test_flat_bytes(ref.jb);
SELECT count(*) AS same_bytes FROM comp_lz4 JOIN ref USING (id)
WHERE jt_test_flat_bytes(comp_lz4.jb) = jt_test_flat_bytes(ref.jb);
SELECT jb->'digests'->299 = to_jsonb(sha256(int4send(300))::text) AS same
FROM comp_pglz WHERE id = 0;
DROP TABLE comp_pglz, comp_lz4;

-- the option on a column of another type is left to standard TOAST
CREATE TABLE txt (v text);
ALTER TABLE txt ALTER COLUMN v SET (toaster = 'jsonb_toaster');
INSERT INTO txt SELECT jb::text FROM ref WHERE id = 20;
SELECT (SELECT jb::text FROM ref WHERE id = 20) = v AS same FROM txt;

--
-- The life of the parts: after every change and a VACUUM, the TOAST
-- relation holds exactly the chunks of the live values.
--
-- UPDATE of the column: the old parts go
UPDATE t SET jb = jb || '{"extra": 1}' WHERE id % 2 = 0;
VACUUM t;
SELECT toast_ok('t', 'jb');
-- UPDATE of another column: the pointer is kept as it is (HOT or not)
CREATE TEMP TABLE before AS SELECT id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p;
UPDATE t SET other = other + 1;
VACUUM t;
SELECT toast_ok('t', 'jb');
SELECT count(*) AS parts_moved FROM before b
WHERE NOT EXISTS (SELECT 1 FROM t, jsonb_toaster_parts(t.jb) p
				  WHERE t.id = b.id AND p.value_id = b.value_id
					AND p.value_offset = b.value_offset);
-- a HOT update (other is not indexed; the page has room) keeps the pointer
CREATE TABLE hot (id int, other int, jb jsonb) WITH (fillfactor = 50);
ALTER TABLE hot ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO hot SELECT id, 0, jb FROM ref
WHERE (jsonb_toaster_storage(jb)).form = 'external' LIMIT 3;
SELECT count(*) AS skeletons FROM hot WHERE (jsonb_toaster_storage(jb)).form = 'skeleton';
CREATE TEMP TABLE hot_before AS SELECT id, jt_test_flat_bytes(jb) b,
	array_agg(ROW(p.value_id, p.value_offset)::text ORDER BY p.value_id, p.value_offset) ids
FROM hot, jsonb_toaster_parts(jb) p GROUP BY id, jb;
BEGIN;
UPDATE hot SET other = 1;
SELECT pg_stat_get_xact_tuples_hot_updated('hot'::regclass) AS hot_updates;
COMMIT;
VACUUM hot;
SELECT toast_ok('hot', 'jb');
SELECT count(*) AS changed FROM hot h JOIN hot_before b USING (id)
WHERE jt_test_flat_bytes(h.jb) <> b.b
   OR (SELECT array_agg(ROW(value_id, value_offset)::text ORDER BY value_id, value_offset)
	   FROM jsonb_toaster_parts(h.jb)) <> b.ids;
DROP TABLE hot;
-- DELETE
DELETE FROM t WHERE id % 3 = 0;
VACUUM t;
SELECT toast_ok('t', 'jb');
-- aborted INSERT and UPDATE, savepoints
BEGIN;
INSERT INTO t (id, jb) SELECT id + 1000, jb FROM ref;
UPDATE t SET jb = jb || '{"aborted": 1}';
ROLLBACK;
BEGIN;
INSERT INTO t (id, jb) SELECT id + 2000, jb FROM ref WHERE id < 50;
SAVEPOINT s1;
UPDATE t SET jb = jb || '{"sp": 1}' WHERE id > 2000;
DELETE FROM t WHERE id < 10;
ROLLBACK TO s1;
SAVEPOINT s2;
UPDATE t SET jb = jb || '{"sp": 2}' WHERE id > 2000 AND id % 2 = 0;
RELEASE s2;
COMMIT;
VACUUM t;
SELECT toast_ok('t', 'jb');
SELECT count(*) AS kept FROM t WHERE id < 10;
SELECT count(*) FILTER (WHERE jb ? 'sp') AS updated, count(*) AS inserted FROM t WHERE id > 2000;
-- ON CONFLICT: DO NOTHING leaves no parts behind, DO UPDATE replaces them
INSERT INTO t (id, jb) SELECT id, jb FROM ref WHERE id IN (1, 2, 4, 5) ON CONFLICT DO NOTHING;
INSERT INTO t (id, jb) SELECT id, jb || '{"upsert": 1}' FROM ref WHERE id IN (2, 4, 5, 6)
ON CONFLICT (id) DO UPDATE SET jb = excluded.jb;
VACUUM t;
SELECT toast_ok('t', 'jb');
SELECT count(*) AS upserted FROM t WHERE jb ? 'upsert';
-- everything still reads back as the reference says
SELECT count(*) AS differ FROM t JOIN ref ON ref.id = t.id % 1000
WHERE jsonb_typeof(ref.jb) = 'object' AND t.jb - 'extra' - 'sp' - 'upsert' <> ref.jb;

--
-- Rewrites keep values, and the TOAST relation stays exact.
--
CREATE TEMP TABLE vals AS SELECT id, jt_test_flat_bytes(jb) b FROM t;
VACUUM FULL t;
SELECT toast_ok('t', 'jb');
CLUSTER t USING t_pkey;
SELECT toast_ok('t', 'jb');
ALTER TABLE t ALTER COLUMN other TYPE bigint;
SELECT toast_ok('t', 'jb');
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM t GROUP BY 1 ORDER BY 1;
SELECT count(*) AS differ FROM t JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;

-- INSERT..SELECT between tables: each table gets parts of its own
CREATE TABLE t2 (id int, jb jsonb);
ALTER TABLE t2 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t2 SELECT id, jb FROM t;
CREATE TABLE plain_copy (id int, jb jsonb);
INSERT INTO plain_copy SELECT id, jb FROM t;
SELECT count(*) FILTER (WHERE s.toast_relid =
		(SELECT reltoastrelid FROM pg_class WHERE oid = 't2'::regclass)) AS own,
	count(*) AS skeletons
FROM t2, jsonb_toaster_storage(t2.jb) s WHERE s.form = 'skeleton';
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM plain_copy GROUP BY 1 ORDER BY 1;
SELECT toast_ok('t2', 'jb'), toast_ok('plain_copy', 'jb');
SELECT count(*) AS differ FROM t2 JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;
SELECT count(*) AS differ FROM plain_copy JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;
-- COPY between tables, through text and binary: parts of the target's own
\getenv abs_builddir PG_ABS_BUILDDIR
CREATE TABLE t3 (id int, jb jsonb);
ALTER TABLE t3 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
\set copyfile :abs_builddir '/results/toaster_copy.data'
COPY (SELECT id, jb FROM t) TO :'copyfile';
COPY t3 FROM :'copyfile';
\set copyfile :abs_builddir '/results/toaster_copy.bin'
COPY t (id, jb) TO :'copyfile' (FORMAT binary);
COPY t3 FROM :'copyfile' (FORMAT binary);
SELECT count(*) AS copied, count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') AS skeletons
FROM t3;
SELECT count(*) AS differ FROM t3 JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;
SELECT toast_ok('t3', 'jb');
DELETE FROM t;
VACUUM t;
SELECT toast_rows('t');
SELECT count(*) AS differ FROM t2 JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;

--
-- Leaving the toaster: DROP EXTENSION is refused while columns use it, and
-- jsonb_toaster_convert_column() stores a column's values as standard ones.
--
DROP TABLE ranged, tiny, txt;
-- a materialized view's column, named in another case, counts too
CREATE MATERIALIZED VIEW mv AS SELECT jb FROM t2 WITH NO DATA;
ALTER MATERIALIZED VIEW mv ALTER COLUMN jb SET (toaster = 'JSONB_Toaster');
DROP EXTENSION jsonb_toaster;
DROP EXTENSION jsonb_toaster CASCADE;
SELECT jsonb_toaster_convert_column('mv', 'jb');
DROP MATERIALIZED VIEW mv;
SELECT count(*) AS skeletons FROM t2 WHERE (jsonb_toaster_storage(jb)).form = 'skeleton';
-- only the table's owner may convert
CREATE ROLE regress_jt_other;
GRANT EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name) TO regress_jt_other;
SET ROLE regress_jt_other;
SELECT jsonb_toaster_convert_column('t2', 'jb');
RESET ROLE;
REVOKE EXECUTE ON FUNCTION jsonb_toaster_convert_column(regclass, name) FROM regress_jt_other;
DROP ROLE regress_jt_other;
-- wrong arguments, rules, and snapshots that would miss rows
SELECT jsonb_toaster_convert_column('t2', 'id');
SELECT jsonb_toaster_convert_column('t2', 'no_such_column');
CREATE VIEW t2_view AS SELECT * FROM t2;
SELECT jsonb_toaster_convert_column('t2_view', 'jb');
DROP VIEW t2_view;
CREATE RULE t2_rule AS ON UPDATE TO t2 DO ALSO NOTIFY t2_changed;
SELECT jsonb_toaster_convert_column('t2', 'jb');
DROP RULE t2_rule ON t2;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT jsonb_toaster_convert_column('t2', 'jb');
ROLLBACK;
-- conversion rolled back: nothing changed
BEGIN;
SELECT jsonb_toaster_convert_column('t2', 'jb') > 0 AS converted;
ROLLBACK;
SELECT attoptions FROM pg_attribute WHERE attrelid = 't2'::regclass AND attname = 'jb';
SELECT count(*) AS skeletons FROM t2 WHERE (jsonb_toaster_storage(jb)).form = 'skeleton';
-- converted: every value standard, same bytes, no TOAST row left behind
SELECT count(*) AS skeletons FROM t2 WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' \gset
SELECT jsonb_toaster_convert_column('t2', 'jb') = :skeletons AS all_rows;
SELECT attoptions FROM pg_attribute WHERE attrelid = 't2'::regclass AND attname = 'jb';
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM t2 GROUP BY 1 ORDER BY 1;
SELECT count(*) AS differ FROM t2 JOIN vals USING (id) WHERE jt_test_flat_bytes(jb) <> b;
VACUUM t2;
SELECT toast_ok('t2', 'jb');
-- a second call finds nothing to do
SELECT jsonb_toaster_convert_column('t2', 'jb');

-- a partitioned table, an inheritance parent, a generated column, a
-- table whose policies would hide rows from its owner
CREATE TABLE big_docs AS SELECT DISTINCT ON (id) id, jb FROM t3
WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' ORDER BY id;
CREATE TABLE parted (id int, jb jsonb) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (1000);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (1000) TO (MAXVALUE);
CREATE TABLE parent (id int, jb jsonb);
CREATE TABLE child (extra int) INHERITS (parent);
-- (the option does not recurse: each table gets its own)
ALTER TABLE parted ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE parted_1 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE parted_2 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE parent ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE child ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE gen (id int, src jsonb, jb jsonb GENERATED ALWAYS AS (src || '{"gen": 1}') STORED);
ALTER TABLE gen ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE secret (id int, jb jsonb);
ALTER TABLE secret ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO parted SELECT id, jb FROM big_docs;
INSERT INTO parent SELECT id, jb FROM big_docs WHERE id % 2 = 0;
INSERT INTO child SELECT id, jb FROM big_docs WHERE id % 2 = 1;
INSERT INTO gen (id, src) SELECT id, jb FROM big_docs;
INSERT INTO secret SELECT id, jb FROM big_docs;
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
ALTER TABLE secret FORCE ROW LEVEL SECURITY;
CREATE POLICY only_some ON secret USING (id % 2 = 0);
CREATE ROLE regress_jt_owner;
ALTER TABLE secret OWNER TO regress_jt_owner;
SELECT tableoid::regclass, count(*) AS skeletons FROM parted
WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' GROUP BY 1 ORDER BY 1;
SELECT tableoid::regclass, count(*) AS skeletons FROM parent
WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' GROUP BY 1 ORDER BY 1;
SELECT count(*) AS skeletons FROM gen WHERE (jsonb_toaster_storage(jb)).form = 'skeleton';
SELECT (SELECT count(*) FROM parted WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') AS parted,
	(SELECT count(*) FROM parent WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') AS parent,
	(SELECT count(*) FROM gen WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') AS gen \gset skeletons_
SELECT jsonb_toaster_convert_column('parted', 'jb') = :skeletons_parted AS all_rows;
SELECT jsonb_toaster_convert_column('parent', 'jb') = :skeletons_parent AS all_rows;
SELECT jsonb_toaster_convert_column('gen', 'jb') = :skeletons_gen AS all_rows;
SELECT jsonb_toaster_convert_column('secret', 'jb');
SELECT c.relname, a.attoptions FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname IN ('parted', 'parted_1', 'parted_2', 'parent', 'child', 'gen', 'secret')
	AND a.attname = 'jb' ORDER BY 1;
SELECT 'parted' AS tab, count(*) FILTER (WHERE (jsonb_toaster_storage(x.jb)).form = 'skeleton') AS skeletons,
	count(*) FILTER (WHERE jt_test_flat_bytes(x.jb) <> jt_test_flat_bytes(b.jb)) AS differ
FROM parted x JOIN big_docs b USING (id)
UNION ALL
SELECT 'parent', count(*) FILTER (WHERE (jsonb_toaster_storage(x.jb)).form = 'skeleton'),
	count(*) FILTER (WHERE jt_test_flat_bytes(x.jb) <> jt_test_flat_bytes(b.jb))
FROM parent x JOIN big_docs b USING (id)
UNION ALL
SELECT 'gen', count(*) FILTER (WHERE (jsonb_toaster_storage(x.jb)).form = 'skeleton'),
	count(*) FILTER (WHERE jt_test_flat_bytes(x.jb) <> jt_test_flat_bytes(b.jb || '{"gen": 1}'))
FROM gen x JOIN big_docs b USING (id);
DROP TABLE parted, parent, child, gen, secret, big_docs;
DROP ROLE regress_jt_owner;

-- the drop is checked when the transaction commits: dropping the
-- extension, then the tables, in one transaction is allowed
BEGIN;
DROP EXTENSION jsonb_toaster;
COMMIT;
-- t and t3 still use the toaster
SELECT jsonb_toaster_convert_column('t3', 'jb') > 0 AS converted;
DROP FUNCTION toast_ok, live_chunks, toast_rows, buffers;
BEGIN;
DROP EXTENSION jsonb_toaster_test;
DROP EXTENSION jsonb_toaster;
DROP TABLE t, t2, t3, plain_copy, ref;
COMMIT;
