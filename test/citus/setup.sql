--
-- A distributed table whose document column was opted in before
-- create_distributed_table(), and a local reference table on the
-- coordinator (standard storage) that gets the same statements.
--
CREATE EXTENSION jsonb_toaster;

-- the test's documents (Citus creates the function on every node)
CREATE FUNCTION doc(i int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
	SELECT (SELECT jsonb_object_agg('k' || j, repeat(md5((i * j)::text), 20))
			FROM generate_series(1, 40) j) ||
		jsonb_build_object('id', i, 'n', 0,
			'arr', (SELECT jsonb_agg(md5((i + j)::text)) FROM generate_series(1, 300) j),
			'nested', jsonb_build_object('a', jsonb_build_object('b', repeat('x', 3000 + i))))
$$;

-- the reads checks.sql compares, on the shards for d (Citus creates the
-- function on every node) and on the coordinator for ref
CREATE FUNCTION reads(jb jsonb) RETURNS text LANGUAGE sql STABLE AS $$
	SELECT row(jb -> 'k5', jb ->> 'k6', jb #> '{arr,7}',
			   jb #>> '{nested,a,b}', jb ? 'k7', jb ?| ARRAY['zz', 'k2'],
			   jb @> '{"n": 0}', jb['arr'][3], jb['nested']['a']['c'],
			   jsonb_path_query_first(jb, '$.arr[5]'),
			   jb @? '$.nested.a.c', JSON_VALUE(jb, '$.k8'),
			   jsonb_typeof(jb -> 'arr'))::text
$$;

-- helpers of the test, on the coordinator only
SET citus.enable_ddl_propagation = off;
CREATE TABLE ref (id int PRIMARY KEY, jb jsonb);
-- the updates the test ran on d while the cluster changed, on ref
CREATE FUNCTION replay_updates(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		UPDATE ref SET jb = jsonb_set(jb, '{n}', to_jsonb(i)) WHERE id = i % 200 + 1;
	END LOOP;
END $$;
-- the placements of t whose column jb is not opted in
CREATE FUNCTION placements_not_opted_in(t regclass) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*)
	FROM run_command_on_placements(t,
		$c$SELECT attoptions::text FROM pg_attribute
		   WHERE attrelid = '%s'::regclass AND attname = 'jb'$c$)
	WHERE NOT success OR result <> '{toaster=jsonb_toaster}'
$$;
RESET citus.enable_ddl_propagation;

CREATE TABLE d (id int PRIMARY KEY, jb jsonb);
ALTER TABLE d ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SET citus.shard_count = 4;
SELECT create_distributed_table('d', 'id');

INSERT INTO ref SELECT g, doc(g) FROM generate_series(1, 200) g;
INSERT INTO d SELECT * FROM ref;

-- the ways documents change: jsonb_set, key removal, subscripting, a
-- document sent whole
UPDATE d SET jb = jsonb_set(jb, '{k5}', ((id * 2)::text)::jsonb) WHERE id % 3 = 0;
UPDATE ref SET jb = jsonb_set(jb, '{k5}', ((id * 2)::text)::jsonb) WHERE id % 3 = 0;
UPDATE d SET jb = jb - 'k7' WHERE id % 4 = 0;
UPDATE ref SET jb = jb - 'k7' WHERE id % 4 = 0;
UPDATE d SET jb['nested']['a']['c'] = '"sub"' WHERE id % 5 = 0;
UPDATE ref SET jb['nested']['a']['c'] = '"sub"' WHERE id % 5 = 0;
UPDATE d SET jb = doc(id + 1000) WHERE id % 7 = 0;
UPDATE ref SET jb = doc(id + 1000) WHERE id % 7 = 0;
