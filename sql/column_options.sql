--
-- A column's own inline budget, in its toaster_options (patched servers
-- only): checked when set, taken by the toaster for every value of that
-- column, in place of jsonb_toaster.inline_budget.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;

-- one column per table: columns of a row share the room TOAST leaves
CREATE TABLE co (id int, b jsonb);
CREATE TABLE co_default (id int, a jsonb);
CREATE TABLE co_zero (id int, c jsonb);
ALTER TABLE co_default ALTER COLUMN a SET (toaster = 'jsonb_toaster');
ALTER TABLE co ALTER COLUMN b SET (toaster = 'jsonb_toaster', toaster_options = 'inline_budget=150');
ALTER TABLE co_zero ALTER COLUMN c SET (toaster = 'jsonb_toaster', toaster_options = E' inline_budget\t= 0\n');

-- refused: unknown keys, bad values, no toaster
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budgets=10');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=-1');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=ten');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = '');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=1,');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=5, inline_budget=7');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=+5');
ALTER TABLE co ALTER COLUMN b SET (toaster_options = 'inline_budget=99999999999999999999');
CREATE TABLE co_plain (x jsonb);
ALTER TABLE co_plain ALTER COLUMN x SET (toaster_options = 'inline_budget=10');
DROP TABLE co_plain;
SELECT attrelid::regclass, attname, attoptions FROM pg_attribute
WHERE attrelid IN ('co'::regclass, 'co_zero'::regclass) AND attnum > 1 ORDER BY 1;

-- documents of many short fields and a long value
CREATE TABLE co_docs AS SELECT g AS id, d FROM generate_series(1, 4) g,
	LATERAL (SELECT (SELECT jsonb_object_agg('s' || i, repeat(chr(96 + g), 20))
					 FROM generate_series(1, 50) i) ||
			jsonb_build_object('id', g,
				'tags', (SELECT jsonb_agg(md5((g * i)::text)) FROM generate_series(1, 300) i)) d) s;
INSERT INTO co SELECT id, d FROM co_docs;
INSERT INTO co_default SELECT id, d FROM co_docs;
INSERT INTO co_zero SELECT id, d FROM co_docs;

-- the row keeps at most the column's budget (the pointer's header aside);
-- the column without options keeps the short fields; every value reads
-- back
CREATE VIEW co_all AS
SELECT id, a, b, c, d, (jsonb_toaster_storage(a)).inline_size AS a_inline,
	   (jsonb_toaster_storage(b)).inline_size AS b_inline,
	   (jsonb_toaster_storage(c)).inline_size AS c_inline
FROM co JOIN co_default USING (id) JOIN co_zero USING (id) JOIN co_docs USING (id);
SELECT id, a_inline > 1000 AS a_keeps_fields, b_inline <= 150 + 64 AS b_within,
	   c_inline <= b_inline AS c_least, a = d AND b = d AND c = d AS same,
	   b ->> 's7' AS s7, c -> 'tags' ->> 7 = md5((id * 8)::text) AS tag
FROM co_all ORDER BY id;

-- updates keep to it too: a changed part (an adopted pointer) and a
-- rewrite
UPDATE co SET b = jsonb_set(b, '{s3}', '"changed"') WHERE id = 1;
UPDATE co_zero SET c = jsonb_set(c, '{s3}', '"changed"') WHERE id = 1;
UPDATE co SET b = b || '{"more": 1}' WHERE id = 2;
UPDATE co_zero SET c = c || '{"more": 1}' WHERE id = 2;
SELECT id, b_inline <= 150 + 64 AS b_within, c_inline <= b_inline AS c_least,
	   b = c AS same, b ->> 's3' AS s3, b -> 'more' AS more
FROM co_all ORDER BY id;

-- a budget lowered after the values were stored applies to those changed
ALTER TABLE co_default ALTER COLUMN a SET (toaster_options = 'inline_budget=150');
UPDATE co_default SET a = jsonb_set(a, '{s5}', '"x"') WHERE id = 4;
SELECT id, a_inline <= 150 + 64 AS a_within, a = jsonb_set(d, '{s5}', '"x"') AS same
FROM co_all WHERE id = 4;

-- other options, RESET; without options the setting applies
ALTER TABLE co ALTER COLUMN b SET (n_distinct = 5);
ALTER TABLE co ALTER COLUMN b RESET (toaster_options);
SET jsonb_toaster.inline_budget = 100;
UPDATE co SET b = b || '{"reset": true}' WHERE id = 3;
SELECT id, b_inline <= 100 + 64 AS within_setting FROM co_all WHERE id = 3;
RESET jsonb_toaster.inline_budget;
DROP VIEW co_all;
DROP TABLE co, co_default, co_zero, co_docs;
