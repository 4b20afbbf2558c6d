--
-- Random updates of stored documents (patched servers only).  Documents of
-- random shapes (split roots, roots kept in the row with long values in
-- parts, nested containers, arrays, unicode, numerics, long strings) are
-- stored twice: by the toaster, and as standard jsonb in a table that is
-- not opted in.  Both go through the same random UPDATEs: jsonb_set(),
-- jsonb_insert(), #-, - text, - text[], ||, subscripting, the whole
-- document sent back as text (changed, or not), some of them rolled back
-- in a subtransaction.  After every step the two rows must hold the same
-- bytes, or both statements must have failed with the same error, and the
-- accessors must read the same along a random path.  At the
-- end, after VACUUM, the TOAST relation must hold exactly the chunks of
-- the parts the live rows refer to.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;
SELECT setseed(0.25);

-- a random scalar: short or long, ASCII or not, numbers of every scale
CREATE FUNCTION ru_scalar() RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
	CASE (random() * 7)::int
		WHEN 0 THEN RETURN 'null';
		WHEN 1 THEN RETURN to_jsonb(random() < 0.5);
		WHEN 2 THEN RETURN to_jsonb((random() * 1e6)::int - 500000);
		WHEN 3 THEN RETURN to_jsonb(round((random() - 0.5)::numeric
										  * 10::numeric ^ (random() * 40 - 10)::int, 12));
		WHEN 4 THEN RETURN to_jsonb(md5(random()::text));
		WHEN 5 THEN RETURN to_jsonb(repeat('é日🔑', (random() * 30)::int));
		ELSE RETURN to_jsonb(left(repeat(md5(random()::text), 100),
								  (random() * 2500)::int));
	END CASE;
END $$;

