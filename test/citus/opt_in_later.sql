--
-- A table distributed first and opted in afterwards: Citus refuses ALTER
-- TABLE .. SET (toaster) on it; the label, set on the table and on its
-- shards, opts it in.  Then a reference table, and opting out.
--
CREATE TABLE e (id int PRIMARY KEY, jb jsonb);
SELECT create_distributed_table('e', 'id');
INSERT INTO e SELECT g, doc(g) FROM generate_series(1, 50) g;

DO $$
BEGIN
	ALTER TABLE e ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
	RAISE EXCEPTION 'Citus took ALTER TABLE .. SET (toaster): update the docs';
EXCEPTION WHEN feature_not_supported THEN
	RAISE NOTICE 'refused as expected: %', SQLERRM;
END $$;

SECURITY LABEL FOR jsonb_toaster ON COLUMN e.jb IS 'jsonb_toaster';
SELECT count(*) AS shards_labelled FROM run_command_on_shards('e',
	$$SECURITY LABEL FOR jsonb_toaster ON COLUMN %s.jb IS 'jsonb_toaster'$$)
WHERE success;
INSERT INTO e SELECT g, doc(g) FROM generate_series(51, 100) g;

DO $$
DECLARE
	bad bigint;
BEGIN
	bad := placements_not_opted_in('e');
	IF bad <> 0 THEN
		RAISE EXCEPTION '% placements of e lack the toaster option', bad;
	END IF;
	-- written before the opt-in: standard TOAST; after: the toaster
	SELECT count(*) INTO bad FROM e
	WHERE ((jsonb_toaster_storage(jb)).form = 'skeleton') <> (id > 50)
		OR jb <> doc(id);
	IF bad <> 0 THEN
		RAISE EXCEPTION '% documents of e are wrong or stored by the wrong TOAST', bad;
	END IF;
END $$;

-- a reference table: one placement on every node
CREATE TABLE r (id int PRIMARY KEY, jb jsonb);
ALTER TABLE r ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SELECT create_reference_table('r');
INSERT INTO r SELECT g, doc(g) FROM generate_series(1, 20) g;
DO $$
DECLARE
	bad bigint;
BEGIN
	SELECT count(*) INTO bad
	FROM run_command_on_placements('r',
		$c$SELECT count(*) FROM %s
		   WHERE (jsonb_toaster_storage(jb)).form = 'skeleton'
			 AND jb -> 'k3' = to_jsonb(repeat(md5((id * 3)::text), 20))$c$)
	WHERE NOT success OR result <> '20';
	IF bad <> 0 THEN
		RAISE EXCEPTION '% placements of r lack the toaster''s documents', bad;
	END IF;
END $$;

-- opting out: the label removed, on the table and its shards
SECURITY LABEL FOR jsonb_toaster ON COLUMN e.jb IS NULL;
SELECT count(*) AS shards_unlabelled FROM run_command_on_shards('e',
	$$SECURITY LABEL FOR jsonb_toaster ON COLUMN %s.jb IS NULL$$)
WHERE success;
DO $$
DECLARE
	bad bigint;
BEGIN
	SELECT count(*) INTO bad
	FROM run_command_on_placements('e',
		$c$SELECT attoptions IS NULL FROM pg_attribute
		   WHERE attrelid = '%s'::regclass AND attname = 'jb'$c$)
	WHERE NOT success OR result <> 't';
	IF bad <> 0 THEN
		RAISE EXCEPTION '% placements of e kept the toaster option', bad;
	END IF;
	SELECT count(*) INTO bad FROM e WHERE jb <> doc(id);
	IF bad <> 0 THEN
		RAISE EXCEPTION '% documents of e changed', bad;
	END IF;
END $$;
