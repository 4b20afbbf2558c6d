--
-- The builtin accessors served by jsonb_toaster (patched servers) return
-- what the builtins return, in the same representation: the same value,
-- and the same pg_column_size() and pg_column_compression() (a container
-- kept in one part of a skeleton was once returned as a TOAST pointer to
-- that part, compressed and of its stored size).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;

-- Documents with short fields, a long string, an object that fits one
-- part, a wide array cut into ranges and a nested path; compressible or
-- not.
CREATE FUNCTION orr_doc(i int, compressible bool) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object(
	'a', i, 'name', 'document ' || i, 'flag', i % 2 = 0, 'none', NULL::jsonb,
	'num', 12345.678 * i,
	'long', CASE WHEN compressible THEN repeat('long ' || i, 400)
			ELSE (SELECT string_agg(md5((i * j)::text), '') FROM generate_series(1, 60) j) END,
	'obj', (SELECT jsonb_object_agg('f' || j,
				CASE WHEN compressible THEN repeat('v', 40) ELSE md5((i + j)::text) END)
			FROM generate_series(1, 30) j),
	'arr', (SELECT jsonb_agg(jsonb_build_object('n', j,
				'h', CASE WHEN compressible THEN repeat('h', 32) ELSE md5((i * j + 7)::text) END))
			FROM generate_series(1, 150) j),
	'nest', jsonb_build_object('x', jsonb_build_object('y',
				(SELECT jsonb_agg(md5((i + j)::text)) FROM generate_series(1, 40) j),
				'z', 'short')))
$$;

-- every standard storage form, and skeletons
CREATE TABLE orr_main (form text, id int, jb jsonb);
ALTER TABLE orr_main ALTER COLUMN jb SET STORAGE MAIN;
CREATE TABLE orr_ext (form text, id int, jb jsonb) WITH (toast_tuple_target = 128);
CREATE TABLE orr_plain_ext (form text, id int, jb jsonb);
ALTER TABLE orr_plain_ext ALTER COLUMN jb SET STORAGE EXTERNAL;
CREATE TABLE orr_skel (form text, id int, jb jsonb);
ALTER TABLE orr_skel ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO orr_main VALUES ('plain', 1, '{"a": 1, "obj": {"f": [1, 2]}, "arr": [1, {"n": 2}]}');
INSERT INTO orr_main SELECT 'compressed', 2, orr_doc(2, true);
INSERT INTO orr_ext SELECT 'external compressed', 3, orr_doc(3, true);
INSERT INTO orr_plain_ext SELECT 'external', 4, orr_doc(4, false);
INSERT INTO orr_skel SELECT 'skeleton', i, orr_doc(i, i % 2 = 0) FROM generate_series(5, 8) i;
-- a root array stored in ranges
INSERT INTO orr_skel SELECT 'skeleton', 9,
	(SELECT jsonb_agg(jsonb_build_object('n', j, 'h', md5(j::text))) FROM generate_series(1, 200) j);
CREATE VIEW orr_docs AS
SELECT * FROM orr_main UNION ALL SELECT * FROM orr_ext
UNION ALL SELECT * FROM orr_plain_ext UNION ALL SELECT * FROM orr_skel;
SELECT d.form, d.id, s.form AS stored, s.compressed, coalesce(s.parts, 0) > 0 AS has_parts
FROM orr_docs d, jsonb_toaster_storage(d.jb) s ORDER BY d.id;

-- A result's representation, and its value.
CREATE FUNCTION orr_rep(v anyelement) RETURNS text LANGUAGE sql AS $$
	SELECT pg_column_size(v) || ' ' || coalesce(pg_column_compression(v), '-') ||
		' ' || md5(v::text)
$$;

