--
-- Partial-access accessors: differential tests against the builtins.
--
-- Random documents (deep, wide, unicode, big numerics, empty containers,
-- long arrays, keys that differ only in length or last byte) are stored in
-- every storage form; every accessor is applied with random keys, indexes
-- and paths, and each result must equal the builtin's on an in-memory copy
-- of the same document.  The documents are generated from a fixed seed.
--
CREATE SCHEMA jt;
CREATE EXTENSION jsonb_toaster SCHEMA jt;
SET search_path = public, jt;

SELECT setseed(0.4242);

-- Key pool: near misses by length and by last byte, unicode, empty.
CREATE FUNCTION rnd_key() RETURNS text LANGUAGE sql VOLATILE
RETURN (ARRAY['k', 'kk', 'kkk', 'ka', 'kb', 'kc', 'key', 'key1', 'key2',
              'keyA', 'ключ', 'ключи', '日本', '日本語', '🔑', '', ' ', 'id',
              'roles', 'a' || (random() * 50)::int::text,
              repeat('long', 30), repeat('long', 30) || 'x'])
       [1 + (random() * 21)::int];

CREATE FUNCTION rnd_scalar() RETURNS jsonb LANGUAGE sql VOLATILE
RETURN CASE (random() * 10)::int
  WHEN 0 THEN 'null'::jsonb
  WHEN 1 THEN 'true'
  WHEN 2 THEN 'false'
  WHEN 3 THEN to_jsonb((random() * 1000)::int - 500)
  WHEN 4 THEN to_jsonb(((random() * 1e15)::numeric(30, 0)) * 1e80)
  WHEN 5 THEN to_jsonb(round((random() - 0.5)::numeric, 15))
  WHEN 6 THEN to_jsonb(repeat('é日🔑', (random() * 20)::int))
  WHEN 7 THEN to_jsonb(repeat('abc', (random() * 400)::int))
  WHEN 8 THEN to_jsonb(md5(random()::text))
  ELSE to_jsonb(''::text)
END;

CREATE FUNCTION rnd_doc(depth int) RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r float8 := random();
  n int;
  result jsonb;
BEGIN
  IF depth <= 0 OR r < 0.25 THEN
    RETURN rnd_scalar();
  END IF;
  -- mostly small containers, sometimes empty, sometimes very wide
  n := CASE WHEN random() < 0.1 THEN 0
            WHEN random() < 0.1 THEN 200 + (random() * 1500)::int
            ELSE (random() * 12)::int END;
  IF r < 0.6 THEN
    SELECT coalesce(jsonb_object_agg(rnd_key() || CASE WHEN random() < 0.5 THEN '' ELSE i::text END,
                                     rnd_doc(CASE WHEN n > 50 THEN 0 ELSE depth - 1 END)), '{}')
      INTO result FROM generate_series(1, n) i;
  ELSE
    SELECT coalesce(jsonb_agg(rnd_doc(CASE WHEN n > 50 THEN 0 ELSE depth - 1 END)), '[]')
      INTO result FROM generate_series(1, n) i;
  END IF;
  RETURN result;
END $$;