-- a random value: a scalar, or (depth left) an array or an object of
-- random keys, of up to width entries
CREATE FUNCTION ru_value(depth int, width int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	n int := (random() * width)::int;
	result jsonb;
BEGIN
	IF depth <= 0 OR random() < 0.55 THEN
		RETURN ru_scalar();
	END IF;
	IF random() < 0.5 THEN
		result := '[]';
		FOR i IN 1..n LOOP
			result := result || jsonb_build_array(ru_value(depth - 1, width / 3));
		END LOOP;
	ELSE
		result := '{}';
		FOR i IN 1..n LOOP
			result := result || jsonb_build_object('k' || (random() * 3 * n)::int,
												   ru_value(depth - 1, width / 3));
		END LOOP;
	END IF;
	RETURN result;
END $$;

-- a value the row cannot keep: a wide array, a wide object, a long string
CREATE FUNCTION ru_big() RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
	CASE (random() * 2)::int
		WHEN 0 THEN
			RETURN (SELECT jsonb_agg(ru_value(1, 4)) FROM generate_series(1, 50 + (random() * 500)::int));
		WHEN 1 THEN
			RETURN (SELECT jsonb_object_agg('w' || i, ru_value(1, 4))
					FROM generate_series(1, 50 + (random() * 200)::int) i);
		ELSE
			RETURN to_jsonb(repeat(md5(random()::text), 50 + (random() * 150)::int));
	END CASE;
END $$;

-- a random document: mostly an object (many short values, a few long
-- ones), sometimes an array
CREATE FUNCTION ru_doc() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
	n int := 5 + (random() * 200)::int;
	result jsonb;
BEGIN
	IF random() < 0.15 THEN
		RETURN (SELECT jsonb_agg(ru_value(2, 12)) FROM generate_series(1, n));
	END IF;
	result := (SELECT jsonb_object_agg('k' || (random() * 2 * n)::int, ru_value(2, 12))
			   FROM generate_series(1, n));
	FOR i IN 1..(random() * 3)::int LOOP
		result := result || jsonb_build_object('big' || i, ru_big());
	END LOOP;
	RETURN result;
END $$;

-- a random document whose "data" is mostly one array, long enough with
-- ranges of 64 bytes to be opened (the array then has ranges of its own,
-- beside short fields kept in the tree), and a wide object kept in parts
CREATE FUNCTION ru_nested_doc() RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
	RETURN (SELECT jsonb_object_agg('k' || i, (random() * 1000)::int) FROM generate_series(1, 3 + (random() * 10)::int) i) ||
		jsonb_build_object('data', jsonb_build_object('n', (random() * 10)::int, 'next', left(md5(random()::text), 8),
			'items', (SELECT jsonb_agg(jsonb_build_object('k', i, 'name', md5(random()::text)))
					  FROM generate_series(1, 700 + (random() * 500)::int) i),
			'sub', jsonb_build_object('x', (random() * 10)::int, 'y', jsonb_build_array(1, 'z'))),
			'side', (SELECT jsonb_object_agg('c' || i, md5(random()::text))
					 FROM generate_series(1, 20 + (random() * 400)::int) i));
END $$;

-- a key of the document's root (an existing one, mostly), or an index of
-- it when it is an array, as a path step
CREATE FUNCTION ru_step(doc jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	n int;
	k text;
BEGIN
	IF jsonb_typeof(doc) = 'array' THEN
		n := jsonb_array_length(doc);
		RETURN ((random() * (n + 2))::int - 1 - CASE WHEN random() < 0.2 THEN n ELSE 0 END)::text;
	END IF;
	IF jsonb_typeof(doc) <> 'object' OR random() < 0.2 THEN
		RETURN 'k' || (random() * 700)::int;
	END IF;
	SELECT key INTO k FROM jsonb_object_keys(doc) key
	ORDER BY key OFFSET (random() * (SELECT greatest(count(*) - 1, 0) FROM jsonb_object_keys(doc)))::int
	LIMIT 1;
	RETURN coalesce(k, 'k0');
END $$;

-- the value doc has at step, if any
CREATE FUNCTION ru_at(doc jsonb, step text) RETURNS jsonb LANGUAGE sql AS $$
	SELECT CASE jsonb_typeof(doc)
		WHEN 'object' THEN doc -> step
		WHEN 'array' THEN doc -> step::int
	END
$$;

-- a path of one, two or three steps into doc
CREATE FUNCTION ru_path(doc jsonb) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
	p text[] := ARRAY[ru_step(doc)];
	inner_doc jsonb := doc;
BEGIN
	IF random() < 0.5 THEN
		RETURN p;
	END IF;
	inner_doc := ru_at(inner_doc, p[1]);
	p := p || ru_step(coalesce(inner_doc, '{}'));
	IF random() < 0.7 THEN
		RETURN p;
	END IF;
	inner_doc := ru_at(inner_doc, p[2]);
	RETURN p || ru_step(coalesce(inner_doc, '{}'));
END $$;

-- the SET clause of a random UPDATE of a row holding doc
CREATE FUNCTION ru_change(doc jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p text[] := ru_path(doc);
	v jsonb := ru_value(1, 6);
	k text := ru_step(doc);
BEGIN
	CASE (random() * 11)::int
		WHEN 0 THEN
			RETURN format('jb = jsonb_set(jb, %L, %L, %s)', p, v, random() < 0.8);
		WHEN 1 THEN
			RETURN format('jb = jsonb_set(jb, %L, %L)', ARRAY[k], to_jsonb(md5(random()::text)));
		WHEN 2 THEN
			RETURN format('jb = jsonb_insert(jb, %L, %L, %s)', p, v, random() < 0.5);
		WHEN 3 THEN
			RETURN format('jb = jb #- %L', p);
		WHEN 4 THEN
			RETURN format('jb = jb - %L', k);
		WHEN 5 THEN
			RETURN format('jb = jb - %L::text[]', ARRAY[k, ru_step(doc), 'k' || (random() * 700)::int]);
		WHEN 6 THEN
			RETURN format('jb = jb || %L', jsonb_build_object(k, v));
		WHEN 7 THEN
			RETURN format('jb = jb || %L', jsonb_build_object(k, v, ru_step(doc), ru_scalar(),
															  'k' || (random() * 700)::int, ru_scalar()));
		WHEN 8 THEN
			IF random() < 0.5 THEN
				RETURN format('jb[%L] = %L', k, v);
			END IF;
			RETURN format('jb%s = %L',
						  (SELECT string_agg(format('[%L]', s), '' ORDER BY n)
						   FROM unnest(p) WITH ORDINALITY u(s, n)), v);
		WHEN 9 THEN
			-- the whole document sent back, one value changed (the ORM pattern)
			BEGIN
				RETURN format('jb = %L', jsonb_set(doc, p, v)::text);
			EXCEPTION WHEN OTHERS THEN
				RETURN format('jb = %L', (doc || '{"orm": 1}')::text);
			END;
		ELSE
			-- sent back unchanged
			RETURN format('jb = %L', doc::text);
	END CASE;
END $$;

-- run a SET clause on one row of tab; NULL, or the error it raised; with
-- roll_back, the change is made and rolled back (a subtransaction)
CREATE FUNCTION ru_apply(tab text, row_id int, change text, roll_back bool)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	BEGIN
		EXECUTE format('UPDATE %I SET %s WHERE id = %s', tab, change, row_id);
		IF roll_back THEN
			RAISE EXCEPTION 'ru: roll back';
		END IF;
	EXCEPTION WHEN OTHERS THEN
		IF roll_back AND SQLERRM = 'ru: roll back' THEN
			RETURN NULL;
		END IF;
		RETURN SQLSTATE || ': ' || SQLERRM;
	END;
	RETURN NULL;
END $$;

CREATE TABLE ru (id int PRIMARY KEY, jb jsonb);
ALTER TABLE ru ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE ru_plain (id int PRIMARY KEY, jb jsonb);
CREATE TABLE ru_log (phase int, step int, id int, change text, outcome text);

-- what the accessors read from a row of tab along a path: -> and ->> of
-- its first step, #> and #>> of the whole path, ? of the first step, and
-- @> of the pair that step names
CREATE FUNCTION ru_reads(tab text, row_id int, p text[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
	by_index text := CASE WHEN p[1] ~ '^-?[0-9]{1,9}$'
		THEN format('jb -> %s, jb ->> %s', p[1], p[1]) ELSE 'NULL' END;
BEGIN
	EXECUTE format($q$SELECT concat_ws(' | ',
			jb -> %1$L, jb ->> %1$L, %5$s, jb #> %2$L, jb #>> %2$L, jb ? %1$L,
			jb @> jsonb_build_object(%1$L, jb -> %1$L))
		FROM %3$I WHERE id = %4$s$q$, p[1], p, tab, row_id, by_index)
		INTO result;
	RETURN result;
END $$;

-- load rows first..last, then run steps random updates on them
CREATE FUNCTION ru_run(phase int, first int, last int, steps int,
					   nested bool DEFAULT false)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	row_id int;
	doc jsonb;
	change text;
	roll_back bool;
	err text;
	plain_err text;
	same bool;
	p text[];
BEGIN
	FOR i IN first..last LOOP
		doc := CASE WHEN nested THEN ru_nested_doc() ELSE ru_doc() END;
		INSERT INTO ru VALUES (i, doc);
		INSERT INTO ru_plain VALUES (i, doc);
	END LOOP;
	FOR step IN 1..steps LOOP
		row_id := first + (random() * (last - first))::int;
		SELECT jb INTO doc FROM ru_plain WHERE id = row_id;
		change := ru_change(doc);
		roll_back := random() < 0.1;
		err := ru_apply('ru', row_id, change, roll_back);
		plain_err := ru_apply('ru_plain', row_id, change, roll_back);
		SELECT jt_test_flat_bytes(a.jb) = jt_test_flat_bytes(b.jb) INTO same
		FROM ru a, ru_plain b WHERE a.id = row_id AND b.id = row_id;
		SELECT jb INTO doc FROM ru_plain WHERE id = row_id;
		p := ru_path(doc);
		INSERT INTO ru_log VALUES (phase, step, row_id, change,
			CASE
				WHEN err IS DISTINCT FROM plain_err THEN
					format('errors differ: %s / %s', coalesce(err, 'none'), coalesce(plain_err, 'none'))
				WHEN NOT same THEN 'documents differ'
				WHEN ru_reads('ru', row_id, p) IS DISTINCT FROM ru_reads('ru_plain', row_id, p) THEN
					format('reads along %s differ', p)
				WHEN err IS NOT NULL THEN 'error'
				WHEN roll_back THEN 'rolled back'
				ELSE 'ok'
			END);
	END LOOP;
END $$;

-- phase 1: the default settings; phases 2 and 3: smaller ranges and
-- inline budgets, so that more roots are split, more values leave the row
-- and containers nested in parts are split too; phase 4 (below)
SELECT ru_run(1, 1, 12, 1000);
SET jsonb_toaster.range_size = 256;
SET jsonb_toaster.inline_budget = 600;
SELECT ru_run(2, 13, 24, 1000);
SET jsonb_toaster.range_size = 64;
SET jsonb_toaster.inline_budget = 300;
SELECT ru_run(3, 25, 32, 600);
-- phase 4: documents with an opened value, whose paths go through objects
-- of the tree
RESET jsonb_toaster.inline_budget;
SELECT ru_run(4, 33, 38, 400, true);
SELECT count(DISTINCT id) > 0 AS some_opened FROM ru, jsonb_toaster_parts(jb) p
WHERE id >= 33 AND cardinality(p.path) >= 2 AND p.path[1] = 'data' AND p.path[2] = 'items';
RESET jsonb_toaster.range_size;

-- every step gave the same bytes and reads, or the same error, on both
SELECT phase, outcome, count(*) FROM ru_log
WHERE outcome IN ('ok', 'error', 'rolled back')
GROUP BY phase, outcome ORDER BY phase, outcome;
SELECT phase, step, id, left(change, 120) AS change, outcome FROM ru_log
WHERE outcome NOT IN ('ok', 'error', 'rolled back') ORDER BY phase, step;

-- the documents took the toaster's forms (roots split into ranges, roots
-- kept in the row), and every one reads back as the standard copy
SELECT form, split, count(*) > 0 AS some FROM (
	SELECT (jsonb_toaster_storage(jb)).form,
		(SELECT bool_or(p.path = '{}') FROM jsonb_toaster_parts(jb) p) AS split
	FROM ru) s
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS differ FROM ru a JOIN ru_plain b USING (id)
WHERE jt_test_flat_bytes(a.jb) <> jt_test_flat_bytes(b.jb) OR a.jb::text <> b.jb::text;

-- nothing leaked, nothing lost: TOAST rows equal the live parts' chunks,
-- each value counted once, and no two rows refer to one value
VACUUM ru;
SELECT jt_test_toast_ok('ru');

DELETE FROM ru;
VACUUM ru;
SELECT jt_test_toast_ok('ru');

DROP TABLE ru, ru_plain, ru_log;
DROP FUNCTION ru_run(int, int, int, int, bool), ru_apply(text, int, text, bool),
	ru_reads(text, int, text[]),
	ru_change(jsonb), ru_path(jsonb), ru_at(jsonb, text), ru_step(jsonb), ru_doc(),
	ru_nested_doc(), ru_big(),
	ru_value(int, int), ru_scalar();
DROP EXTENSION jsonb_toaster_test;