CREATE VIEW orr_results AS
SELECT d.form, d.id, e.expr, e.rep
FROM orr_docs d, LATERAL (VALUES
	('-> a', orr_rep(d.jb -> 'a')),
	('-> num', orr_rep(d.jb -> 'num')),
	('-> none', orr_rep(d.jb -> 'none')),
	('-> long', orr_rep(d.jb -> 'long')),
	('-> obj', orr_rep(d.jb -> 'obj')),
	('-> arr', orr_rep(d.jb -> 'arr')),
	('-> nest', orr_rep(d.jb -> 'nest')),
	('-> missing', orr_rep(d.jb -> 'missing')),
	('->> a', orr_rep(d.jb ->> 'a')),
	('->> long', orr_rep(d.jb ->> 'long')),
	('->> obj', orr_rep(d.jb ->> 'obj')),
	('->> arr', orr_rep(d.jb ->> 'arr')),
	('-> 0', orr_rep(d.jb -> 0)),
	('-> 150', orr_rep(d.jb -> 150)),
	('->> -1', orr_rep(d.jb ->> -1)),
	('-> obj -> f3', orr_rep(d.jb -> 'obj' -> 'f3')),
	('-> arr -> 140', orr_rep(d.jb -> 'arr' -> 140)),
	('-> arr ->> 3', orr_rep(d.jb -> 'arr' ->> 3)),
	('#> {nest}', orr_rep(d.jb #> '{nest}')),
	('#> {nest,x}', orr_rep(d.jb #> '{nest,x}')),
	('#> {nest,x,y}', orr_rep(d.jb #> '{nest,x,y}')),
	('#> {arr,100}', orr_rep(d.jb #> '{arr,100}')),
	('#> {obj}', orr_rep(d.jb #> '{obj}')),
	('#> {}', orr_rep(d.jb #> '{}')),
	('#>> {obj}', orr_rep(d.jb #>> '{obj}')),
	('#>> {nest,x,z}', orr_rep(d.jb #>> '{nest,x,z}')),
	('#>> {arr,5,h}', orr_rep(d.jb #>> '{arr,5,h}')),
	('jsonb_object_field obj', orr_rep(jsonb_object_field(d.jb, 'obj'))),
	('jsonb_extract_path obj', orr_rep(jsonb_extract_path(d.jb, 'obj'))),
	('jsonb_extract_path nest x', orr_rep(jsonb_extract_path(d.jb, 'nest', 'x'))),
	('path_query_first $.a', orr_rep(jsonb_path_query_first(d.jb, '$.a'))),
	('path_query_first $.num', orr_rep(jsonb_path_query_first(d.jb, '$.num'))),
	('path_query_first $.none', orr_rep(jsonb_path_query_first(d.jb, '$.none'))),
	('path_query_first $.long', orr_rep(jsonb_path_query_first(d.jb, '$.long'))),
	('path_query_first $.obj', orr_rep(jsonb_path_query_first(d.jb, '$.obj'))),
	('path_query_first $.arr', orr_rep(jsonb_path_query_first(d.jb, '$.arr'))),
	('path_query_first $.nest.x', orr_rep(jsonb_path_query_first(d.jb, '$.nest.x'))),
	('path_query_first strict $.nest.x.z', orr_rep(jsonb_path_query_first(d.jb, 'strict $.nest.x.z', '{}', true))),
	('path_query_first $.arr[140]', orr_rep(jsonb_path_query_first(d.jb, '$.arr[140]'))),
	('path_query_first $.arr[140].h', orr_rep(jsonb_path_query_first(d.jb, '$.arr[140].h'))),
	('path_query_first $.arr.n', orr_rep(jsonb_path_query_first(d.jb, '$.arr.n'))),
	('path_query_first $.missing', orr_rep(jsonb_path_query_first(d.jb, '$.missing'))),
	('path_query_first $.a.b', orr_rep(jsonb_path_query_first(d.jb, '$.a.b'))),
	('path_query_first_tz $.obj.f3', orr_rep(jsonb_path_query_first_tz(d.jb, '$.obj.f3'))),
	('path_query_first $[0]', orr_rep(jsonb_path_query_first(d.jb, '$[0]'))),
	('@? $.nest.x.y', orr_rep(d.jb @? '$.nest.x.y')),
	('@? $.missing', orr_rep(d.jb @? '$.missing')),
	('@? strict $.a.b', orr_rep(d.jb @? 'strict $.a.b')),
	('@? strict $.arr.n', orr_rep(d.jb @? 'strict $.arr.n')),
	('jsonb_path_exists $.name', orr_rep(jsonb_path_exists(d.jb, '$.name'))),
	('jsonb_path_exists_tz strict $.obj.f1', orr_rep(jsonb_path_exists_tz(d.jb, 'strict $.obj.f1', '{}', true))),
	('@@ $.flag', orr_rep(d.jb @@ '$.flag')),
	('@@ $.none', orr_rep(d.jb @@ '$.none')),
	('@@ $.a', orr_rep(d.jb @@ '$.a')),
	('@@ $.missing', orr_rep(d.jb @@ '$.missing')),
	('jsonb_path_match $.flag', orr_rep(jsonb_path_match(d.jb, '$.flag', '{}', true))),
	('jsonb_path_match_tz $.none', orr_rep(jsonb_path_match_tz(d.jb, '$.none', '{}', true)))
) e(expr, rep);

CREATE TABLE orr_served AS SELECT * FROM orr_results;
SET jsonb_toaster.override_builtins = off;
CREATE TABLE orr_builtin AS SELECT * FROM orr_results;
RESET jsonb_toaster.override_builtins;

SELECT count(*) AS results, count(DISTINCT id) AS documents FROM orr_served;
-- the results that differ: none
SELECT s.form, s.id, s.expr, s.rep AS served, b.rep AS builtin
FROM orr_served s JOIN orr_builtin b USING (form, id, expr)
WHERE s.rep IS DISTINCT FROM b.rep
ORDER BY s.id, s.expr;
-- the skeletons' containers are flat values, of their raw size
SELECT s.expr, count(*) AS skeletons,
	bool_and(split_part(s.rep, ' ', 2) = '-') AS uncompressed
FROM orr_served s
WHERE s.form = 'skeleton' AND s.expr IN ('-> obj', '-> arr', '#> {obj}', '#> {nest,x}')
GROUP BY 1 ORDER BY 1;


-- A path of keys and indexes alone, every step found, is answered from
-- the node reached; the errors are still the builtin's.
CREATE FUNCTION orr_error(expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	served text;
	builtin text;
BEGIN
	BEGIN
		EXECUTE format('SELECT (%s)::text FROM orr_skel WHERE id = 6', expr) INTO served;
	EXCEPTION WHEN OTHERS THEN
		served := SQLSTATE || ': ' || SQLERRM;
	END;
	SET LOCAL jsonb_toaster.override_builtins = off;
	BEGIN
		EXECUTE format('SELECT (%s)::text FROM orr_skel WHERE id = 6', expr) INTO builtin;
	EXCEPTION WHEN OTHERS THEN
		builtin := SQLSTATE || ': ' || SQLERRM;
	END;
	SET LOCAL jsonb_toaster.override_builtins = on;
	RETURN CASE WHEN served IS NOT DISTINCT FROM builtin THEN 'same: ' ELSE 'DIFFERENT: ' END
		|| coalesce(served, '<null>');
END $$;
SELECT e, orr_error(e) FROM unnest(ARRAY[
	'jsonb_path_exists(jb, ''$.name'', ''[]'')',
	'jsonb_path_query_first(jb, ''$.obj'', ''1'')',
	'jsonb_path_match(jb, ''$.flag'', ''"x"'')',
	'jsonb_path_exists(jb, ''$.name'', ''{"x": 1}'')',
	'jsonb_path_exists(jb, ''strict $.missing'', ''{}'', false)',
	'jsonb_path_query_first(jb, ''strict $.a.b'', ''{}'', false)',
	'jsonb_path_match(jb, ''$.a'', ''{}'', false)',
	'jsonb_path_match(jb, ''$.a'', ''{}'', true)',
	'jsonb_path_match(jb, ''$.flag'', ''{}'', false)']) e;
SELECT e, orr_error(e) FROM unnest(ARRAY[
	'jsonb_path_exists(jb, ''$.name'', ''[]'', true)',
	'jsonb_path_query_first(jb, ''$.obj'', ''1'', true)',
	'jsonb_path_match(jb, ''$.flag'', ''"x"'', true)',
	'jsonb_path_query_first(''5'', ''strict $[0]'', ''{}'', false)',
	'jsonb_path_query_first(''5'', ''strict $[0]'', ''{}'', true)',
	'jsonb_path_query_first(''5'', ''lax $[0]'')']) e;
DROP FUNCTION orr_error(text);

-- The document a path of keys is narrowed to, for the SQL/JSON query
-- functions and @@, lays out every kind of leaf after keys of every length
-- modulo 4 (the padding before numerics and containers), and chains of 32
-- keys (written in one pass) and of 33 (through the tree of chains).
CREATE TABLE orr_chain (id int, jb jsonb);
ALTER TABLE orr_chain ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO orr_chain SELECT 1, jsonb_build_object(
	'a', jsonb_build_object('n', 1.5, 's', 'x', 'e', '', 't', true, 'f', false,
							'z', NULL::jsonb, 'o', jsonb_build_object('k', 2),
							'l', jsonb_build_array(1, 2)),
	'bb', jsonb_build_object('n', -7), 'ccc', jsonb_build_object('n', 123456789.25),
	'dddd', jsonb_build_object('n', 0, 'o', '{}'::jsonb),
	'big', repeat('b', 3000));
UPDATE orr_chain SET jb = jsonb_set(jb, '{deep32}',
	(SELECT ('{"x": ' || repeat('{"x": ', 30) || '1.25' || repeat('}', 30) || '}')::jsonb));
UPDATE orr_chain SET jb = jsonb_set(jb, '{deep33}',
	(SELECT ('{"x": ' || repeat('{"x": ', 31) || '1.25' || repeat('}', 31) || '}')::jsonb));
SELECT (jsonb_toaster_storage(jb)).form FROM orr_chain;
CREATE TABLE orr_chain_paths (p text);
INSERT INTO orr_chain_paths
SELECT '$.' || k || '.' || l
FROM unnest(ARRAY['a', 'bb', 'ccc', 'dddd']) k,
	 unnest(ARRAY['n', 's', 'e', 't', 'f', 'z', 'o', 'l', 'o.k']) l
UNION ALL SELECT '$.deep32' || repeat('.x', 31)
UNION ALL SELECT '$.deep33' || repeat('.x', 32);
CREATE VIEW orr_chain_results AS
SELECT p.p, JSON_QUERY(c.jb, p.p::jsonpath)::text AS q,
	   JSON_VALUE(c.jb, p.p::jsonpath) AS v,
	   JSON_EXISTS(c.jb, p.p::jsonpath) AS e,
	   c.jb @@ (p.p || ' == 1.25')::jsonpath AS m,
	   (SELECT array_agg(t.*::text) FROM JSON_TABLE(c.jb, '$' COLUMNS (
			x jsonb PATH '$.a.n', y text PATH '$.dddd.o', w jsonb PATH '$.bb')) t) AS jt
FROM orr_chain c, orr_chain_paths p;
CREATE TABLE orr_chain_served AS SELECT * FROM orr_chain_results;
SET jsonb_toaster.override_builtins = off;
CREATE TABLE orr_chain_builtin AS SELECT * FROM orr_chain_results;
RESET jsonb_toaster.override_builtins;
SELECT count(*) AS paths,
	   count(*) FILTER (WHERE s IS DISTINCT FROM b) AS differ,
	   count(*) FILTER (WHERE (s).e) AS found
FROM orr_chain_served s JOIN orr_chain_builtin b USING (p);
DROP VIEW orr_chain_results;
DROP TABLE orr_chain, orr_chain_paths, orr_chain_served, orr_chain_builtin;

DROP VIEW orr_results, orr_docs;
DROP TABLE orr_main, orr_ext, orr_plain_ext, orr_skel, orr_served, orr_builtin;
DROP FUNCTION orr_doc(int, bool), orr_rep(anyelement);
