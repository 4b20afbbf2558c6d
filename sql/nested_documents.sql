--
-- Nested documents (patched servers only): a long value of the root that
-- is mostly one container is opened (format version 8): it stays in the
-- tree, as the root does, and its own long values leave in its place, so
-- that {"data": {"items": [...], "n": 5}} keeps items in ranges of its
-- own.  Reads get the builtins' answers and fetch the ranges they need;
-- partial updates through opened objects change one part; rewrites and
-- deletes keep exactly what live rows name.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- values of 32 kB and more may be opened with ranges of 64 bytes
SET jsonb_toaster.range_size = 64;
-- data: a 70 kB object of three keys, items its bulk; deep: objects down
-- to a 60 kB object; list: an array, a long array its bulk; wide: items
-- again, with more short fields than the tree takes
CREATE FUNCTION nest(id int, n int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('meta', jsonb_build_object('v', id),
		'data', jsonb_build_object('n', 5, 'next', 'page' || id,
			'items', (SELECT jsonb_agg(jsonb_build_object('k', i, 'name', md5((id * 1000 + i)::text)))
					  FROM generate_series(1, n) i)),
		'deep', jsonb_build_object('a', jsonb_build_object('b', jsonb_build_object('x', 1,
			'c', (SELECT jsonb_object_agg('key' || lpad(i::text, 5, '0'), md5((id + i)::text))
				  FROM generate_series(1, n) i)))),
		'list', jsonb_build_array((SELECT jsonb_agg(i * id) FROM generate_series(1, 4 * n) i), 'tail'),
		'wide', (SELECT jsonb_object_agg('f' || i, i) FROM generate_series(1, 200) i) ||
			jsonb_build_object('items', (SELECT jsonb_agg(md5(i::text)) FROM generate_series(1, n) i)))
$$;

CREATE TABLE plain (id int PRIMARY KEY, note text, jb jsonb);
INSERT INTO plain SELECT i, NULL, nest(i, 1000) FROM generate_series(1, 3) i;
-- too short to be opened
INSERT INTO plain VALUES (4, NULL, nest(4, 100));
CREATE TABLE t (id int PRIMARY KEY, note text, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t SELECT * FROM plain;

-- the layout: where parts lie, and in how many ranges
CREATE VIEW layout AS SELECT id, p.path::text AS path, count(*) AS ranges
FROM t, jsonb_toaster_parts(jb) p WHERE p.kind <> 'tree' GROUP BY 1, 2;
SELECT id, path, ranges > 4 AS ranged FROM layout ORDER BY id, path;
-- a tree with opened values says format version 8 (earlier readers refuse it)
SELECT id, jt_test_format_version(jb) AS version FROM t ORDER BY id;

-- format version 7 opens nothing
SET jsonb_toaster.format_version = 7;
CREATE TABLE t7 (id int PRIMARY KEY, jb jsonb);
ALTER TABLE t7 ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t7 SELECT id, jb FROM plain WHERE id = 1;
RESET jsonb_toaster.format_version;
SELECT p.path::text AS path, count(*) > 0 AS parts
FROM t7, jsonb_toaster_parts(jb) p GROUP BY 1 ORDER BY 1;
SELECT t7.jb = p.jb AS same, jt_test_format_version(t7.jb) AS version
FROM t7 JOIN plain p USING (id);
DROP TABLE t7;

-- what opened values leave in the tree is bounded together: k values of
-- 22 short fields and an array each open while they fit, and the root
-- never leaves whole for them (a root of many short fields beside an
-- opened value is planned with nothing opened)
CREATE FUNCTION mdoc(k int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT CASE WHEN k <= 6 THEN (SELECT jsonb_object_agg('v' || j,
		(SELECT jsonb_object_agg('f' || i, i) FROM generate_series(1, 22) i) ||
		jsonb_build_object('items', (SELECT jsonb_agg(jsonb_build_object('k', i, 'name', md5((j * 10000 + i)::text)))
									 FROM generate_series(1, 600) i)))
		FROM generate_series(1, k) j)
	ELSE (SELECT jsonb_object_agg('r' || i, i) FROM generate_series(1, 100) i) ||
		jsonb_build_object('data', (SELECT jsonb_object_agg('f' || i, i) FROM generate_series(1, 10) i) ||
			jsonb_build_object('items', (SELECT jsonb_agg(md5(i::text)) FROM generate_series(1, 1500) i))) END
$$;
CREATE TABLE many (k int PRIMARY KEY, jb jsonb);
ALTER TABLE many ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO many SELECT k, mdoc(k) FROM generate_series(1, 7) k;
SELECT k, count(*) FILTER (WHERE p.path = '{}') AS root_parts,
	count(DISTINCT p.path) FILTER (WHERE cardinality(p.path) = 2) AS opened,
	count(DISTINCT p.path) FILTER (WHERE cardinality(p.path) = 1) AS whole
FROM many, jsonb_toaster_parts(jb) p WHERE p.kind <> 'tree' GROUP BY k ORDER BY k;
SELECT count(*) AS differ FROM many WHERE jb <> mdoc(k) OR jb::text <> mdoc(k)::text;
DROP TABLE many;
DROP FUNCTION mdoc(int);

-- an opened value whose bulk is one part small enough once compressed:
-- the skeleton keeps it in the row, and says format version 8 too
CREATE TABLE inl (id int PRIMARY KEY, jb jsonb);
ALTER TABLE inl ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO inl SELECT 1, (SELECT jsonb_object_agg('f' || i, 'value ' || i) FROM generate_series(1, 30) i) ||
	jsonb_build_object('data', jsonb_build_object('n', 5, 'items', jsonb_build_array(repeat('ab', 20000))));
SELECT jt_test_format_version(jb) AS version, (jsonb_toaster_storage(jb)).form,
	(SELECT string_agg(p.path::text || ':' || p.value_id, ' ') FROM jsonb_toaster_parts(jb) p) AS parts,
	jb = (SELECT jsonb_object_agg('f' || i, 'value ' || i) FROM generate_series(1, 30) i) ||
		jsonb_build_object('data', jsonb_build_object('n', 5, 'items', jsonb_build_array(repeat('ab', 20000))))
		AS same
FROM inl;
DROP TABLE inl;

-- reads: the builtins' answers
CREATE FUNCTION differ() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM t FULL JOIN plain p USING (id)
	WHERE t.jb IS DISTINCT FROM p.jb
		OR t.jb::text IS DISTINCT FROM p.jb::text
		OR jt_test_flat_bytes(t.jb) IS DISTINCT FROM jt_test_flat_bytes(p.jb)
		OR (t.jb -> 'meta') IS DISTINCT FROM (p.jb -> 'meta')
		OR (t.jb -> 'data' -> 'n') IS DISTINCT FROM (p.jb -> 'data' -> 'n')
		OR (t.jb #>> '{data,next}') IS DISTINCT FROM (p.jb #>> '{data,next}')
		OR (t.jb #> '{data,items,0}') IS DISTINCT FROM (p.jb #> '{data,items,0}')
		OR (t.jb #> '{data,items,500,name}') IS DISTINCT FROM (p.jb #> '{data,items,500,name}')
		OR (t.jb #> '{data,items,-1}') IS DISTINCT FROM (p.jb #> '{data,items,-1}')
		OR (t.jb -> 'data' -> 'items' -> 999) IS DISTINCT FROM (p.jb -> 'data' -> 'items' -> 999)
		OR (t.jb #> '{data,missing,1}') IS DISTINCT FROM (p.jb #> '{data,missing,1}')
		OR (t.jb #>> '{deep,a,b,c,key00001}') IS DISTINCT FROM (p.jb #>> '{deep,a,b,c,key00001}')
		OR (t.jb #>> '{deep,a,b,c,key00777}') IS DISTINCT FROM (p.jb #>> '{deep,a,b,c,key00777}')
		OR (t.jb #> '{deep,a,b,x}') IS DISTINCT FROM (p.jb #> '{deep,a,b,x}')
		OR (t.jb #> '{deep,a}' ? 'b') IS DISTINCT FROM (p.jb #> '{deep,a}' ? 'b')
		OR (t.jb #> '{list,0,3999}') IS DISTINCT FROM (p.jb #> '{list,0,3999}')
		OR (t.jb #> '{list,1}') IS DISTINCT FROM (p.jb #> '{list,1}')
		OR (t.jb #> '{wide,items,10}') IS DISTINCT FROM (p.jb #> '{wide,items,10}')
		OR (t.jb['data']['items'][321]['k']) IS DISTINCT FROM (p.jb['data']['items'][321]['k'])
		OR (t.jb['deep']['a']['b']['c']['key00042']) IS DISTINCT FROM (p.jb['deep']['a']['b']['c']['key00042'])
		OR jsonb_path_query_first(t.jb, '$.data.items[700].name') IS DISTINCT FROM
		   jsonb_path_query_first(p.jb, '$.data.items[700].name')
		OR jsonb_path_query_first(t.jb, '$.list[0][last]') IS DISTINCT FROM
		   jsonb_path_query_first(p.jb, '$.list[0][last]')
		OR jsonb_path_query_array(t.jb, '$.deep.a.b.c.* ? (@ starts with "a")') IS DISTINCT FROM
		   jsonb_path_query_array(p.jb, '$.deep.a.b.c.* ? (@ starts with "a")')
		OR (t.jb @> '{"data": {"n": 5}}') IS DISTINCT FROM (p.jb @> '{"data": {"n": 5}}')
		OR (t.jb @> '{"data": {"items": [{"k": 3}]}}') IS DISTINCT FROM (p.jb @> '{"data": {"items": [{"k": 3}]}}')
		OR JSON_VALUE(t.jb, '$.deep.a.b.c.key00900') IS DISTINCT FROM JSON_VALUE(p.jb, '$.deep.a.b.c.key00900')
		OR jsonb_array_length(t.jb #> '{data,items}') IS DISTINCT FROM jsonb_array_length(p.jb #> '{data,items}')
		OR (SELECT array_agg(k) FROM jsonb_object_keys(t.jb -> 'data') k) IS DISTINCT FROM
		   (SELECT array_agg(k) FROM jsonb_object_keys(p.jb -> 'data') k)
		OR (SELECT count(*) FROM jsonb_each(t.jb #> '{deep,a,b,c}')) <> (SELECT count(*) FROM jsonb_each(p.jb #> '{deep,a,b,c}'))
$$;
SELECT differ();

-- reading one element fetches the range holding it, not the container
SELECT jt_test_toast_fetches('t', $$SELECT jb #> '{data,items,600}' FROM t WHERE id = 2$$) * 4 <
		sum(chunks) FILTER (WHERE path = '{data,items}') AS few_items_chunks,
	jt_test_toast_fetches('t', $$SELECT jb #> '{deep,a,b,c,key00600}' FROM t WHERE id = 2$$) * 4 <
		sum(chunks) FILTER (WHERE path = '{deep,a,b,c}') AS few_deep_chunks,
	jt_test_toast_fetches('t', $$SELECT jb #> '{data,n}', jb #> '{deep,a,b,x}' FROM t WHERE id = 2$$) = 0
		AS tree_fields_in_row
FROM t, jsonb_toaster_parts(jb) WHERE id = 2;

-- partial updates through the opened objects change the part holding the
-- path (DEBUG1 says which), or the tree, for paths that end in it; paths
-- through an array of the tree are the builtin's
CREATE TABLE parts_before AS SELECT t.id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p;
CREATE FUNCTION both_ways(stmt text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format(stmt, 't');
	EXECUTE format(stmt, 'plain');
END $$;
-- (the same operators looked up first, so that no catalog cache message
-- comes with the DEBUG1 lines)
SELECT both_ways($$UPDATE %I SET jb = jsonb_insert(jb #- '{a}', '{a}', jsonb_set(jb, '{b}', '1')) WHERE false$$);
SET client_min_messages = debug1;
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{data,items,500,name}', '"changed"') WHERE id = 1$$);
SELECT both_ways($$UPDATE %I SET jb['deep']['a']['b']['c']['key00300'] = '"set"' WHERE id = 1$$);
SELECT both_ways($$UPDATE %I SET jb = jb #- '{data,items,0}' WHERE id = 2$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_insert(jb, '{data,items,-1}', '{"k": -1}', true) WHERE id = 2$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{deep,a,b,c,new}', '[1]') WHERE id = 3$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{data,items,99999}', '"appended"') WHERE id = 3$$);
RESET client_min_messages;
SELECT t.id, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS kept,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS new
FROM t, jsonb_toaster_parts(jb) p WHERE t.id <= 3 GROUP BY t.id ORDER BY t.id;
SELECT differ();
-- paths ending in the tree below the root's values change the tree alone:
-- a value kept there set, added or removed, a missing key left missing, a
-- value kept in parts replaced or removed whole (its parts dropped)
DELETE FROM parts_before;
INSERT INTO parts_before SELECT t.id, p.value_id, p.value_offset FROM t, jsonb_toaster_parts(jb) p;
SET client_min_messages = debug1;
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{data,n}', '6') WHERE id = 1$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{deep,a,b,x}', '"y"') WHERE id = 2$$);
SELECT both_ways($$UPDATE %I SET jb['data']['added']['below'] = '[7]' WHERE id = 1$$);
SELECT both_ways($$UPDATE %I SET jb = jb #- '{data,next}' WHERE id = 2$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{data,nothing,1}', '0') WHERE id = 3$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_insert(jb, '{deep,a,b,y}', '{"z": 0}') WHERE id = 3$$);
SELECT both_ways($$UPDATE %I SET jb = jb #- '{deep,a,b,c}' WHERE id = 4$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{data,items}', '[1, 2]') WHERE id = 3$$);
RESET client_min_messages;
SELECT t.id, count(*) FILTER (WHERE (p.value_id, p.value_offset) IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS kept,
	count(*) FILTER (WHERE (p.value_id, p.value_offset) NOT IN (SELECT value_id, value_offset FROM parts_before b WHERE b.id = t.id)) AS new,
	(SELECT count(*) FROM parts_before b WHERE b.id = t.id) AS before
FROM t LEFT JOIN LATERAL jsonb_toaster_parts(jb) p ON true WHERE t.id <= 4 GROUP BY t.id ORDER BY t.id;
SELECT differ();
-- the builtin's, on the document: a path through an array of the tree
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{list,0,5}', '0') WHERE id = 3$$);
SELECT differ();
-- errors are the builtin's, positions counted in the whole path
SELECT jsonb_set(jb, '{data,items,x}', '1') FROM t WHERE id = 1;
SELECT jsonb_set(jb, '{data,items,x}', '1') FROM plain WHERE id = 1;
UPDATE t SET jb['data']['items']['x'] = '1' WHERE id = 1;
UPDATE plain SET jb['data']['items']['x'] = '1' WHERE id = 1;
SELECT jsonb_insert(jb, '{deep,a,b,c,key00010}', '1') FROM t WHERE id = 1;
SELECT jsonb_insert(jb, '{deep,a,b,c,key00010}', '1') FROM plain WHERE id = 1;
SELECT jsonb_insert(jb, '{data,items}', '1') FROM t WHERE id = 1;
SELECT jsonb_insert(jb, '{data,items}', '1') FROM plain WHERE id = 1;
SELECT jsonb_insert(jb, '{data,n}', '1') FROM t WHERE id = 1;
SELECT jsonb_insert(jb, '{data,n}', '1') FROM plain WHERE id = 1;
UPDATE t SET jb['data']['n']['x'] = '1' WHERE id = 1;
UPDATE plain SET jb['data']['n']['x'] = '1' WHERE id = 1;

-- keys of the root changed: an opened value replaced or removed drops the
-- parts below it
SELECT both_ways($$UPDATE %I SET jb = jb - 'deep' WHERE id = 1$$);
SELECT both_ways($$UPDATE %I SET jb = jb || '{"data": {"replaced": [1, 2]}}' WHERE id = 2$$);
SELECT both_ways($$UPDATE %I SET jb = jsonb_set(jb, '{meta,v}', '0')$$);
SELECT differ();
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a rollback, rewrites and a delete keep exactly what live rows name
BEGIN;
UPDATE t SET jb = jsonb_set(jb, '{data,items,10}', '1');
DELETE FROM t WHERE id = 3;
ROLLBACK;
SELECT differ();
VACUUM FULL t;
SELECT differ(), jt_test_toast_ok('t');
CLUSTER t USING t_pkey;
SELECT differ(), jt_test_toast_ok('t');
DELETE FROM t WHERE id = 3;
DELETE FROM plain WHERE id = 3;
VACUUM t;
SELECT differ(), jt_test_toast_ok('t');

DROP VIEW layout;
DROP TABLE t, plain, parts_before;
DROP FUNCTION nest(int, int), differ(),
	both_ways(text);
RESET jsonb_toaster.range_size;
