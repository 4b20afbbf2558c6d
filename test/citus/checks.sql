--
-- After each change of the cluster: d's documents equal ref's, the
-- overridden operators answer on the shards as the builtins do on ref,
-- every placement's column is opted in and holds only skeletons.
--
DO $$
DECLARE
	bad bigint;
BEGIN
	WITH x AS MATERIALIZED (SELECT id, jb FROM d)
	SELECT count(*) INTO bad
	FROM x FULL JOIN ref USING (id)
	WHERE x.jb IS DISTINCT FROM ref.jb;
	IF bad <> 0 THEN
		RAISE EXCEPTION '% documents differ from the reference', bad;
	END IF;

	WITH x AS MATERIALIZED (SELECT id, reads(jb) AS r FROM d)
	SELECT count(*) INTO bad
	FROM x FULL JOIN (SELECT id, reads(jb) AS r FROM ref) y USING (id)
	WHERE x.r IS DISTINCT FROM y.r;
	IF bad <> 0 THEN
		RAISE EXCEPTION '% documents read differently from the reference', bad;
	END IF;

	SELECT count(*) INTO bad FROM d
	WHERE (jsonb_toaster_storage(jb)).form <> 'skeleton';
	IF bad <> 0 THEN
		RAISE EXCEPTION '% documents of d are not stored by the toaster', bad;
	END IF;

	bad := placements_not_opted_in('d');
	IF bad <> 0 THEN
		RAISE EXCEPTION '% placements of d lack the toaster option', bad;
	END IF;
END $$;
SELECT (SELECT count(*) FROM d) AS documents,
	   (SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'd'::regclass) AS shards;
