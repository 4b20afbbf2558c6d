--
-- Large documents (patched servers only): a container of at least 2048
-- range sizes is cut into many ranges, more than a row's directory may
-- hold, and the tree holding their directory lies outside the row
-- (format version 7) whatever else it holds.  Reads get the builtins'
-- answers and fetch the tree and the parts they need; partial updates keep
-- the parts, and the tree part or edits of it; rewrites, deletes and
-- rollbacks keep exactly what live rows name.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;

-- containers of 512 kB are large with ranges of 64 bytes
SET jsonb_toaster.range_size = 64;
-- items: an array of about 650 kB; dict: an object of about 900 kB
CREATE FUNCTION big(id int, n int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('meta', jsonb_build_object('v', id, 'w', 'x'),
		'note', 'short',
		'items', (SELECT jsonb_agg(jsonb_build_object('k', i, 'name', md5((id * 100000 + i)::text)))
				  FROM generate_series(1, n) i),
		'dict', (SELECT jsonb_object_agg('key' || lpad(i::text, 6, '0'), md5((id + i)::text) || md5(i::text))
				 FROM generate_series(1, n) i))
$$;

CREATE TABLE plain (id int PRIMARY KEY, note text, jb jsonb);
INSERT INTO plain SELECT i, NULL, big(i, 9000) FROM generate_series(1, 3) i;
INSERT INTO plain VALUES (4, NULL, big(4, 300));
CREATE TABLE t (id int PRIMARY KEY, note text, jb jsonb);
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t SELECT * FROM plain;

-- the layout: the large containers in over 64 ranges each, the tree (with
-- meta and note) one more part, a short row; the small document keeps its
-- tree in the row
CREATE VIEW layout AS SELECT id, jt_test_format_version(jb) AS version,
	CASE
		WHEN jt_test_tree_edits(jb) IS NULL THEN 'row'
		WHEN jt_test_tree_edits(jb) > 0 THEN 'edited'
		ELSE 'outside' END AS tree_state,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree') AS tree_parts,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE path = '{items}') AS items_ranges,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE path = '{dict}') AS dict_ranges,
	(jsonb_toaster_storage(jb)).inline_size AS inline_size
FROM t;
SELECT id, version, tree_state, tree_parts, items_ranges > 64 AS many_items,
	dict_ranges > 64 AS many_dict, inline_size < 100 AS short_row
FROM layout ORDER BY id;
SELECT jt_test_toast_ok('t');

-- reads: the builtins' answers
CREATE FUNCTION differ() RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM t FULL JOIN plain p USING (id)
	WHERE t.jb IS DISTINCT FROM p.jb
		OR t.jb::text IS DISTINCT FROM p.jb::text
		OR jt_test_flat_bytes(t.jb) IS DISTINCT FROM jt_test_flat_bytes(p.jb)
		OR (t.jb -> 'meta') IS DISTINCT FROM (p.jb -> 'meta')
		OR (t.jb ->> 'note') IS DISTINCT FROM (p.jb ->> 'note')
		OR (t.jb #> '{items,0}') IS DISTINCT FROM (p.jb #> '{items,0}')
		OR (t.jb #> '{items,2999,name}') IS DISTINCT FROM (p.jb #> '{items,2999,name}')
		OR (t.jb #> '{items,-1}') IS DISTINCT FROM (p.jb #> '{items,-1}')
		OR (t.jb -> 'items' -> 5999) IS DISTINCT FROM (p.jb -> 'items' -> 5999)
		OR (t.jb #>> '{dict,key000001}') IS DISTINCT FROM (p.jb #>> '{dict,key000001}')
		OR (t.jb #>> '{dict,key004321}') IS DISTINCT FROM (p.jb #>> '{dict,key004321}')
		OR (t.jb #> '{dict,key9}') IS DISTINCT FROM (p.jb #> '{dict,key9}')
		OR (t.jb -> 'dict' ? 'key005999') IS DISTINCT FROM (p.jb -> 'dict' ? 'key005999')
		OR (t.jb ? 'items') IS DISTINCT FROM (p.jb ? 'items')
		OR (t.jb['items'][1234]['k']) IS DISTINCT FROM (p.jb['items'][1234]['k'])
		OR (t.jb['dict']['key000777']) IS DISTINCT FROM (p.jb['dict']['key000777'])
		OR jsonb_path_query_first(t.jb, '$.items[4000].name') IS DISTINCT FROM
		   jsonb_path_query_first(p.jb, '$.items[4000].name')
		OR jsonb_path_query_first(t.jb, '$.items[last].k') IS DISTINCT FROM
		   jsonb_path_query_first(p.jb, '$.items[last].k')
		OR (t.jb @> '{"meta": {"w": "x"}}') IS DISTINCT FROM (p.jb @> '{"meta": {"w": "x"}}')
		OR jsonb_array_length(t.jb -> 'items') IS DISTINCT FROM jsonb_array_length(p.jb -> 'items')
		OR (SELECT count(*) FROM jsonb_each(t.jb -> 'dict')) <> (SELECT count(*) FROM jsonb_each(p.jb -> 'dict'))
$$;
SELECT differ();

-- reading one element fetches the tree and the range holding it: a few
-- of the thousands of chunks the document takes
SELECT jt_test_toast_fetches('t', $$SELECT jb #> '{items,3000}', jb #>> '{dict,key003000}' FROM t WHERE id = 2$$)
		<= sum(chunks) FILTER (WHERE kind = 'tree') + 2 * max(chunks) FILTER (WHERE kind <> 'tree')
	AS two_ranges,
	jt_test_toast_fetches('t', $$SELECT jb #> '{items,3000}' FROM t WHERE id = 2$$) * 20 < sum(chunks)
	AS a_few_chunks
FROM t, jsonb_toaster_parts(jb) WHERE id = 2;

-- an UPDATE of another column keeps the pointer as it is
CREATE TEMP TABLE before AS SELECT id, jb::text AS doc,
	(jsonb_toaster_storage(jb)).inline_size FROM t;
UPDATE t SET note = 'n' || id;
UPDATE plain SET note = 'n' || id;
SELECT count(*) AS changed FROM t JOIN before b USING (id)
WHERE (jsonb_toaster_storage(t.jb)).inline_size <> b.inline_size OR t.jb::text <> b.doc;
DROP TABLE before;

-- partial updates: a change within a range, kept as a delta, names the
-- old tree part; a change of a short field edits the tree (the row keeps
-- the edits); a key added makes a tree of another size, written alone; a
-- range changed whole is written with the tree
CREATE TEMP TABLE seen (id int, step int, state text, tree_parts bigint, ranges bigint);
CREATE FUNCTION note(step int) RETURNS void LANGUAGE sql AS $$
	INSERT INTO seen SELECT id, step, tree_state, tree_parts, items_ranges + dict_ranges
	FROM layout WHERE id <= 3
$$;
UPDATE t SET jb = jsonb_set(jb, '{items,3000,name}', '"changed"') WHERE id = 1;
UPDATE plain SET jb = jsonb_set(jb, '{items,3000,name}', '"changed"') WHERE id = 1;
UPDATE t SET jb = jsonb_set(jb, '{meta,v}', '100') WHERE id = 2;
UPDATE plain SET jb = jsonb_set(jb, '{meta,v}', '100') WHERE id = 2;
UPDATE t SET jb['dict']['key002000'] = '"set"' WHERE id = 3;
UPDATE plain SET jb['dict']['key002000'] = '"set"' WHERE id = 3;
SELECT note(1);
UPDATE t SET jb = jb || '{"added": [1, 2, 3]}' WHERE id IN (1, 4);
UPDATE plain SET jb = jb || '{"added": [1, 2, 3]}' WHERE id IN (1, 4);
UPDATE t SET jb = jb - 'note' WHERE id = 2;
UPDATE plain SET jb = jb - 'note' WHERE id = 2;
UPDATE t SET jb = jsonb_set(jb, '{items,100}', to_jsonb(repeat('r', 3000))) WHERE id = 3;
UPDATE plain SET jb = jsonb_set(jb, '{items,100}', to_jsonb(repeat('r', 3000))) WHERE id = 3;
SELECT note(2);
UPDATE t SET jb = jsonb_insert(jb, '{items,10}', '{"inserted": true}') WHERE id = 1;
UPDATE plain SET jb = jsonb_insert(jb, '{items,10}', '{"inserted": true}') WHERE id = 1;
UPDATE t SET jb = jb #- '{items,5998}' WHERE id = 2;
UPDATE plain SET jb = jb #- '{items,5998}' WHERE id = 2;
UPDATE t SET jb = jb #- '{dict,key000003}' WHERE id = 3;
UPDATE plain SET jb = jb #- '{dict,key000003}' WHERE id = 3;
SELECT note(3);
SELECT id, string_agg(state || '/' || tree_parts, ' ' ORDER BY step) AS states,
	bool_and(ranges > 128) AS many_ranges
FROM seen GROUP BY id ORDER BY id;
SELECT differ();
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a document sent whole: the general path shares its unchanged parts
-- with the old value, and writes the tree with the parts it writes
UPDATE t SET jb = (SELECT jsonb_set(p.jb, '{items,4500}', '{"whole": 1}') FROM plain p WHERE p.id = t.id)
WHERE id = 2;
UPDATE plain SET jb = jsonb_set(jb, '{items,4500}', '{"whole": 1}') WHERE id = 2;
SELECT (SELECT count(*) FROM jsonb_toaster_parts(jb) p WHERE p.value_id IN
		(SELECT value_id FROM jsonb_toaster_parts(jb) GROUP BY 1 ORDER BY count(*) DESC LIMIT 1))
	> 200 AS most_shared,
	tree_state
FROM t JOIN layout USING (id) WHERE id = 2;
SELECT differ();
VACUUM t;
SELECT jt_test_toast_ok('t');

-- a transaction that reads the documents, changes them and rolls back
BEGIN;
SELECT count(*) FROM t WHERE jb::text LIKE '%"inserted"%';
UPDATE t SET jb = jb || '{"x": 1}' WHERE id = 3;
UPDATE t SET jb = jsonb_set(jb, '{items,1}', '1') WHERE id = 3;
DELETE FROM t WHERE id = 2;
ROLLBACK;
SELECT differ();

-- rewrites keep every value, and the trees
VACUUM FULL t;
SELECT differ(), jt_test_toast_ok('t');
CLUSTER t USING t_pkey;
SELECT differ(), jt_test_toast_ok('t');
ALTER TABLE t ALTER COLUMN note TYPE varchar(20);
SELECT differ(), jt_test_toast_ok('t');
SELECT id, version, tree_state, tree_parts FROM layout ORDER BY id;

-- a document that shrinks below the threshold takes its tree back to the
-- row; a row deleted takes its values with it
UPDATE t SET jb = jb - 'dict' ||
	jsonb_build_object('items', jsonb_path_query_array(jb, '$.items[0 to 199]'))
WHERE id = 3;
UPDATE plain SET jb = jb - 'dict' ||
	jsonb_build_object('items', jsonb_path_query_array(jb, '$.items[0 to 199]'))
WHERE id = 3;
DELETE FROM t WHERE id = 1;
DELETE FROM plain WHERE id = 1;
VACUUM t;
SELECT differ(), jt_test_toast_ok('t');
SELECT id, tree_state, tree_parts FROM layout ORDER BY id;

-- a large container of a few long entries (64 at most) is planned as any
-- other, its directory fitted to the row
CREATE FUNCTION files(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('id', id, 'files',
		(SELECT jsonb_object_agg(lpad(i::text, 100, 'f'),
			(SELECT string_agg(md5((id * i)::text || j::text), '') FROM generate_series(1, 320) j))
		 FROM generate_series(1, 60) i))
$$;
INSERT INTO t SELECT 6, NULL, files(6);
INSERT INTO plain SELECT 6, NULL, files(6);
SELECT id, tree_state, inline_size <= 2000 AS fits FROM layout WHERE id = 6;
-- a long value set in a document whose tree lies outside the row leaves
-- the tree as a part, as it would in a document stored whole
UPDATE t SET jb['blob'] = to_jsonb((SELECT string_agg(md5(j::text), '') FROM generate_series(1, 3000) j))
WHERE id = 2;
UPDATE plain SET jb['blob'] = to_jsonb((SELECT string_agg(md5(j::text), '') FROM generate_series(1, 3000) j))
WHERE id = 2;
SELECT id, tree_state, (SELECT raw_size < 40000 FROM jsonb_toaster_parts(jb) WHERE kind = 'tree') AS small_tree,
	(SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE path = '{blob}') AS blob_parts
FROM t JOIN layout USING (id) WHERE id = 2;
SELECT differ();

-- format version 6 writes no tree outside the row: sixteen ranges at most
SET jsonb_toaster.format_version = 6;
INSERT INTO t SELECT 5, NULL, big(5, 9000);
INSERT INTO plain SELECT 5, NULL, big(5, 9000);
RESET jsonb_toaster.format_version;
SELECT id, version, tree_state, items_ranges <= 64 AS row_directory FROM layout WHERE id = 5;
SELECT differ();

DROP VIEW layout;
DROP TABLE t, plain, seen;
DROP FUNCTION big(int, int), files(int), differ(),
	note(int);
RESET jsonb_toaster.range_size;
