--
-- Folded inline skeletons (patched servers only, format version 8): a
-- document that stock keeps in the row compressed, but whose short fields
-- take most of the row, keeps its tree compressed together with its parts
-- in the row.  No TOAST value is written; a read of a short field decodes
-- the tree only; every reader gets the builtins' answer; format version 7
-- writes a skeleton in TOAST instead; a damaged pointer raises an ERROR.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- the bytes of a pointer as the row holds it, and the value such bytes give
CREATE FUNCTION pointer_bytes(jsonb) RETURNS bytea
	AS '$libdir/jsonb_toaster_test', 'jt_test_custom_pointer_bytes'
	LANGUAGE C STRICT STABLE;
CREATE FUNCTION from_pointer_bytes(bytea) RETURNS jsonb
	AS '$libdir/jsonb_toaster_test', 'jt_test_bytea_from_pointer_bytes'
	LANGUAGE C STRICT VOLATILE;
-- n as four bytes, least significant first, as the pointer stores it
CREATE FUNCTION le4(n bigint) RETURNS bytea LANGUAGE sql AS $$
	SELECT set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
		0, (n & 255)::int), 1, ((n >> 8) & 255)::int),
		2, ((n >> 16) & 255)::int), 3, ((n >> 24) & 255)::int)
$$;
-- a document's pointer with bytes [at, at + length(b)) replaced by b
CREATE FUNCTION damaged(doc jsonb, at int, b bytea) RETURNS jsonb
LANGUAGE sql AS $$
	SELECT from_pointer_bytes(overlay(pointer_bytes(doc) PLACING b FROM at + 1))
$$;

-- 30 short fields (each under the 32 bytes a value needs to leave the
-- tree), about 1.4 kB of tree, and an array of 25 hashes: the tree does
-- not fit beside its parts compressed, but compressed with them it does
CREATE FUNCTION fdoc(id int, edit text DEFAULT 'x') RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('short_field_%s', lpad(j::text, 2, '0')),
							format('value %s of record %s', lpad(j::text, 6, '0'), lpad(id::text, 6, '0')))
		|| jsonb_build_object('leader', 'L' || id, 'edit', edit, 'fields',
			(SELECT jsonb_agg(jsonb_build_object('tag', k, 'v', md5((id * 100 + k)::text)))
			 FROM generate_series(1, 25) k))
	FROM generate_series(1, 30) j
$$;

CREATE TABLE fk (id int PRIMARY KEY, jb jsonb);
ALTER TABLE fk ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE fk_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO fk SELECT i, fdoc(i) FROM generate_series(1, 3) i;
INSERT INTO fk_plain SELECT i, fdoc(i) FROM generate_series(1, 3) i;
-- stock keeps them in the row compressed; the toaster folds them there
SELECT id, (jsonb_toaster_storage(p.jb)).form AS stock_form,
	(jsonb_toaster_storage(f.jb)).form, (jsonb_toaster_storage(f.jb)).chunks,
	jt_test_format_version(f.jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(f.jb)) AS tvalues,
	(SELECT bool_and(value_id = 0) FROM jsonb_toaster_parts(f.jb)) AS in_the_pointer,
	pg_column_size(f.jb) < 2000 AS fits
FROM fk f JOIN fk_plain p USING (id) ORDER BY id;
SELECT pg_relation_size(reltoastrelid) AS toast_bytes FROM pg_class WHERE relname = 'fk';

-- every reader gets the builtins' answer
SELECT f.jb ->> 'leader' AS leader, f.jb ->> 'short_field_17' AS short,
	f.jb #> '{fields,24,tag}' AS last_tag,
	f.jb -> 'fields' -> 5 = p.jb -> 'fields' -> 5 AS same_element,
	f.jb ? 'short_field_30' AS has_key, f.jb ? 'short_field_31' AS no_key,
	f.jb @> '{"leader": "L2"}' AS contains,
	jsonb_path_query_first(f.jb, '$.fields[7].v') = p.jb #> '{fields,7,v}' AS same_path,
	JSON_VALUE(f.jb, '$.short_field_01') AS json_value,
	f.jb['fields'][0]['tag'] AS subscript,
	jsonb_typeof(f.jb) AS typeof,
	(SELECT count(*) FROM jsonb_object_keys(f.jb)) AS nkeys,
	f.jb = p.jb AS equal, f.jb::text = p.jb::text AS same_text,
	jsonb_hash(f.jb) = jsonb_hash(p.jb) AS same_hash,
	jt_test_flat_bytes(f.jb) = jt_test_flat_bytes(p.jb) AS same_bytes
