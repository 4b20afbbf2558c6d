--
-- jsonpath and subscripting on stored documents, against the builtins
-- (patched servers only).  Documents of random shapes are stored by the
-- toaster and in a standard table; random jsonpath expressions (lax and
-- strict, chains of keys and indexes that exist or not, wildcards,
-- filters, $ inside filters, last, item methods, variables, arithmetic and
-- predicates), random subscripts and random containment patterns (keys
-- with their values, parts of them, changed values, missing keys) are
-- evaluated through every function and operator (the SQL/JSON query
-- functions and JSON_TABLE included), with records built from
-- the documents and their roots' kinds, sizes and keys, and random subscript
-- assignments are made on both tables.
-- Every result, or error, must be what the builtins give on the standard
-- table with the overrides off.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
SELECT setseed(0.5);

CREATE FUNCTION sx_scalar() RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
	CASE (random() * 6)::int
		WHEN 0 THEN RETURN 'null';
		WHEN 1 THEN RETURN to_jsonb(random() < 0.5);
		WHEN 2 THEN RETURN to_jsonb((random() * 20)::int - 5);
		WHEN 3 THEN RETURN to_jsonb(round((random() * 100)::numeric, 2));
		WHEN 4 THEN RETURN to_jsonb('s' || (random() * 9)::int);
		WHEN 5 THEN RETURN to_jsonb(repeat('é日', (random() * 5)::int));
		ELSE RETURN to_jsonb(left(repeat(md5(random()::text), 60),
								  (random() * 1800)::int));
	END CASE;
END $$;

