--
-- What the accessors keep between calls is bounded for the backend, not
-- per call site: a query calling twenty accessors over large documents
-- keeps about what a query calling one keeps (it once kept twenty
-- document-sized buffers, and up to 128 MB per call site).  The buffers
-- kept are reused by every call, and freed when the transaction ends.
--
CREATE EXTENSION jsonb_toaster;

-- The backend's memory, all contexts together.
CREATE FUNCTION am_memory() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts
$$;
-- What the accessors' buffers take now.
CREATE FUNCTION am_buffers() RETURNS bigint LANGUAGE sql VOLATILE AS $$
	SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
	WHERE name = 'jsonb_toaster accessor buffers'
$$;

-- Documents of 4 MB whose keys read below sit after the large value (keys
-- are stored shortest first): every read decompresses about 4 MB from a
-- compressed TOAST value of about 2 MB.
CREATE TABLE am_docs (id int, jb jsonb);
INSERT INTO am_docs
SELECT i, (SELECT jsonb_object_agg('key' || lpad(k::text, 2, '0'), k * i)
		   FROM generate_series(1, 20) k) ||
	jsonb_build_object('b', (SELECT string_agg(repeat(md5((i * j)::text), 2), '')
							 FROM generate_series(1, 62500) j))
FROM generate_series(1, 3) i;
SELECT id, s.form, s.compressed, s.raw_size > 4000000 AS large
FROM am_docs, jsonb_toaster_storage(jb) s ORDER BY id;

-- The most memory held after a row's accessors have run, with twenty call
-- sites and with one.
BEGIN;
CREATE TEMP TABLE am_twenty AS
SELECT max(am_memory()) AS held, count(*) AS n FROM am_docs
WHERE jt_object_field(jb, 'key01') IS NOT NULL
  AND jt_object_field(jb, 'key02') IS NOT NULL
  AND jt_object_field(jb, 'key03') IS NOT NULL
  AND jt_object_field(jb, 'key04') IS NOT NULL
  AND jt_object_field(jb, 'key05') IS NOT NULL
  AND jt_object_field(jb, 'key06') IS NOT NULL
  AND jt_object_field(jb, 'key07') IS NOT NULL
  AND jt_object_field(jb, 'key08') IS NOT NULL
  AND jt_object_field(jb, 'key09') IS NOT NULL
  AND jt_object_field(jb, 'key10') IS NOT NULL
  AND jt_object_field_text(jb, 'key11') IS NOT NULL
  AND jt_object_field_text(jb, 'key12') IS NOT NULL
  AND jt_object_field_text(jb, 'key13') IS NOT NULL
  AND jt_object_field_text(jb, 'key14') IS NOT NULL
  AND jt_object_field_text(jb, 'key15') IS NOT NULL
  AND jt_extract_path(jb, 'key16') IS NOT NULL
  AND jt_extract_path(jb, 'key17') IS NOT NULL
  AND jt_extract_path_text(jb, 'key18') IS NOT NULL
  AND jt_exists_all(jb, '{key19, key20}')
  AND jt_exists(jb, 'key20');
-- the buffers kept now, in the same transaction: one document's
SELECT am_buffers() BETWEEN 4000000 AND 16000000 AS keeps_one_document;
COMMIT;
BEGIN;
CREATE TEMP TABLE am_one ON COMMIT DROP AS
SELECT max(am_memory()) AS held, count(*) AS n FROM am_docs
WHERE jt_object_field(jb, 'key01') IS NOT NULL;
SELECT o.n AS rows_one, t.n AS rows_twenty,
	t.held - o.held < 2 * 1024 * 1024 AS twenty_hold_what_one_holds
FROM am_one o, am_twenty t;
COMMIT;
DROP TABLE am_twenty;

-- The buffers are reused: after a second pass of the same ten accessors
-- over the three documents, what is kept is what was kept after the first.
CREATE VIEW am_ten AS
SELECT count(*) AS n FROM am_docs
WHERE jt_object_field(jb, 'key02') IS NOT NULL
  AND jt_object_field_text(jb, 'key03') IS NOT NULL
  AND jt_exists(jb, 'key04')
  AND jt_object_field(jb, 'key05') IS NOT NULL
  AND jt_object_field(jb, 'key06') IS NOT NULL
  AND jt_object_field(jb, 'key07') IS NOT NULL
  AND jt_object_field(jb, 'key08') IS NOT NULL
  AND jt_object_field(jb, 'key09') IS NOT NULL
  AND jt_object_field(jb, 'key10') IS NOT NULL
  AND jt_object_field(jb, 'key11') IS NOT NULL;
BEGIN;
SELECT n FROM am_ten;
CREATE TEMP TABLE am_first ON COMMIT DROP AS SELECT am_buffers() AS kept;
SELECT n FROM am_ten;
SELECT am_buffers() = kept AS same_buffers, kept > 4000000 AS kept_a_document
FROM am_first;
COMMIT;

-- and nothing is kept once the transaction is over
SELECT am_buffers() < 65536 AS freed_at_commit;

-- A read that fails half-way, caught by a subtransaction, gives back the
-- buffers it held: after ten of them, a read keeps what it kept before.
-- The damaged value is a pointer to a document's chunks that declares
-- fewer of them (jsonb_toaster_test): the read fails at the last chunk,
-- its buffers grown to nearly the document's size.
CREATE EXTENSION jsonb_toaster_test;
CREATE VIEW am_damaged AS
SELECT jt_test_toast_pointer(jb, (s.raw_size - 4)::int,
							 (s.stored_size - 100000)::int, 'pglz') AS jb
FROM am_docs, jsonb_toaster_storage(jb) s WHERE id = 1;
DO $$
DECLARE
	kept bigint;
	errors int := 0;
BEGIN
	PERFORM jt_object_field(jb, 'key01') FROM am_docs WHERE id = 1;
	kept := am_buffers();
	FOR i IN 1 .. 10 LOOP
		BEGIN
			PERFORM jt_object_field(jb, 'key01') FROM am_damaged;
		EXCEPTION WHEN data_corrupted THEN
			errors := errors + 1;
		END;
	END LOOP;
	PERFORM jt_object_field(jb, 'key01') FROM am_docs WHERE id = 1;
	RAISE NOTICE 'errors: %, kept as before them: %', errors,
		am_buffers() <= kept;
END $$;
DROP VIEW am_damaged;
DROP EXTENSION jsonb_toaster_test;

-- A document larger than what is kept between calls (128 MB in all): its
-- buffer is freed after the call, its small stored stream kept.
CREATE TABLE am_big (jb jsonb);
INSERT INTO am_big SELECT jsonb_build_object('b', repeat('x', 140000000), 'key', 1);
BEGIN;
SELECT jt_object_field(jb, 'key') FROM am_big;
SELECT am_buffers() < 128 * 1024 * 1024 AS within_bound;
COMMIT;
DROP TABLE am_big;

DROP VIEW am_ten;
DROP TABLE am_docs;
DROP FUNCTION am_memory(), am_buffers();
DROP EXTENSION jsonb_toaster;