FROM fk f JOIN fk_plain p USING (id) WHERE id = 2;
SELECT count(*) FILTER (WHERE f.jb -> k IS DISTINCT FROM p.jb -> k) AS differ
FROM fk f JOIN fk_plain p USING (id), jsonb_object_keys(p.jb) k;
SELECT p.path, p.kind, p.raw_size = p.stored_size AS raw_as_stored
FROM fk, jsonb_toaster_parts(jb) p WHERE id = 1;

-- an UPDATE rebuilds it: folded again after a small change, in TOAST
-- once it no longer fits in the row; removing the key that made it grow
-- changes only the parts in TOAST; the document stored whole is folded
-- again
UPDATE fk SET jb = jsonb_set(jb, '{edit}', '"y"') WHERE id = 1;
UPDATE fk_plain SET jb = jsonb_set(jb, '{edit}', '"y"') WHERE id = 1;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues
FROM fk WHERE id = 1;
UPDATE fk SET jb = jb || jsonb_build_object('noise', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 100) i)) WHERE id = 1;
UPDATE fk_plain SET jb = jb || jsonb_build_object('noise', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 100) i)) WHERE id = 1;
SELECT (jsonb_toaster_storage(jb)).form, (SELECT count(*) FROM jsonb_toaster_values(jb)) > 0 AS in_toast
FROM fk WHERE id = 1;
UPDATE fk SET jb = jb - 'noise' WHERE id = 1;
UPDATE fk_plain SET jb = jb - 'noise' WHERE id = 1;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues
FROM fk WHERE id = 1;
UPDATE fk SET jb = fdoc(1, 'y') WHERE id = 1;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues
FROM fk WHERE id = 1;
-- an UPDATE of another column keeps the pointer as it is
ALTER TABLE fk ADD COLUMN n int DEFAULT 0;
UPDATE fk SET n = n + 1 WHERE id = 2;
SELECT jt_test_format_version(jb) AS version FROM fk WHERE id = 2;
SELECT count(*) AS differ FROM fk f JOIN fk_plain p USING (id)
WHERE jt_test_flat_bytes(f.jb) <> jt_test_flat_bytes(p.jb);

-- format version 7 does not fold: the same document is a skeleton in TOAST
SET jsonb_toaster.format_version = 7;
INSERT INTO fk (id, jb) VALUES (4, fdoc(4));
INSERT INTO fk_plain VALUES (4, fdoc(4));
RESET jsonb_toaster.format_version;
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues,
	jt_test_flat_bytes(jb) = jt_test_flat_bytes(fdoc(4)) AS same_bytes
FROM fk WHERE id = 4;
-- and the setting's bounds
SET jsonb_toaster.format_version = 9;
SET jsonb_toaster.format_version = 8;
RESET jsonb_toaster.format_version;

-- with lz4 too
CREATE TABLE fk_lz4 (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE fk_lz4 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO fk_lz4 VALUES (5, fdoc(5));
SELECT jt_test_format_version(jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(jb)) AS tvalues,
	jb ->> 'short_field_05' AS short, jb #>> '{fields,3,tag}' AS tag,
	jt_test_flat_bytes(jb) = jt_test_flat_bytes(fdoc(5)) AS same_bytes
FROM fk_lz4;
DROP TABLE fk_lz4;

-- not folded when folding does not make it fit: short fields of random
-- digits do not compress, in a skeleton or whole (stock puts it in TOAST)
CREATE FUNCTION rdoc(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('r%s', j), left(md5((id * 1000 + j)::text), 28))
		|| jsonb_build_object('fields',
			(SELECT jsonb_agg(md5((id * 1000 + 500 + k)::text)) FROM generate_series(1, 40) k))
	FROM generate_series(1, 30) j
$$;
INSERT INTO fk (id, jb) VALUES (6, rdoc(6));
INSERT INTO fk_plain VALUES (6, rdoc(6));
SELECT (jsonb_toaster_storage(p.jb)).form AS stock_form, jt_test_format_version(f.jb) AS version,
	(SELECT count(*) FROM jsonb_toaster_values(f.jb)) AS tvalues
FROM fk f JOIN fk_plain p USING (id) WHERE id = 6;

-- rewrites keep them
VACUUM FULL fk;
CLUSTER fk USING fk_pkey;
ALTER TABLE fk ALTER COLUMN n TYPE bigint;
SELECT count(*) AS differ FROM fk f JOIN fk_plain p USING (id)
WHERE jt_test_flat_bytes(f.jb) <> jt_test_flat_bytes(p.jb);
SELECT id, jt_test_format_version(jb) AS version FROM fk ORDER BY id;

-- damaged pointers: ERROR, never a wrong answer.  Bytes of a pointer:
-- 2 of external header, 14 of custom header (the format version last),
-- then the skeleton's header (TOAST relation, part count and flags, tree
-- size) at 16, 20 and 24, then the folded datum at 28.
CREATE FUNCTION try(doc jsonb, key text DEFAULT 'leader') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE detail text;
BEGIN
	RETURN left(doc ->> key, 20);