CREATE FUNCTION sx_value(depth int, width int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	n int := (random() * width)::int;
	result jsonb;
BEGIN
	IF depth <= 0 OR random() < 0.4 THEN
		RETURN sx_scalar();
	END IF;
	IF random() < 0.45 THEN
		SELECT coalesce(jsonb_agg(sx_value(depth - 1, width)), '[]')
		INTO result FROM generate_series(1, n);
	ELSE
		SELECT coalesce(jsonb_object_agg('k' || (random() * 2 * n)::int,
										 sx_value(depth - 1, width)), '{}')
		INTO result FROM generate_series(1, n);
	END IF;
	RETURN result;
END $$;

CREATE FUNCTION sx_doc() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	result jsonb;
BEGIN
	IF random() < 0.1 THEN
		RETURN (SELECT jsonb_agg(sx_value(3, 8)) FROM generate_series(1, 40));
	END IF;
	result := (SELECT jsonb_object_agg('k' || i, sx_value(3, 8))
			   FROM generate_series(1, 10 + (random() * 40)::int) i);
	-- long values, kept in parts
	FOR i IN 1..(random() * 3)::int LOOP
		result := result || jsonb_build_object('big' || i,
			(SELECT jsonb_agg(sx_value(2, 5)) FROM generate_series(1, 80)));
	END LOOP;
	RETURN result;
END $$;

-- a random step into v (existing mostly): ".key" or "[n]", and the value
CREATE FUNCTION sx_step(v jsonb, OUT step text, OUT inner_value jsonb)
LANGUAGE plpgsql AS $$
DECLARE
	k text;
	n int;
BEGIN
	IF jsonb_typeof(v) = 'object' AND random() < 0.85 THEN
		SELECT key INTO k FROM jsonb_object_keys(v) key ORDER BY random() LIMIT 1;
		k := coalesce(k, 'k0');
		IF random() < 0.15 THEN
			k := 'missing';
		END IF;
		step := '."' || k || '"';
		inner_value := v -> k;
	ELSIF jsonb_typeof(v) = 'array' AND random() < 0.85 THEN
		n := (random() * (jsonb_array_length(v) + 1))::int;
		step := '[' || n || ']';
		inner_value := v -> n;
	ELSE
		step := CASE WHEN random() < 0.5 THEN '.k1' ELSE '[0]' END;
		inner_value := NULL;
	END IF;
END $$;

-- a random jsonpath expression over doc
CREATE FUNCTION sx_path(doc jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p text := '$';
	v jsonb := doc;
	s record;
	tail text[] := ARRAY['', '', '', '.*', '[*]', '[last]', '[0 to last]',
		' ? (@ > 3)', ' ? (@.type() == "string")', '.size()', '.type()',
		'.keyvalue()', '.**', '.**{2}', '[1.5]', ' ? (@ == $x)',
		' ? (exists (@.k1))', '.double()', ' ? (@ like_regex "^s")',
		'[*] ? (@ starts with "s")', '[$i]', '.abs()', '.string()'];
	t text;
BEGIN
	FOR i IN 1..(random() * 4)::int LOOP
		s := sx_step(v);
		p := p || s.step;
		v := s.inner_value;
		EXIT WHEN v IS NULL;
	END LOOP;
	t := tail[1 + (random() * (array_length(tail, 1) - 1))::int];
	p := p || t;
	CASE (random() * 9)::int
		WHEN 0 THEN p := 'strict ' || p;
		WHEN 1 THEN p := p || ' == 3';
		WHEN 2 THEN p := p || ' ? (@ != $.k1)';
		WHEN 3 THEN p := p || ' + ' || sx_path(doc);
		WHEN 4 THEN p := '(' || p || ' > 2) && (' || sx_path(doc) || ' == "s1")';
		WHEN 5 THEN p := 'strict ' || p || ' == 1';
		ELSE NULL;
	END CASE;
	RETURN p;
END $$;

-- subscripts along a random path of doc: "['k3'][2]"
CREATE FUNCTION sx_subscripts(doc jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text := '';
	v jsonb := doc;
	k text;
	n int;
BEGIN
	FOR i IN 1..1 + (random() * 3)::int LOOP
		IF jsonb_typeof(v) = 'object' THEN
			SELECT key INTO k FROM jsonb_object_keys(v) key ORDER BY random() LIMIT 1;
			k := CASE WHEN random() < 0.15 THEN 'missing' ELSE coalesce(k, 'k0') END;
			result := result || format('[%L]', k);
			v := v -> k;
		ELSIF jsonb_typeof(v) = 'array' THEN
			n := (random() * (jsonb_array_length(v) + 2))::int - 1;
			result := result || CASE WHEN random() < 0.2 THEN format('[%L]', n)
				ELSE format('[%s]', n) END;
			v := v -> n;
		ELSE
			result := result || CASE WHEN random() < 0.5 THEN '[0]' ELSE '[''k1'']' END;
			v := NULL;
		END IF;
	END LOOP;
	RETURN result;
END $$;

-- a containment pattern for doc: some of its keys, with their values
-- (a part of them, for objects), a changed value or a missing key at times
CREATE FUNCTION sx_pattern(doc jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	result jsonb := '{}';
	k text;
BEGIN
	IF jsonb_typeof(doc) <> 'object' OR random() < 0.1 THEN
		RETURN CASE WHEN random() < 0.5 THEN doc ELSE sx_value(1, 3) END;
	END IF;
	FOR k IN SELECT key FROM jsonb_object_keys(doc) key
			 ORDER BY random() LIMIT 1 + (random() * 2)::int LOOP
		result := result || jsonb_build_object(k,
			CASE WHEN random() < 0.1 THEN sx_scalar()
				 WHEN random() < 0.5 THEN sx_pattern(doc -> k)
				 ELSE doc -> k END);
	END LOOP;
	IF random() < 0.15 THEN
		result := result || '{"missing": 1}';
	END IF;
	RETURN result;
END $$;

-- an expression evaluated on one row of tab, as text, or its error
CREATE FUNCTION sx_eval(tab text, row_id int, expr text, overrides bool)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	PERFORM set_config('jsonb_toaster.override_builtins', overrides::text, true);
	BEGIN
		EXECUTE format('SELECT (%s)::text FROM %I WHERE id = %s', expr, tab, row_id)
		INTO result;
	EXCEPTION WHEN OTHERS THEN
		result := 'ERROR ' || SQLSTATE || ': ' || SQLERRM;
	END;
	RETURN coalesce(result, '<null>');
END $$;

CREATE TYPE sx_rec AS (k1 jsonb, k2 text, k3 int, big1 jsonb, missing bool);

CREATE TABLE sx (id int PRIMARY KEY, jb jsonb);
ALTER TABLE sx ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE sx_plain (id int PRIMARY KEY, jb jsonb);
INSERT INTO sx SELECT g, sx_doc() FROM generate_series(1, 30) g;
INSERT INTO sx_plain SELECT * FROM sx;
-- the toaster keeps most of them as skeletons
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') >= 20 AS skeletons
FROM sx;

CREATE TABLE sx_cases (id int, expr text);
INSERT INTO sx_cases
SELECT id, CASE (random() * 15)::int
	WHEN 13 THEN format('(SELECT array_agg(t::text) FROM JSON_TABLE(jb, ''$'' PASSING 3 AS x, 1 AS i COLUMNS (v jsonb PATH %L, e bool EXISTS PATH %L, NESTED PATH %L COLUMNS (w jsonb PATH ''$.k1''))) t)', p, p2, p3)
	WHEN 14 THEN format('(SELECT array_agg(t::text) FROM JSON_TABLE(jb, %L PASSING 3 AS x, 1 AS i COLUMNS (v jsonb PATH ''$.k1'', w text PATH ''$[0]'', NESTED PATH ''$.*'' COLUMNS (z jsonb PATH ''$''))) t)', left(p, strpos(p || '?', '?') - 1))
	WHEN 9 THEN format('JSON_VALUE(jb, %L PASSING 3 AS x, 1 AS i)', p)
	WHEN 10 THEN format('JSON_QUERY(jb, %L PASSING 3 AS x, 1 AS i WITH CONDITIONAL WRAPPER ERROR ON ERROR)', p)
	WHEN 11 THEN format('JSON_EXISTS(jb, %L PASSING 3 AS x, 1 AS i ERROR ON ERROR)', p)
	WHEN 12 THEN format('(SELECT array_agg(t.v::text) FROM JSON_TABLE(jb, %L PASSING 3 AS x, 1 AS i COLUMNS (v jsonb PATH ''$'', k text PATH ''$.k1'')) t)', p)
	WHEN 0 THEN format('jsonb_path_exists(jb, %L, %L)', p, vars)
	WHEN 1 THEN format('jsonb_path_query_array(jb, %L, %L)', p, vars)
	WHEN 2 THEN format('jsonb_path_query_array(jb, %L, %L, true)', p, vars)
	WHEN 3 THEN format('jsonb_path_query_first(jb, %L, %L)', p, vars)
	WHEN 4 THEN format('jb @? %L', p)
	WHEN 5 THEN format('jb @@ %L', p)
	WHEN 6 THEN format('jsonb_path_match(jb, %L, %L)', p, vars)
	WHEN 7 THEN format('(SELECT array_agg(x) FROM jsonb_path_query(jb, %L, %L) x)', p, vars)
	ELSE format('jsonb_path_query_first_tz(jb, %L, %L, true)', p, vars)
	END
FROM (SELECT id, sx_path(jb) AS p, sx_path(jb) AS p2, sx_path(jb) AS p3,
			 '{"x": 3, "i": 1}'::jsonb AS vars
	  FROM sx, generate_series(1, 80)) c;
INSERT INTO sx_cases
SELECT id, 'jb' || sx_subscripts(jb) FROM sx, generate_series(1, 20);
-- records of some fields, the root's kind and size
INSERT INTO sx_cases
SELECT id, e FROM sx, unnest(ARRAY[
	'(SELECT r::text FROM jsonb_to_record(jb) AS r(k1 jsonb, k2 text, k5 numeric, missing int))',
	'(SELECT r::text FROM jsonb_to_record(jb) AS r(k1 int))',
	'jsonb_populate_record(NULL::sx_rec, jb)',
	'jsonb_populate_record(ROW(''{}'', ''x'', 1, NULL, true)::sx_rec, jb)',
	'jsonb_populate_record_valid(NULL::sx_rec, jb)',
	'(SELECT x::text FROM jsonb_populate_record((SELECT r FROM (SELECT ''1''::jsonb AS k1, ''x''::text AS k2) r), jb) AS x(a jsonb, b text))',
	'(SELECT x::text FROM jsonb_populate_record(NULL::record, jb) AS x(k1 jsonb, k3 text))',
	'jsonb_typeof(jb)', 'jsonb_array_length(jb)',
	'(SELECT array_agg(k) FROM jsonb_object_keys(jb) k)']) e;
-- a record of every key a root may have (read whole, not narrowed)
INSERT INTO sx_cases
SELECT id, format('(SELECT r::text FROM jsonb_to_record(jb) AS r(%s))',
				  (SELECT string_agg(k || ' jsonb', ', ')
				   FROM (SELECT 'k' || i AS k FROM generate_series(1, 50) i
						 UNION ALL SELECT 'big' || i FROM generate_series(1, 3) i) ks))
FROM sx;
INSERT INTO sx_cases
SELECT id, CASE WHEN random() < 0.7 THEN format('jb @> %L', sx_pattern(jb))
				ELSE format('%L <@ jb', sx_pattern(jb)) END
FROM sx, generate_series(1, 20);

CREATE TABLE sx_results AS
SELECT c.id, c.expr,
	   sx_eval('sx', c.id, c.expr, true) AS stored,
	   sx_eval('sx_plain', c.id, c.expr, true) AS plain,
	   sx_eval('sx_plain', c.id, c.expr, false) AS builtin
FROM sx_cases c;

-- enough of every kind, and no difference
SELECT count(*) >= 3000 AS enough,
	   count(*) FILTER (WHERE expr LIKE 'JSON_%' AND builtin NOT LIKE 'ERROR%') >= 200 AS sqljson_seen,
	   count(*) FILTER (WHERE expr LIKE '%JSON_TABLE(jb, ''$'' PASSING%'
						AND builtin NOT LIKE 'ERROR%' AND builtin <> '<null>') >= 50 AS json_table_seen,
	   count(*) FILTER (WHERE expr LIKE '%@>%' AND builtin = 'true') >= 100 AS contained_seen,
	   count(*) FILTER (WHERE builtin LIKE 'ERROR%') >= 20 AS errors_seen,
	   count(*) FILTER (WHERE builtin = '<null>') >= 50 AS nulls_seen,
	   count(*) FILTER (WHERE builtin NOT LIKE 'ERROR%' AND builtin <> '<null>'
						AND builtin NOT IN ('true', 'false', '{}')) >= 500 AS values_seen,
	   count(*) FILTER (WHERE stored IS DISTINCT FROM builtin
						OR plain IS DISTINCT FROM builtin) AS differences
FROM sx_results;
SELECT id, expr, builtin, stored, plain FROM sx_results
WHERE stored IS DISTINCT FROM builtin OR plain IS DISTINCT FROM builtin
ORDER BY id, expr LIMIT 20;

-- one statement passing a path (without variables) and a pattern per row:
-- what a path or pattern reads is kept for the last few seen, and found
-- again by its bytes alone, whatever the call site
CREATE TABLE sx_paths AS
SELECT row_number() OVER () AS n, t::jsonpath AS p, pat
FROM (SELECT sx_path(jb) AS t, sx_pattern(jb) AS pat FROM sx, generate_series(1, 8)) c
WHERE pg_input_is_valid(t, 'jsonpath') AND t !~ '\$[a-z]';
CREATE TABLE sx_many_stored AS
SELECT x.id, p.n, x.jb @? p.p AS e, jsonb_path_exists(x.jb, p.p, '{}', true) AS ex,
	   jsonb_path_query_first(x.jb, p.p, '{}', true) AS f, x.jb @> p.pat AS c
FROM sx x CROSS JOIN sx_paths p;
SET jsonb_toaster.override_builtins = off;
CREATE TABLE sx_many_builtin AS
SELECT x.id, p.n, x.jb @? p.p AS e, jsonb_path_exists(x.jb, p.p, '{}', true) AS ex,
	   jsonb_path_query_first(x.jb, p.p, '{}', true) AS f, x.jb @> p.pat AS c
FROM sx_plain x CROSS JOIN sx_paths p;
RESET jsonb_toaster.override_builtins;
SELECT count(DISTINCT p::text) > 100 AS many_paths, count(*) > 5000 AS compared,
	   count(*) FILTER (WHERE s.f IS NOT NULL) > 500 AS values_seen,
	   count(*) FILTER (WHERE s.c) > 50 AS contained_seen,
	   count(*) FILTER (WHERE s.e IS DISTINCT FROM b.e OR s.ex IS DISTINCT FROM b.ex OR
						s.f IS DISTINCT FROM b.f OR s.c IS DISTINCT FROM b.c) AS differences
FROM sx_many_stored s JOIN sx_many_builtin b USING (id, n) JOIN sx_paths USING (n);
DROP TABLE sx_paths, sx_many_stored, sx_many_builtin;
-- JSON_TABLE with more column paths than paths are kept: each column's
-- chain is read for the call itself
CREATE TABLE sx_wide_stored AS
SELECT x.id, (SELECT array_agg(t::text) FROM JSON_TABLE(x.jb, '$' COLUMNS (
	c1 jsonb PATH '$.k1', c2 jsonb PATH '$.k2', c3 jsonb PATH '$.k3', c4 jsonb PATH '$.k4',
	c5 jsonb PATH '$.k5', c6 jsonb PATH '$.k6', c7 jsonb PATH '$.k7', c8 jsonb PATH '$.k8',
	c9 jsonb PATH '$.k9', c10 jsonb PATH '$.k10', c11 jsonb PATH '$.k11', c12 jsonb PATH '$.k12')) t) AS r
FROM sx x;
SET jsonb_toaster.override_builtins = off;
CREATE TABLE sx_wide_builtin AS
SELECT x.id, (SELECT array_agg(t::text) FROM JSON_TABLE(x.jb, '$' COLUMNS (
	c1 jsonb PATH '$.k1', c2 jsonb PATH '$.k2', c3 jsonb PATH '$.k3', c4 jsonb PATH '$.k4',
	c5 jsonb PATH '$.k5', c6 jsonb PATH '$.k6', c7 jsonb PATH '$.k7', c8 jsonb PATH '$.k8',
	c9 jsonb PATH '$.k9', c10 jsonb PATH '$.k10', c11 jsonb PATH '$.k11', c12 jsonb PATH '$.k12')) t) AS r
FROM sx_plain x;
RESET jsonb_toaster.override_builtins;
SELECT count(*) AS rows, count(*) FILTER (WHERE s.r::text ~ '[^,(]+,[^,(]+,') > 5 AS values_seen,
	   count(*) FILTER (WHERE s.r IS DISTINCT FROM b.r) AS differences
FROM sx_wide_stored s JOIN sx_wide_builtin b USING (id);
DROP TABLE sx_wide_stored, sx_wide_builtin;

-- subscript assignments: the same changes on both tables
CREATE FUNCTION sx_assign(tab text, row_id int, target text, v jsonb)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('UPDATE %I SET %s = %L WHERE id = %s', tab, target, v, row_id);
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE sx_assigned (step int, id int, target text, stored text, plain text);
DO $$
DECLARE
	r record;
	target text;
	v jsonb;
BEGIN
	FOR step IN 1..4 LOOP
		FOR r IN SELECT id, jb FROM sx_plain ORDER BY id LOOP
			target := 'jb' || sx_subscripts(r.jb);
			v := sx_value(1, 4);
			INSERT INTO sx_assigned VALUES (step, r.id, target,
				sx_assign('sx', r.id, target, v),
				sx_assign('sx_plain', r.id, target, v));
		END LOOP;
	END LOOP;
END $$;
SELECT count(*) AS assignments,
	   count(*) FILTER (WHERE stored IS NOT NULL) > 0 AS errors_seen,
	   count(*) FILTER (WHERE stored IS DISTINCT FROM plain) AS different_errors
FROM sx_assigned;
SELECT count(*) AS rows_differing
FROM sx JOIN sx_plain p USING (id) WHERE sx.jb::text <> p.jb::text;
