-- gen_doc(id, ver): the test document of a key and version, 8 to 13 kB of
-- text.  At the default inline budget its short fields stay in the
-- skeleton, and "items", "map" and "text" leave it; with range_size 1024
-- their containers are cut into several ranges.  Shared by the TAP tests.
CREATE FUNCTION gen_doc(i int, v int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object(
	'id', i, 'ver', v,
	'name', 'document ' || i || ' version ' || v,
	'flag', (i + v) % 2 = 0,
	'tags', (SELECT jsonb_agg('tag' || (i * 7 + j + v) % 97) FROM generate_series(1, 5) j),
	'items', (SELECT jsonb_agg(jsonb_build_object('n', j, 'h', md5((i * 1000 + j + v)::text),
			'v', ((i * j + v) % 1000) / 7.0)) FROM generate_series(1, 40 + (i + v) % 30) j),
	'text', (SELECT string_agg(md5((i * 100 + j + v)::text), '') FROM generate_series(1, 70 + i % 40) j),
	'map', (SELECT jsonb_object_agg('k' || j, md5((i + j + v)::text))
			FROM generate_series(1, 50 + (i * v) % 40) j),
	'nested', jsonb_build_object('a', jsonb_build_object('b', repeat('x' || i, 150 + v % 50))))
$$;
