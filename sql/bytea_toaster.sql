--
-- The appendable bytea toaster: a bytea column that opts in keeps its
-- values as full chunks of one TOAST value plus a tail chunk, and
-- data || x writes only the chunks the new bytes fill.  Every statement
-- runs on "bt" and on "ref", a standard column, and the two must agree.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;

CREATE TABLE bt (id int PRIMARY KEY, note text, data bytea);
ALTER TABLE bt ALTER COLUMN data SET (toaster = 'bytea_appendable');
CREATE TABLE ref (id int PRIMARY KEY, note text, data bytea);

-- n pseudo-random bytes (incompressible), different for each seed
CREATE FUNCTION rnd(seed int, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(string_agg(sha256(convert_to(seed::text || '/' || i, 'UTF8')), ''
		ORDER BY i), '')::bytea
FROM generate_series(0, (n - 1) / 32) i
$$;
CREATE FUNCTION sized(seed int, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
SELECT substring(rnd(seed, n) FROM 1 FOR n)
$$;

-- the TOAST rows of rel's TOAST relation, by value: how many values, how
-- many chunks in all, and how many rows fewer than whole chunks
CREATE FUNCTION toast_rows(rel regclass, OUT vals bigint, OUT chunks bigint)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SELECT count(DISTINCT chunk_id), count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
		INTO vals, chunks;
END $$;
-- rows of bt whose value differs from ref's, in any way a reader sees it
CREATE FUNCTION differ() RETURNS text LANGUAGE sql AS $$
SELECT coalesce(string_agg(id::text, ',' ORDER BY id), 'none')
FROM bt FULL JOIN ref USING (id)
WHERE bt.data IS DISTINCT FROM ref.data
   OR length(bt.data) IS DISTINCT FROM length(ref.data)
   OR md5(bt.data) IS DISTINCT FROM md5(ref.data)
   OR sha256(bt.data) IS DISTINCT FROM sha256(ref.data)
   OR bt.note IS DISTINCT FROM ref.note
$$;
-- slices of every row at offsets around chunk boundaries and the tail
CREATE FUNCTION slices_differ() RETURNS bigint LANGUAGE sql AS $$
SELECT count(*)
FROM bt JOIN ref USING (id),
	 (VALUES (1), (2), (2676), (2677), (2678), (5352), (5353), (5000), (9000),
			 (26760), (26761), (30000)) o (off),
	 (VALUES (1), (2), (10), (2676), (2000), (5000)) l (len)
WHERE substring(bt.data FROM o.off FOR l.len) IS DISTINCT FROM
	  substring(ref.data FROM o.off FOR l.len)
   OR substring(bt.data FROM o.off) IS DISTINCT FROM substring(ref.data FROM o.off)
   OR (length(bt.data) > 0 AND
	   get_byte(bt.data, least(o.off, length(bt.data) - 1)) IS DISTINCT FROM
	   get_byte(ref.data, least(o.off, length(ref.data) - 1)))
$$;
-- the runs of chunks the pointer of bt's row id names
CREATE FUNCTION runs(i int) RETURNS int LANGUAGE sql AS $$
SELECT (bytea_appendable_storage(data)).runs FROM bt WHERE id = i
$$;

-- values of every size: under a chunk (left to standard TOAST, inline),
-- whole chunks, chunks and a tail
INSERT INTO ref VALUES (1, 'a', sized(1, 100)), (2, 'b', sized(2, 2676 * 5)),
	(3, 'c', sized(3, 2676 * 5 + 7)), (4, 'd', sized(4, 30000)),
	(5, 'e', NULL), (6, 'f', sized(6, 0));
INSERT INTO bt SELECT * FROM ref;
SELECT differ(), slices_differ();
SELECT id, length(data), pg_column_size(data) - length(data) AS overhead, s.form,
	s.raw_size, s.stored_size, s.toast_relid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'bt'::regclass) AS own_toast,
	s.value_id IS NOT NULL AS has_value, s.runs, s.chunks, s.tail_size
FROM bt, bytea_appendable_storage(data) s ORDER BY id;
SELECT * FROM toast_rows('bt');

-- an append that fits the tail writes a new tail chunk; one that fills
-- chunks writes only those and the tail, into the same TOAST value (the
-- old tail chunk goes with the old row version)
UPDATE bt SET data = data || '\x01'::bytea WHERE id = 3;
UPDATE ref SET data = data || '\x01'::bytea WHERE id = 3;
SELECT * FROM toast_rows('bt');
UPDATE bt SET data = data || sized(33, 5000) WHERE id = 3;
UPDATE ref SET data = data || sized(33, 5000) WHERE id = 3;
SELECT * FROM toast_rows('bt');
SELECT runs(3);
-- exactly to a chunk's end, then from an empty tail
UPDATE bt SET data = data || sized(34, 2676 - length(data) % 2676) WHERE id = 3;
UPDATE ref SET data = data || sized(34, 2676 - length(data) % 2676) WHERE id = 3;
SELECT length(data) % 2676 AS tail FROM bt WHERE id = 3;
UPDATE bt SET data = data || sized(35, 2676 * 3) WHERE id = 3;
UPDATE ref SET data = data || sized(35, 2676 * 3) WHERE id = 3;
-- several appends in one expression, an empty one, and to every row
UPDATE bt SET data = data || '\x0203'::bytea || sized(36, 3000) || ''::bytea;
UPDATE ref SET data = data || '\x0203'::bytea || sized(36, 3000) || ''::bytea;
SELECT differ(), slices_differ();
SELECT * FROM toast_rows('bt');
SELECT id, runs(id) FROM bt WHERE id IN (2, 3, 4) ORDER BY id;

-- the result of an append read in the same statement, or elsewhere
SELECT md5(bt.data || '\xff'::bytea) = md5(ref.data || '\xff'::bytea),
	   length(bt.data || '\xff'::bytea), position('\x0203'::bytea IN bt.data) =
	   position('\x0203'::bytea IN ref.data),
	   substring(bt.data || sized(7, 50) FROM length(bt.data) - 2 FOR 10) =
	   substring(ref.data || sized(7, 50) FROM length(ref.data) - 2 FOR 10)
FROM bt JOIN ref USING (id) WHERE id = 4;
SELECT s.form, s.raw_size - 4 - length(data) AS appended, s.chunks = (bytea_appendable_storage(data)).chunks
FROM bt, bytea_appendable_storage(data || '\x0102'::bytea) s WHERE id = 4;
-- pg_column_size() of an append in memory is its size, as stock's
SELECT pg_column_size(data || '\x01'::bytea) = length(data) + 5 FROM bt WHERE id = 4;
CREATE TABLE copied AS SELECT id, data || '\x09'::bytea AS data FROM bt;
SELECT count(*) FROM copied JOIN ref USING (id)
WHERE copied.data IS DISTINCT FROM ref.data || '\x09'::bytea;
DROP TABLE copied;

-- an update of another column keeps the value; appends after it go on
UPDATE bt SET note = 'cc' WHERE id = 3;
UPDATE ref SET note = 'cc' WHERE id = 3;
SELECT * FROM toast_rows('bt');
UPDATE bt SET data = data || sized(37, 2500), note = 'ccc' WHERE id = 3;
UPDATE ref SET data = data || sized(37, 2500), note = 'ccc' WHERE id = 3;
SELECT differ(), slices_differ();

-- appends that abort: the row reads what it had; the next append numbers
-- its chunks past the aborted ones, in a run of their own
BEGIN;
UPDATE bt SET data = data || sized(38, 8000) WHERE id = 2;
ROLLBACK;
SELECT differ(), runs(2);
UPDATE bt SET data = data || sized(39, 4000) WHERE id = 2;
UPDATE ref SET data = data || sized(39, 4000) WHERE id = 2;
SELECT differ(), slices_differ(), runs(2);
-- in a subtransaction, and twice in a transaction
BEGIN;
SAVEPOINT s;
UPDATE bt SET data = data || sized(40, 4000) WHERE id = 4;
ROLLBACK TO s;
UPDATE bt SET data = data || sized(41, 4000) WHERE id = 4;
UPDATE bt SET data = data || sized(42, 4000) WHERE id = 4;
COMMIT;
UPDATE ref SET data = data || sized(41, 4000) || sized(42, 4000) WHERE id = 4;
SELECT differ(), slices_differ(), runs(4);

-- a value whose aborted appends leave it too many runs is stored anew
DO $$
BEGIN
	FOR i IN 1 .. 34 LOOP
		BEGIN
			UPDATE bt SET data = data || sized(100 + i, 2000) WHERE id = 2;
			RAISE EXCEPTION 'abort';
		EXCEPTION WHEN raise_exception THEN
		END;
		UPDATE bt SET data = data || sized(200 + i, 2000) WHERE id = 2;
		UPDATE ref SET data = data || sized(200 + i, 2000) WHERE id = 2;
	END LOOP;
END $$;
SELECT differ(), slices_differ(), runs(2) BETWEEN 1 AND 32 AS runs_bounded;

-- replacing a value deletes its chunks; deleting the row too
VACUUM bt;
SELECT * FROM toast_rows('bt');
UPDATE bt SET data = sized(50, 9000) WHERE id = 2;
UPDATE ref SET data = sized(50, 9000) WHERE id = 2;
DELETE FROM bt WHERE id = 4;
DELETE FROM ref WHERE id = 4;
VACUUM bt;
SELECT differ(), slices_differ();
SELECT * FROM toast_rows('bt');
SELECT sum(chunks + (tail_size > 0)::int) AS live_chunks
FROM bt, bytea_appendable_storage(data);

-- INSERT .. ON CONFLICT DO UPDATE appends as UPDATE does
INSERT INTO bt VALUES (3, 'ccc', sized(60, 10)) ON CONFLICT (id)
	DO UPDATE SET data = bt.data || excluded.data;
INSERT INTO ref VALUES (3, 'ccc', sized(60, 10)) ON CONFLICT (id)
	DO UPDATE SET data = ref.data || excluded.data;
SELECT differ();

-- with the overrides off, || is the builtin's and the value is stored anew
SET jsonb_toaster.override_builtins = off;
UPDATE bt SET data = data || sized(61, 3000) WHERE id = 3;
RESET jsonb_toaster.override_builtins;
UPDATE ref SET data = data || sized(61, 3000) WHERE id = 3;
SELECT differ(), runs(3);

-- a compressed column's values are stored uncompressed by the toaster
CREATE TABLE btc (id int, data bytea COMPRESSION pglz);
ALTER TABLE btc ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO btc SELECT 1, convert_to(repeat('abc', 10000), 'UTF8');
UPDATE btc SET data = data || convert_to(repeat('abc', 1000), 'UTF8');
SELECT length(data), pg_column_size(data) > length(data) AS uncompressed,
	data = convert_to(repeat('abc', 11000), 'UTF8') AS same
FROM btc;
DROP TABLE btc;

-- Rows standard TOAST stores, the toaster stores too: its pointer takes a
-- few dozen bytes of the row whatever the value's tail, with a wide PLAIN
-- column, five such columns, and their tails grown in one UPDATE
CREATE TABLE btbig (id int, p text STORAGE PLAIN, data bytea);
ALTER TABLE btbig ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO btbig VALUES (1, repeat('x', 6500), sized(80, 2676 + 1960));
SELECT (bytea_appendable_storage(data)).form, data = sized(80, 2676 + 1960) FROM btbig;
UPDATE btbig SET data = data || sized(81, 1900);
SELECT (bytea_appendable_storage(data)).form, data = sized(80, 2676 + 1960) || sized(81, 1900)
FROM btbig;
-- opted in after the rows were written, then rewritten
CREATE TABLE btvf (id int, p text STORAGE PLAIN, data bytea);
INSERT INTO btvf VALUES (1, repeat('x', 6500), sized(82, 2676 + 1960));
ALTER TABLE btvf ALTER COLUMN data SET (toaster = 'bytea_appendable');
VACUUM FULL btvf;
SELECT data = sized(82, 2676 + 1960) FROM btvf;
CREATE TABLE btfive (id int, a bytea, b bytea, c bytea, d bytea, e bytea);
ALTER TABLE btfive ALTER COLUMN a SET (toaster = 'bytea_appendable'),
	ALTER COLUMN b SET (toaster = 'bytea_appendable'),
	ALTER COLUMN c SET (toaster = 'bytea_appendable'),
	ALTER COLUMN d SET (toaster = 'bytea_appendable'),
	ALTER COLUMN e SET (toaster = 'bytea_appendable');
INSERT INTO btfive SELECT 1, sized(83, 4636), sized(84, 4636), sized(85, 4636),
	sized(86, 4636), sized(87, 4636);
-- row 2's columns become the toaster's one at a time, with short tails
INSERT INTO btfive SELECT 2, sized(83, 1000), sized(84, 1000), sized(85, 1000),
	sized(86, 1000), sized(87, 1000);
UPDATE btfive SET a = a || sized(83, 1696) WHERE id = 2;
UPDATE btfive SET b = b || sized(84, 1696) WHERE id = 2;
UPDATE btfive SET c = c || sized(85, 1696) WHERE id = 2;
UPDATE btfive SET d = d || sized(86, 1696) WHERE id = 2;
UPDATE btfive SET e = e || sized(87, 1696) WHERE id = 2;
SELECT (bytea_appendable_storage(a)).form AS a, (bytea_appendable_storage(e)).form AS e,
	(bytea_appendable_storage(e)).tail_size FROM btfive WHERE id = 2;
UPDATE btfive SET a = a || sized(88, 1900), b = b || sized(88, 1900),
	c = c || sized(88, 1900), d = d || sized(88, 1900), e = e || sized(88, 1900);
SELECT id, a = CASE id WHEN 1 THEN sized(83, 4636) ELSE sized(83, 1000) || sized(83, 1696) END
		|| sized(88, 1900) AS a,
	e = CASE id WHEN 1 THEN sized(87, 4636) ELSE sized(87, 1000) || sized(87, 1696) END
		|| sized(88, 1900) AS e,
	(bytea_appendable_storage(a)).form AS a_form, (bytea_appendable_storage(e)).form AS e_form
FROM btfive ORDER BY id;
-- a domain over bytea is bytea
CREATE DOMAIN blob_d AS bytea;
CREATE TABLE btdom (id int, data blob_d);
ALTER TABLE btdom ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO btdom VALUES (1, sized(89, 5000));
UPDATE btdom SET data = data || sized(90, 3000);
SELECT (bytea_appendable_storage(data)).form, data = sized(89, 5000) || sized(90, 3000)
FROM btdom;
DROP TABLE btbig, btvf, btfive, btdom;
DROP DOMAIN blob_d;

-- length() reads no chunk, substring() only the chunks it covers (blocks
-- of the TOAST relation this transaction read)
CREATE TABLE btread (id int, data bytea);
ALTER TABLE btread ALTER COLUMN data SET (toaster = 'bytea_appendable');
CREATE TABLE refread (id int, data bytea STORAGE EXTERNAL);
INSERT INTO btread VALUES (1, sized(91, 2676 * 300 + 10));
INSERT INTO refread SELECT * FROM btread;
CREATE FUNCTION toast_blocks(rel regclass) RETURNS bigint LANGUAGE sql AS $$
SELECT pg_stat_get_xact_blocks_fetched(reltoastrelid) FROM pg_class WHERE oid = rel
$$;
BEGIN;
SELECT toast_blocks('btread') AS b0 \gset
SELECT length(data) FROM btread;
SELECT toast_blocks('btread') - :b0 AS length_blocks;
-- within chunk 150 (page 50), then across chunks 149 and 150
SELECT toast_blocks('btread') AS b0 \gset
SELECT md5(substring(b.data FROM 2676 * 150 + 100 FOR 20)) =
	md5(substring(r.data FROM 2676 * 150 + 100 FOR 20)) AS same_slice
FROM btread b, refread r;
SELECT toast_blocks('btread') - :b0 AS one_chunk_blocks;
SELECT toast_blocks('btread') AS b0 \gset
SELECT md5(substring(b.data FROM 2676 * 150 - 9 FOR 20)) =
	md5(substring(r.data FROM 2676 * 150 - 9 FOR 20)) AS same_slice
FROM btread b, refread r;
SELECT toast_blocks('btread') - :b0 AS two_chunks_blocks;
COMMIT;
DROP TABLE btread, refread;
DROP FUNCTION toast_blocks(regclass);

-- a column of another type that names the toaster keeps standard TOAST
CREATE TABLE btt (id int, data text);
ALTER TABLE btt ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO btt SELECT 1, repeat(md5('x'), 500);
UPDATE btt SET data = data || 'y';
SELECT length(data), data = repeat(md5('x'), 500) || 'y' FROM btt;
DROP TABLE btt;

-- rewrites read each value back and store it anew, readable and appendable
VACUUM FULL bt;
SELECT differ(), slices_differ();
CLUSTER bt USING bt_pkey;
SELECT differ(), slices_differ();
ALTER TABLE bt ALTER COLUMN data TYPE bytea USING data || '\x0a'::bytea;
UPDATE ref SET data = data || '\x0a'::bytea;
SELECT differ(), slices_differ();
UPDATE bt SET data = data || sized(70, 4100);
UPDATE ref SET data = data || sized(70, 4100);
SELECT differ(), slices_differ();
VACUUM bt;
SELECT form, count(*) FROM bt, bytea_appendable_storage(data) GROUP BY 1 ORDER BY 1;
SELECT (toast_rows('bt')).chunks =
	(SELECT sum(chunks + (tail_size > 0)::int) FROM bt, bytea_appendable_storage(data))
	AS chunks_all_live;
-- a materialized view's column opts in too: REFRESH stores its values into
-- a new heap, frozen, as COPY FREEZE does
CREATE MATERIALIZED VIEW btmv AS SELECT id, data FROM bt;
ALTER MATERIALIZED VIEW btmv ALTER COLUMN data SET (toaster = 'bytea_appendable');
REFRESH MATERIALIZED VIEW btmv;
SELECT count(*) AS rows, count(*) FILTER (WHERE btmv.data IS NOT DISTINCT FROM bt.data) AS same,
	count(*) FILTER (WHERE (bytea_appendable_storage(btmv.data)).form = 'appendable')
		= count(*) FILTER (WHERE length(bt.data) >= 2676) AS large_ones_appendable
FROM btmv JOIN bt USING (id);
SELECT md5(substring(m.data FROM 2676 * 2 - 5 FOR 10)) =
	md5(substring(b.data FROM 2676 * 2 - 5 FOR 10)) AS same_slice
FROM btmv m JOIN bt b USING (id) WHERE b.id = 3;
DROP MATERIALIZED VIEW btmv;

-- a damaged pointer or chunk raises an ERROR for data corruption
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;
RESET client_min_messages;
CREATE FUNCTION le(v bigint, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
SELECT string_agg(set_byte('\x00'::bytea, 0, ((v >> (8 * i)) & 255)::int), ''
		ORDER BY i)
FROM generate_series(0, n - 1) i
$$;
-- row 3's pointer with bytes b at byte pos (from 0): header at 2, payload
-- at 16 (TOAST relation, value, runs, tail length, tail chunk, first chunk
-- of the newest write, its transaction, then the runs from 40)
CREATE FUNCTION damaged(pos int, b bytea) RETURNS bytea LANGUAGE sql AS $$
SELECT jt_test_bytea_from_pointer_bytes(
	overlay(jt_test_custom_pointer_bytes(data) PLACING b FROM pos + 1))
FROM bt WHERE id = 3
$$;
-- the error a query raises, with its detail, object ids masked
CREATE FUNCTION try(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; d text;
BEGIN
	EXECUTE query INTO r;
	RETURN r;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
	RETURN regexp_replace(SQLSTATE || ': ' || SQLERRM ||
		coalesce(' (' || nullif(d, '') || ')', ''),
		'(toast value |pg_toast_|relation |Its chunks and tail hold |header says |Written by transaction )[0-9]+',
		'\1N', 'g');
END $$;
SELECT (SELECT get_byte(jt_test_custom_pointer_bytes(data), 24) FROM bt WHERE id = 3)
	AS nruns;
SELECT d.kase, try(format(
	'SELECT md5(damaged(%s, %L::bytea)) = md5(data) FROM bt WHERE id = 3',
	d.pos, d.b))
FROM (VALUES
	('intact', 0, ''::bytea),
	('version', 15, '\x07'),
	('version of development builds', 15, '\x01'),
	('no runs', 24, le(0, 2)),
	('too many runs', 24, le(33, 2)),
	('tail of a chunk', 26, le(2676, 2)),
	('raw size', 6, le((SELECT length(data) + 5 FROM bt WHERE id = 3), 4)),
	('empty run', 44, le(0, 4)),
	('negative run', 40, le(4294967295, 4)),
	('run shifted', 40, le(1, 4)),
	('tail chunk above 0', 28, le(5, 4)),
	('no such tail chunk', 28, le(4294967295 - 1000, 4)),
	('newest chunks past the runs', 32, le(1000000, 4)),
	('no writer', 36, le(0, 4)),
	('another writer', 36, le(3, 4)),
	('no such value', 20, le(1, 4)),
	('no relation', 16, le(0, 4)),
	('not a TOAST relation', 16, le('pg_class'::regclass::oid::bigint, 4)),
	('an append', 15, '\x80')) d (kase, pos, b);
-- one chunk more than the value has, the sizes agreeing
SELECT try($q$SELECT md5(jt_test_bytea_from_pointer_bytes(
	overlay(overlay(jt_test_custom_pointer_bytes(data)
		PLACING le(length(data) + 2676 + 4, 4) FROM 7)
		PLACING le(length(data) / 2676 + 1, 4) FROM 45)))
	FROM bt WHERE id = 3$q$) AS one_chunk_more;
DROP FUNCTION le(bigint, int), damaged(int, bytea), try(text);
DROP EXTENSION jsonb_toaster_test;

DROP TABLE bt, ref;
DROP FUNCTION rnd(int, int), sized(int, int), toast_rows(regclass), differ(),
	slices_differ(), runs(int);

-- The way out: jsonb_toaster_convert_column() stores a bytea column's
-- values with standard TOAST; until then DROP EXTENSION is refused.  In a
-- database of its own, so that no other test's column is listed.
\set regress_db :DBNAME
CREATE DATABASE regress_jt_bytea_out;
\c regress_jt_bytea_out
SET client_min_messages = warning;
CREATE EXTENSION jsonb_toaster;
RESET client_min_messages;
CREATE FUNCTION sized(seed int, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
SELECT substring(string_agg(sha256(convert_to(seed || '/' || i, 'UTF8')), '' ORDER BY i)
	FROM 1 FOR n)
FROM generate_series(0, (n - 1) / 32) i
$$;
CREATE TABLE out1 (id int, data bytea);
ALTER TABLE out1 ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO out1 SELECT g, sized(g, 5000) FROM generate_series(1, 3) g;
UPDATE out1 SET data = data || '\x01'::bytea;
SELECT id, form, runs, chunks, tail_size FROM out1, bytea_appendable_storage(data)
ORDER BY id;
DROP EXTENSION jsonb_toaster;
SELECT jsonb_toaster_convert_column('out1', 'data');
SELECT form, count(*) FROM out1, bytea_appendable_storage(data) GROUP BY 1;
SELECT attoptions FROM pg_attribute
WHERE attrelid = 'out1'::regclass AND attname = 'data';
SELECT count(*) AS differ FROM out1 WHERE data <> sized(id, 5000) || '\x01'::bytea;
DROP EXTENSION jsonb_toaster;
\c :regress_db
DROP DATABASE regress_jt_bytea_out;