EXCEPTION WHEN data_corrupted THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN 'ERROR: ' || SQLERRM || coalesce(' (' || nullif(detail, '') || ')', '');
END $$;
CREATE FUNCTION tree_size(doc jsonb) RETURNS bigint LANGUAGE sql AS $$
	SELECT get_byte(pointer_bytes(doc), 24) + 256 * get_byte(pointer_bytes(doc), 25) +
		65536 * get_byte(pointer_bytes(doc), 26)
$$;
-- as stored
SELECT try(damaged(jb, 0, ''::bytea)) FROM fk WHERE id = 2;
-- a folded tree in a pointer of format version 7
SELECT try(damaged(jb, 15, '\x07'::bytea)) FROM fk WHERE id = 2;
-- a tree said to be longer than the folded datum's raw bytes
SELECT try(damaged(jb, 24, le4(1000000))) FROM fk WHERE id = 2;
-- a tree said to be one byte shorter, or longer, than it is
SELECT try(damaged(jb, 24, le4(tree_size(jb) - 1))) FROM fk WHERE id = 2;
SELECT try(damaged(jb, 24, le4(tree_size(jb) + 1))) FROM fk WHERE id = 2;
-- a compression method core does not know (the top bits of the datum's
-- raw size word)
SELECT try(damaged(jb, 35, set_byte('\x00'::bytea, 0, get_byte(pointer_bytes(jb), 35) | 192)))
FROM fk WHERE id = 2;
-- a datum that is not compressed
SELECT try(damaged(jb, 28, set_byte('\x00'::bytea, 0, get_byte(pointer_bytes(jb), 28) & 252)))
FROM fk WHERE id = 2;
-- without the inline flag (bit 31 of the part count)
SELECT try(damaged(jb, 23, set_byte('\x00'::bytea, 0, get_byte(pointer_bytes(jb), 23) & 127)))
FROM fk WHERE id = 2;
-- the compressed bytes damaged: in the tree; after it, where a read of a
-- short field does not look, but a read of the parts does
SELECT try(damaged(jb, 36, '\xffffffffffffffff'::bytea)) FROM fk WHERE id = 2;
SELECT try(d) AS leader, try(d, 'fields') AS fields
FROM fk, damaged(jb, length(pointer_bytes(jb)) - 8, '\xffffffffffffffff'::bytea) d
WHERE id = 2;

DROP TABLE fk, fk_plain;

-- Just under the room, where stock keeps a document in the row compressed
-- but the skeleton's headers do not fit there: a document whose tree would
-- keep none of its root's values ({"k": {..}}) is left to core, stored as
-- stock stores it, without a TOAST value; one whose tree keeps a value of
-- the root ("v") keeps its skeleton, in TOAST, and reads "v" from its
-- tree.  A column whose inline budget is smaller than the compressed
-- document keeps its skeletons.
CREATE FUNCTION near_doc(n int, lead boolean) RETURNS jsonb LANGUAGE sql AS $$
	SELECT CASE WHEN lead THEN '{"v": 1}'::jsonb ELSE '{}'::jsonb END ||
		jsonb_build_object('k', (SELECT jsonb_object_agg('f' || lpad(i::text, 4, '0'),
			format('entry %s: %s, the same words again', i, left(md5(i::text), 10)))
		FROM generate_series(1, n) i))
$$;
CREATE TABLE near (n int, lead boolean, jb jsonb COMPRESSION pglz);
ALTER TABLE near ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE near_budget (LIKE near INCLUDING COMPRESSION);
ALTER TABLE near_budget ALTER COLUMN jb SET (toaster = 'jsonb_toaster',
	toaster_options = 'inline_budget=1000');