-- A random path through a document: mostly existing keys and indexes,
-- sometimes near misses, bad indexes, or steps into scalars.
CREATE FUNCTION rnd_path(doc jsonb) RETURNS text[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  path text[] := '{}';
  cur jsonb := doc;
  step text;
BEGIN
  FOR i IN 1 .. 1 + (random() * 4)::int LOOP
    IF jsonb_typeof(cur) = 'object' AND random() < 0.85 THEN
      SELECT k INTO step FROM jsonb_object_keys(cur) k ORDER BY random() LIMIT 1;
      step := coalesce(step, rnd_key());
    ELSIF jsonb_typeof(cur) = 'array' AND random() < 0.85 THEN
      step := ((random() * (jsonb_array_length(cur) * 2 + 2))::int
               - jsonb_array_length(cur) - 1)::text;
    ELSE
      step := (ARRAY['x', '0', '-1', '2147483648', '-2147483648', ' 1', '1e2', rnd_key()])
              [1 + (random() * 7)::int];
    END IF;
    path := path || step;
    IF jsonb_typeof(cur) = 'array' THEN
      cur := CASE WHEN step ~ '^-?[0-9]{1,9}$' THEN cur -> step::int END;
    ELSE
      cur := cur -> step;
    END IF;
    EXIT WHEN cur IS NULL;
  END LOOP;
  RETURN path;
END $$;

-- Documents: mostly objects (with a large value early, as real documents
-- often have), some arrays and raw scalars.
CREATE TABLE docs (id int PRIMARY KEY, doc jsonb);
ALTER TABLE docs ALTER COLUMN doc SET STORAGE EXTERNAL;
INSERT INTO docs
SELECT i, CASE WHEN i % 10 = 0 THEN rnd_doc(4)
               WHEN i % 10 = 1 THEN rnd_scalar()
               ELSE jsonb_build_object('key1', i, 'pad', repeat('p', (random() * 5000)::int))
                    || coalesce(rnd_doc(5), '{}') END
FROM generate_series(1, 80) i;

-- The same documents in every storage form.  toast_tuple_target = 128
-- makes even small documents compressed or TOASTed.  Each copy starts from
-- text, because a value already compressed in docs would be stored as it
-- is, whatever the target column's settings.
CREATE TABLE f_pglz_inline (id int, jb jsonb COMPRESSION pglz) WITH (toast_tuple_target = 128);
CREATE TABLE f_lz4_inline (id int, jb jsonb COMPRESSION lz4) WITH (toast_tuple_target = 128);
CREATE TABLE f_pglz_external (id int, jb jsonb COMPRESSION pglz) WITH (toast_tuple_target = 128);
CREATE TABLE f_lz4_external (id int, jb jsonb COMPRESSION lz4) WITH (toast_tuple_target = 128);
CREATE TABLE f_uncompressed (id int, jb jsonb) WITH (toast_tuple_target = 128);
ALTER TABLE f_pglz_inline ALTER COLUMN jb SET STORAGE MAIN;
ALTER TABLE f_lz4_inline ALTER COLUMN jb SET STORAGE MAIN;
ALTER TABLE f_uncompressed ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO f_pglz_inline SELECT id, doc::text::jsonb FROM docs;
INSERT INTO f_lz4_inline SELECT id, doc::text::jsonb FROM docs;
INSERT INTO f_pglz_external SELECT id, doc::text::jsonb FROM docs;
INSERT INTO f_lz4_external SELECT id, doc::text::jsonb FROM docs;
INSERT INTO f_uncompressed SELECT id, doc::text::jsonb FROM docs;

CREATE VIEW forms AS
  SELECT 'pglz_inline' AS tab, id, jb FROM f_pglz_inline
  UNION ALL SELECT 'lz4_inline', id, jb FROM f_lz4_inline
  UNION ALL SELECT 'pglz_external', id, jb FROM f_pglz_external
  UNION ALL SELECT 'lz4_external', id, jb FROM f_lz4_external
  UNION ALL SELECT 'uncompressed', id, jb FROM f_uncompressed;

-- Every form is well represented.
SELECT s.form, s.compression, count(*) >= 20 AS enough
FROM forms, jsonb_toaster_storage(jb) s
GROUP BY 1, 2 ORDER BY 1, 2;

-- Probes: each document's own keys, near misses, indexes, random paths.
CREATE TABLE probes (id int, k text, i int, p text[]);
INSERT INTO probes
SELECT d.id, k, NULL, NULL FROM docs d,
  LATERAL (SELECT jsonb_object_keys(d.doc) k
           WHERE jsonb_typeof(d.doc) = 'object' ORDER BY random() LIMIT 6) keys;
INSERT INTO probes
SELECT d.id, v, NULL, NULL FROM docs d,
  LATERAL (SELECT rnd_key() v FROM generate_series(1, 4)) misses;
INSERT INTO probes
SELECT d.id, NULL, i, NULL FROM docs d,
  unnest(ARRAY[0, 1, 2, -1, -2, 5, 1000, -1000, 2147483647, -2147483648]) i;
INSERT INTO probes
SELECT d.id, NULL, NULL, rnd_path(d.doc) FROM docs d, generate_series(1, 6);

-- What the builtins answer, computed once per document and probe.
CREATE TABLE expected AS
SELECT id, fn, k, i, p, ks,
  CASE fn
    WHEN 'jt_object_field' THEN (doc -> k)::text
    WHEN 'jt_object_field_text' THEN doc ->> k
    WHEN 'jt_exists' THEN (doc ? k)::text
    WHEN 'jt_array_element' THEN (doc -> i)::text
    WHEN 'jt_array_element_text' THEN doc ->> i
    WHEN 'jt_extract_path' THEN (doc #> p)::text
    WHEN 'jt_extract_path_text' THEN doc #>> p
    WHEN 'jt_exists_any' THEN (doc ?| ks)::text
    WHEN 'jt_exists_all' THEN (doc ?& ks)::text
  END AS want
FROM docs JOIN (
  SELECT id, fn, k, NULL::int AS i, NULL::text[] AS p, NULL::text[] AS ks
    FROM probes, unnest(ARRAY['jt_object_field', 'jt_object_field_text', 'jt_exists']) fn
    WHERE k IS NOT NULL
  UNION ALL
  SELECT id, fn, NULL, i, NULL, NULL
    FROM probes, unnest(ARRAY['jt_array_element', 'jt_array_element_text']) fn
    WHERE i IS NOT NULL
  UNION ALL
  SELECT id, fn, NULL, NULL, p, NULL
    FROM probes, unnest(ARRAY['jt_extract_path', 'jt_extract_path_text']) fn
    WHERE p IS NOT NULL
  UNION ALL
  -- key sets for ?| and ?&: some present, some missing, some NULL
  SELECT id, 'jt_exists_any', NULL, NULL, NULL,
         array_agg(k) || ARRAY[NULL::text, 'kz']
    FROM probes WHERE k IS NOT NULL GROUP BY id
  UNION ALL
  SELECT id, 'jt_exists_all', NULL, NULL, NULL, (array_agg(k))[1:3]
    FROM probes WHERE k IS NOT NULL GROUP BY id
  UNION ALL
  -- the whole document, and a path with a NULL step
  SELECT id, 'jt_extract_path', NULL, NULL, '{}', NULL FROM docs
  UNION ALL
  SELECT id, 'jt_extract_path_text', NULL, NULL, '{key1,NULL}', NULL FROM docs
) probe USING (id);

-- Every accessor on every form; each row is one comparison.
CREATE TABLE results AS
SELECT f.tab, e.id, e.fn, coalesce(e.k, e.i::text, e.p::text, e.ks::text) AS arg,
  CASE e.fn
    WHEN 'jt_object_field' THEN jt_object_field(f.jb, e.k)::text
    WHEN 'jt_object_field_text' THEN jt_object_field_text(f.jb, e.k)
    WHEN 'jt_exists' THEN jt_exists(f.jb, e.k)::text
    WHEN 'jt_array_element' THEN jt_array_element(f.jb, e.i)::text
    WHEN 'jt_array_element_text' THEN jt_array_element_text(f.jb, e.i)
    WHEN 'jt_extract_path' THEN jt_extract_path(f.jb, VARIADIC e.p)::text
    WHEN 'jt_extract_path_text' THEN jt_extract_path_text(f.jb, VARIADIC e.p)
    WHEN 'jt_exists_any' THEN jt_exists_any(f.jb, e.ks)::text
    WHEN 'jt_exists_all' THEN jt_exists_all(f.jb, e.ks)::text
  END AS got,
  e.want
FROM forms f JOIN expected e USING (id);

-- Enough comparisons of each accessor ran, and none differs.
SELECT fn, count(*) > 300 AS many_comparisons,
       count(*) FILTER (WHERE got IS NOT NULL) > 50 AS many_found,
       count(*) FILTER (WHERE got IS DISTINCT FROM want) AS mismatches
FROM results GROUP BY fn ORDER BY fn;

-- Any mismatch, for the diff.
SELECT tab, id, fn, arg, got, want FROM results
WHERE got IS DISTINCT FROM want ORDER BY 1, 2, 3, 4 LIMIT 20;

-- The accessors on values that never leave memory (they defer to the builtins).
SELECT jt_object_field('{"a": [1, {"b": null}]}', 'a'),
       jt_object_field_text('{"a": "x"}', 'a'),
       jt_array_element('5', 0), jt_array_element('5', -1), jt_array_element('5', 1),
       jt_array_element_text('[1, null]', 1),
       jt_extract_path('{"a": [10, 20]}', 'a', '-1'),
       jt_exists('["a", 1]', 'a'), jt_exists('"a"', 'a'),
       jt_exists_any('{"a": 1}', '{b, NULL}'), jt_exists_all('{"a": 1}', '{}');

-- Opting in through search_path: the extension's operators are used only
-- where its schema comes before pg_catalog.
CREATE VIEW uses_builtin AS SELECT jb -> 'k' AS v FROM f_pglz_external;
SET search_path = jt, pg_catalog, public;
CREATE VIEW uses_partial AS SELECT jb -> 'k' AS a, jb ->> 'k' AS b, jb -> 0 AS c, jb ->> 0 AS d,
  jb #> '{k}' AS e, jb #>> '{k}' AS f, jb ? 'k' AS g, jb ?| '{k}' AS h, jb ?& '{k}' AS i
  FROM f_pglz_external;
RESET search_path;
SELECT v.relname, array_agg(d.refobjid::regoperator::text ORDER BY d.refobjid::regoperator::text)
         FILTER (WHERE d.refobjid IS NOT NULL) AS extension_operators
FROM pg_class v JOIN pg_rewrite r ON v.oid = r.ev_class
  LEFT JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass
    AND d.refclassid = 'pg_operator'::regclass
WHERE v.relname IN ('uses_builtin', 'uses_partial')
GROUP BY 1 ORDER BY 1;
SET search_path = jt, pg_catalog, public;
SELECT count(*) FILTER (WHERE (f.jb -> 'key1') IS DISTINCT FROM (d.doc -> 'key1')) AS mismatches
FROM f_lz4_external f JOIN docs d USING (id);
RESET search_path;

-- A small object whose keys lie past what has been read of its value:
-- reading a key reads on, and may move the buffer, while the object's
-- JEntries are being walked.  Fillers of 7,900 to 7,990 bytes put the
-- keys of "q" on either side of the first read's end.  Each lookup runs
-- in a transaction of its own, which starts with an empty buffer.
CREATE TABLE boundary (pad int, jb jsonb);
ALTER TABLE boundary ALTER COLUMN jb SET STORAGE EXTERNAL;
INSERT INTO boundary
SELECT n, jsonb_build_object('p', repeat('x', n), 'q', '{"k1": 1, "k2": 2}'::jsonb,
							 'r', repeat('y', 5000))
FROM generate_series(7900, 7990) n;
CREATE TABLE boundary_wrong (pad int, key text);
SELECT format('INSERT INTO boundary_wrong SELECT pad, %L FROM boundary WHERE pad = %s AND jt.jt_extract_path(jb, ''q'', %L) IS DISTINCT FROM %L::jsonb',
			  k, n, k, v)
FROM generate_series(7900, 7990) n, (VALUES ('k1', '1'), ('k2', '2')) kv(k, v)
ORDER BY n, k
\set ECHO none
\gexec
\set ECHO all
SELECT (SELECT count(*) FROM boundary) AS documents,
	   (SELECT count(*) FROM boundary_wrong) AS wrong;
DROP TABLE boundary, boundary_wrong;

DROP SCHEMA jt CASCADE;
DROP TABLE docs, probes, expected, results, f_pglz_inline, f_lz4_inline, f_pglz_external,
  f_lz4_external, f_uncompressed CASCADE;
DROP FUNCTION rnd_key(), rnd_scalar(), rnd_doc(int), rnd_path(jsonb);
