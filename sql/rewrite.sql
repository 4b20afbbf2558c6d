--
-- A column that opts in while it already holds documents: the rewrites
-- that offer those values to the toaster (VACUUM FULL, CLUSTER, ALTER
-- TABLE) leave every document readable, deletable and rewritable, with
-- pointers that name the table's own TOAST relation.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;

CREATE FUNCTION toast_rows(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s',
				   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
		INTO n;
	RETURN n;
END $$;
CREATE FUNCTION toast_ok(rel regclass, col text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE live bigint;
BEGIN
	EXECUTE format('SELECT coalesce(sum((jsonb_toaster_storage(%I)).chunks), 0) FROM %s',
				   col, rel) INTO live;
	RETURN CASE WHEN toast_rows(rel) = live THEN 'ok'
		ELSE format('%s TOAST rows, %s live chunks', toast_rows(rel), live) END;
END $$;
-- pointers of rel's column that name another TOAST relation than rel's
CREATE FUNCTION foreign_pointers(rel regclass, col text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s, jsonb_toaster_storage(%I) s
					WHERE s.toast_relid IS NOT NULL AND s.toast_relid <>
						(SELECT reltoastrelid FROM pg_class WHERE oid = %L::regclass)',
				   rel, col, rel) INTO n;
	RETURN n;
END $$;

-- every storage form a value can have before the column opts in
CREATE TABLE ref (id int PRIMARY KEY, jb jsonb);
INSERT INTO ref
SELECT g, jsonb_build_object('id', g, 'body',
	(SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 200) i))
FROM generate_series(1, 10) g;			-- external, incompressible
INSERT INTO ref
SELECT 100 + g, jsonb_build_object('id', g, 'text', repeat('abc', 1000 + g))
FROM generate_series(1, 5) g;			-- compressed inline
INSERT INTO ref
SELECT 200 + g, jsonb_build_object('id', g, 'items',
	(SELECT jsonb_agg(jsonb_build_object('n', i, 'h', md5(i::text)))
	 FROM generate_series(1, 300) i))
FROM generate_series(1, 5) g;			-- external, compressed
INSERT INTO ref SELECT 300 + g, jsonb_build_object('id', g) FROM generate_series(1, 5) g;

CREATE TABLE vf (id int PRIMARY KEY, jb jsonb);
INSERT INTO vf SELECT * FROM ref;
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM vf GROUP BY 1 ORDER BY 1;
ALTER TABLE vf ALTER COLUMN jb SET (toaster = 'jsonb_toaster');

-- VACUUM FULL offers the values to the toaster
VACUUM FULL vf;
SELECT (jsonb_toaster_storage(jb)).form, count(*) FROM vf GROUP BY 1 ORDER BY 1;
SELECT foreign_pointers('vf', 'jb');
SELECT count(*) AS differ FROM vf JOIN ref USING (id) WHERE vf.jb <> ref.jb;
SELECT length(jb->>'body') FROM vf WHERE id <= 2 ORDER BY id;
SELECT toast_ok('vf', 'jb');
DELETE FROM vf WHERE id = 1;
VACUUM vf;
SELECT toast_ok('vf', 'jb');

-- and again, over skeletons, and after CLUSTER
VACUUM FULL vf;
SELECT foreign_pointers('vf', 'jb');
SELECT toast_ok('vf', 'jb');
CLUSTER vf USING vf_pkey;
SELECT foreign_pointers('vf', 'jb');
SELECT toast_ok('vf', 'jb');
SELECT count(*) AS differ FROM vf JOIN ref USING (id) WHERE vf.jb::text <> ref.jb::text;

-- a table rewrite of ALTER TABLE takes the values anew
ALTER TABLE vf ALTER COLUMN jb TYPE jsonb USING jb || '{}';
SELECT foreign_pointers('vf', 'jb');
SELECT toast_ok('vf', 'jb');
SELECT count(*) AS differ FROM vf JOIN ref USING (id) WHERE vf.jb <> ref.jb;

-- updates and deletes after the rewrites
UPDATE vf SET jb = jsonb_set(jb, '{id}', '0') WHERE id IN (2, 201);
UPDATE ref SET jb = jsonb_set(jb, '{id}', '0') WHERE id IN (2, 201);
DELETE FROM vf WHERE id = 3;
DELETE FROM ref WHERE id IN (1, 3);
VACUUM vf;
SELECT toast_ok('vf', 'jb');
SELECT count(*) AS differ FROM vf FULL JOIN ref USING (id)
WHERE vf.jb IS DISTINCT FROM ref.jb;

DROP TABLE vf, ref;
DROP FUNCTION toast_rows(regclass), toast_ok(regclass, text),
	foreign_pointers(regclass, text);