CREATE TABLE near_external (LIKE near INCLUDING COMPRESSION);
ALTER TABLE near_external ALTER COLUMN jb SET STORAGE EXTERNAL;
ALTER TABLE near_external ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE near_plain (LIKE near INCLUDING COMPRESSION);
INSERT INTO near_external SELECT n, l, near_doc(n, l)
FROM generate_series(80, 100) n, (VALUES (false), (true)) v(l);
INSERT INTO near SELECT n, l, near_doc(n, l)
FROM generate_series(80, 100) n, (VALUES (false), (true)) v(l);
INSERT INTO near_budget SELECT n, l, near_doc(n, l)
FROM generate_series(80, 100) n, (VALUES (false), (true)) v(l);
INSERT INTO near_plain SELECT n, l, near_doc(n, l)
FROM generate_series(80, 100) n, (VALUES (false), (true)) v(l);
-- of the documents stock keeps in the row: those the toaster keeps there
-- (a skeleton in the row, or left to core), those it writes to TOAST
SELECT t.lead, count(*) AS stock_in_row,
	count(*) FILTER (WHERE s.chunks = 0) AS inline_skeletons,
	count(*) FILTER (WHERE s.form = 'compressed') AS left_to_core,
	count(*) FILTER (WHERE s.chunks > 0) AS in_toast,
	count(*) FILTER (WHERE s.form = 'compressed') > 0 AS some_left,
	count(*) FILTER (WHERE s.chunks > 0) > 0 AS some_in_toast,
	bool_and(t.jb = p.jb AND t.jb::text = p.jb::text) AS equal
FROM near t JOIN near_plain p USING (n, lead), jsonb_toaster_storage(t.jb) s
WHERE pg_column_toast_chunk_id(p.jb) IS NULL AND pg_column_size(p.jb) > 1000
GROUP BY 1 ORDER BY 1;
-- left to core: exactly stock's bytes in the row
SELECT count(*) AS left_to_core,
	bool_and(pg_column_size(t.jb) = pg_column_size(p.jb)) AS stock_size
FROM near t JOIN near_plain p USING (n, lead), jsonb_toaster_storage(t.jb) s
WHERE s.form = 'compressed';
-- kept in TOAST: "v" from the tree, "k" from the parts
SELECT count(*) FILTER (WHERE t.jb -> 'v' = '1') AS v_read,
	bool_and(t.jb -> 'k' = p.jb -> 'k') AS k_equal
FROM near t JOIN near_plain p USING (n, lead), jsonb_toaster_storage(t.jb) s
WHERE pg_column_toast_chunk_id(p.jb) IS NULL AND s.chunks > 0;
-- a smaller inline budget: nothing left to core
SELECT count(*) FILTER (WHERE s.form = 'compressed') AS left_to_core,
	count(*) FILTER (WHERE s.chunks > 0) > 0 AS some_in_toast
FROM near_budget t JOIN near_plain p USING (n, lead), jsonb_toaster_storage(t.jb) s
WHERE pg_column_toast_chunk_id(p.jb) IS NULL AND pg_column_size(p.jb) > 1000;
-- a column core would not compress (STORAGE EXTERNAL): nothing left to
-- core, which would store such documents uncompressed in TOAST
SELECT count(*) AS documents, count(*) FILTER (WHERE s.form = 'skeleton') AS skeletons,
	bool_and(t.jb::text = p.jb::text) AS equal
FROM near_external t JOIN near_plain p USING (n, lead), jsonb_toaster_storage(t.jb) s;
-- edits of documents left to core: ordinary values, changed as stock's
UPDATE near SET jb = jsonb_set(jb, '{k,f0001}', '"changed"');
UPDATE near_plain SET jb = jsonb_set(jb, '{k,f0001}', '"changed"');
UPDATE near SET jb = jb || near_doc(120, false) WHERE n = 85;
UPDATE near_plain SET jb = jb || near_doc(120, false) WHERE n = 85;
SELECT count(*) AS documents, bool_and(t.jb::text = p.jb::text) AS equal
FROM near t JOIN near_plain p USING (n, lead);
-- a document of a skeleton in TOAST replaced by one left to core: the
-- skeleton's TOAST value goes with the old row version
CREATE FUNCTION toast_rows_left() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'near'::regclass))
		INTO n;
	RETURN n - (SELECT coalesce(sum(s.chunks), 0) FROM near t, jsonb_toaster_storage(t.jb) s);
END $$;
SELECT (jsonb_toaster_storage(jb)).form, (jsonb_toaster_storage(jb)).chunks > 0 AS in_toast
FROM near WHERE n = 99 AND NOT lead;
UPDATE near SET jb = near_doc(94, false) WHERE n = 99 AND NOT lead;
SELECT (jsonb_toaster_storage(jb)).form, toast_rows_left() AS stray_toast_rows
FROM near WHERE n = 99 AND NOT lead;

DROP TABLE near, near_budget, near_external, near_plain;
DROP FUNCTION fdoc(int, text), near_doc(int, boolean), toast_rows_left(), rdoc(int), try(jsonb, text), tree_size(jsonb),
	damaged(jsonb, int, bytea), le4(bigint), pointer_bytes(jsonb),
	from_pointer_bytes(bytea);
