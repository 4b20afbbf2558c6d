--
-- A stock server (no custom TOAST hooks): the toaster's parts are left out
-- of the build, and what needs them says so.
--
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;

SELECT jsonb_toaster_custom_toast();

CREATE TABLE t (id int, jb jsonb);
INSERT INTO t VALUES (1, jsonb_build_object('pad', repeat('x', 100000)));
SELECT jsonb_toaster_convert_column('t', 'jb');
-- the conversion's storing function works anywhere
SELECT jsonb_toaster_standard(jb) = jb AS same, pg_column_size(jsonb_toaster_standard(jb)) > 100000 AS flat
FROM t;

-- the toaster's option does not exist here
ALTER TABLE t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');

-- nothing refuses DROP EXTENSION
DROP TABLE t;
DROP EXTENSION jsonb_toaster;
