--
-- Documents stored as skeletons where the executor keeps, moves or
-- compares values rather than reading them at once: cursors held past
-- their transaction, triggers and transition tables, parallel workers,
-- generic plans, MERGE's RETURNING, binary COPY, image equality, hashing
-- and sorting, materialized views.  Each result is checked against a copy
-- of the same documents in standard storage, and against what the rows
-- held before the statements that changed them.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
RESET client_min_messages;

CREATE TABLE docs (id int PRIMARY KEY, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
-- six documents of several parts
CREATE FUNCTION fill_docs() RETURNS void LANGUAGE sql AS $$
	INSERT INTO docs
	SELECT i, jsonb_build_object('a', i,
		'big', (SELECT jsonb_agg(md5(g::text || i::text)) FROM generate_series(1, 2000) g),
		'obj', (SELECT jsonb_object_agg('k' || g, repeat(md5(g::text), 3)) FROM generate_series(1, 60) g),
		'z', 'end')
	FROM generate_series(1, 6) i;
$$;
SELECT fill_docs();
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton' AND
						(jsonb_toaster_storage(jb)).parts > 2) AS skeletons_of_several_parts
FROM docs;

-- what each row holds, as text, before the statements under test
CREATE TABLE snap (id int PRIMARY KEY, t text);
CREATE FUNCTION take_snapshot() RETURNS void LANGUAGE sql AS $$
	TRUNCATE snap;
	INSERT INTO snap SELECT id, jb::text FROM docs;
$$;

-- rows of a cursor (id, jb) that differ from the snapshot, and how many
CREATE FUNCTION cursor_against_snapshot(c refcursor, OUT fetched int, OUT differing int)
LANGUAGE plpgsql AS $$
DECLARE
	i int;
	j jsonb;
BEGIN
	fetched := 0;
	differing := 0;
	LOOP
		FETCH c INTO i, j;
		EXIT WHEN NOT FOUND;
		fetched := fetched + 1;
		IF j::text IS DISTINCT FROM (SELECT t FROM snap WHERE snap.id = i) THEN
			differing := differing + 1;
		END IF;
	END LOOP;
END $$;

-- Each storage form's rows leave the TOAST relation when VACUUM removes
-- the versions that named them: a cursor held past its transaction keeps
-- the documents it read, not pointers to removed parts.
SELECT take_snapshot();
BEGIN;
DECLARE held CURSOR WITH HOLD FOR SELECT id, jb FROM docs ORDER BY id;
COMMIT;
UPDATE docs SET jb = jsonb_set(jb, '{big,5}', '"changed"') WHERE id <= 2;
UPDATE docs SET jb = jb || '{"n": 1}' WHERE id = 3;
UPDATE docs SET jb = jb - 'big' WHERE id = 4;
UPDATE docs SET jb = '{"replaced": true}' WHERE id = 5;
DELETE FROM docs WHERE id = 6;
VACUUM docs;
SELECT * FROM cursor_against_snapshot('held');
CLOSE held;

-- the same when the cursor's rows change in its own transaction, before
-- it is held
SELECT take_snapshot();
BEGIN;
DECLARE held CURSOR WITH HOLD FOR SELECT id, jb FROM docs ORDER BY id;
UPDATE docs SET jb = jsonb_set(jb, '{big,7}', '"changed"') WHERE id <= 2;
DELETE FROM docs WHERE id = 3;
COMMIT;
VACUUM docs;
SELECT * FROM cursor_against_snapshot('held');
CLOSE held;

-- start again from six documents of several parts
TRUNCATE docs;
SELECT fill_docs();
CREATE TABLE reference AS SELECT id, jsonb_toaster_standard(jb) AS jb FROM docs;

-- Triggers: a BEFORE trigger that changes NEW's document, an AFTER row
-- trigger and a statement trigger with transition tables, each seeing
-- the old and new documents of an UPDATE that changes one part.
CREATE TABLE seen (how text, id int, old_t text, new_t text);
CREATE FUNCTION count_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.jb := jsonb_set(NEW.jb, '{updates}',
						to_jsonb(coalesce((OLD.jb ->> 'updates')::int, 0) + 1));
	RETURN NEW;
END $$;
CREATE FUNCTION see_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO seen VALUES ('row', OLD.id, OLD.jb::text, NEW.jb::text);
	RETURN NULL;
END $$;
CREATE FUNCTION see_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO seen
	SELECT 'statement', o.id, o.jb::text, n.jb::text
	FROM old_rows o JOIN new_rows n USING (id);
	RETURN NULL;
END $$;
CREATE TRIGGER count_update BEFORE UPDATE ON docs
	FOR EACH ROW EXECUTE FUNCTION count_update();
CREATE TRIGGER see_row AFTER UPDATE ON docs
	FOR EACH ROW EXECUTE FUNCTION see_row();
CREATE TRIGGER see_statement AFTER UPDATE ON docs
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION see_statement();
SELECT take_snapshot();
UPDATE docs SET jb = jsonb_set(jb, '{big,10}', '"by trigger"');
UPDATE reference SET jb = jsonb_set(jsonb_set(jb, '{big,10}', '"by trigger"'), '{updates}', '1');
SELECT how, count(*) AS rows,
	count(*) FILTER (WHERE old_t = snap.t) AS old_as_before,
	count(*) FILTER (WHERE new_t = reference.jb::text) AS new_as_reference
FROM seen JOIN snap USING (id) JOIN reference USING (id)
GROUP BY how ORDER BY how;
DROP TRIGGER count_update ON docs;
DROP TRIGGER see_row ON docs;
DROP TRIGGER see_statement ON docs;
SELECT count(*) AS differing FROM docs JOIN reference USING (id)
WHERE docs.jb::text <> reference.jb::text;

-- Parallel workers read skeletons, aggregate them and hand whole
-- documents to the leader.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET debug_parallel_query = on;
EXPLAIN (COSTS OFF) SELECT sum(length(jb::text)) FROM docs;
SELECT (SELECT sum(length(jb::text)) FROM docs) =
	   (SELECT sum(length(jb::text)) FROM reference) AS same_lengths,
	   (SELECT sum((jb -> 'big' ->> 1999) IS NOT NULL::int) FROM docs) AS last_items_read;
SELECT count(*) AS same_documents
FROM (SELECT id, jb FROM docs) d JOIN reference USING (id)
WHERE d.jb = reference.jb AND d.jb::text = reference.jb::text;
RESET debug_parallel_query;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- Generic plans of the overridden operators and SQL/JSON functions.
PREPARE reads(int, text) AS
SELECT jb -> $2 AS arrow, jb['z'] AS subscript, jb @? '$.big[1999]' AS exists_last,
	   JSON_VALUE(jb, '$.a' RETURNING int) AS a, jb -> 'obj' ->> 'k60' = repeat(md5('60'), 3) AS deep
FROM docs WHERE id = $1;
SET plan_cache_mode = force_generic_plan;
EXECUTE reads(1, 'a');
EXECUTE reads(2, 'z');
EXECUTE reads(3, 'nothing');
RESET plan_cache_mode;
DEALLOCATE reads;

-- MERGE changes a part and returns the new documents.
MERGE INTO docs USING (SELECT generate_series(1, 3) AS id) s ON docs.id = s.id
WHEN MATCHED THEN UPDATE SET jb = jsonb_set(docs.jb, '{big,1}', '"merged"')
RETURNING docs.id, docs.jb -> 'big' ->> 1 AS item, length(docs.jb::text) = (
	SELECT length(jsonb_set(reference.jb, '{big,1}', '"merged"')::text)
	FROM reference WHERE reference.id = docs.id) AS same_length;
UPDATE reference SET jb = jsonb_set(jb, '{big,1}', '"merged"') WHERE id <= 3;

-- Comparisons that look at bytes or hashes, not at jsonb's ordering:
-- record image equality, DISTINCT by hashing and by sorting, set
-- operations.
SELECT count(*) FILTER (WHERE d *= r) AS image_equal,
	   count(*) FILTER (WHERE d.jb IS NOT DISTINCT FROM r.jb) AS not_distinct,
	   count(*) FILTER (WHERE jsonb_hash(d.jb) = jsonb_hash(r.jb) AND
						jsonb_hash_extended(d.jb, 7) = jsonb_hash_extended(r.jb, 7)) AS same_hashes
FROM docs d JOIN reference r USING (id);
SET enable_sort = off;
SELECT count(*) AS hashed_distinct FROM (SELECT jb FROM docs UNION SELECT jb FROM reference) u;
RESET enable_sort;
SET enable_hashagg = off;
SELECT count(*) AS sorted_distinct FROM (SELECT DISTINCT jb FROM (SELECT jb FROM docs UNION ALL SELECT jb FROM reference) a) u;
RESET enable_hashagg;
SELECT count(*) AS in_neither FROM (SELECT jb FROM docs EXCEPT SELECT jb FROM reference) e;

-- A materialized view over the documents, refreshed concurrently after
-- some of them changed: its diff compares row images.
CREATE MATERIALIZED VIEW docs_view AS SELECT id, jb FROM docs;
CREATE UNIQUE INDEX ON docs_view (id);
UPDATE docs SET jb = jsonb_set(jb, '{big,2}', '"viewed"') WHERE id <= 2;
UPDATE reference SET jb = jsonb_set(jb, '{big,2}', '"viewed"') WHERE id <= 2;
REFRESH MATERIALIZED VIEW CONCURRENTLY docs_view;
SELECT count(*) AS view_as_reference FROM docs_view v JOIN reference r USING (id)
WHERE v.jb::text = r.jb::text;

-- Binary COPY out of the opted-in table and back into another.
\getenv abs_builddir PG_ABS_BUILDDIR
\set copy_file :abs_builddir '/results/executor_paths.copy'
COPY docs TO :'copy_file' WITH (FORMAT binary);
CREATE TABLE copied (id int PRIMARY KEY, jb jsonb);
ALTER TABLE copied ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
COPY copied FROM :'copy_file' WITH (FORMAT binary);
SELECT count(*) AS copied_as_reference,
	   count(*) FILTER (WHERE (jsonb_toaster_storage(c.jb)).form = 'skeleton') AS copied_skeletons
FROM copied c JOIN reference r USING (id)
WHERE c.jb::text = r.jb::text;

DROP MATERIALIZED VIEW docs_view;
DROP TABLE docs, reference, snap, seen, copied;
DROP FUNCTION fill_docs(), take_snapshot(), cursor_against_snapshot(refcursor),
	count_update(), see_row(), see_statement();
