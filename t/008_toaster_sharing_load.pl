# Copyright (c) 2026, jsonb_toaster developers
#
# Parts shared between row versions, under load.  Four pgbench clients run
# for a fixed number of transactions against skeleton documents cut into
# many 1 kB ranges: updaters that change one array element (jsonb_set), add
# or replace a key (||), remove one (-), assign through a subscript, append
# to an array (jsonb_insert and ||), update another column, send back the
# whole document as text after a change or unchanged (the ORM pattern),
# replace it with a new version, or remove or set several keys at once
# (- text[], ||); transactions that roll back and others with savepoints
# rolled back; rows deleted and inserted again; and readers
# that check values read through ->, ->>, #> and ? (or whole documents)
# against the row's model columns in the same query, raising an error on a
# mismatch.  Half of the updates go to four hot rows, so several clients
# update the same rows concurrently.
#
# Each document is a function of its key and a few counters kept in
# ordinary columns of the same row, updated by the same statement: after
# the load every document must equal the one regenerated from them.  After
# VACUUM the TOAST relation must hold exactly the chunks of the parts the
# live rows refer to, each value counted once (nothing leaked, nothing
# lost), no TOAST value may be referred to by two live rows or twice by one,
# and amcheck must find nothing wrong.  Sharing must have happened: the
# parts of an array no update touches keep, in every row whose document
# changed, the TOAST values they had before the load.  Then CLUSTER and
# VACUUM FULL rewrite the table: the same checks again, sharing still works
# afterwards, and once every row is deleted and vacuumed the TOAST relation
# is empty.  Finally, with wal_level = logical, a logged table shares as
# an unlogged one does (the toaster logs the shared values' chunks for
# logical decoding)
# while an unlogged one still does.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('sharing');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
wal_level = replica
autovacuum = off
max_connections = 20
# many parts per document, wide containers cut into several ranges (units
# of two ranges, so that containers longer than that are cut)
jsonb_toaster.range_size = 1024
jsonb_toaster.unit_size = 2048
# Room in the row for the directory of those ranges (with the table's
# toast_tuple_target = 4000), so that which values leave the row never
# changes between versions and the sharing assertions are exact.  (With
# the default budget, a few parts of "words" are written again when a
# version's choice differs: 4 of 190 in one run.)
jsonb_toaster.inline_budget = 3600
# evidence that clients waited for each other's row locks (not asserted)
log_lock_waits = on
deadlock_timeout = '20ms'
});
$node->start;

# The model.  A document is gen_doc(id, ver) after the edits counted in its
# row: se edits of "items" (the m-th sets element se_pos(id, m)), sub
# subscript assignments in "map" (the m-th sets key map_key(id, m)), cat
# concatenations (the m-th sets key "x<m % 4>"), del removals (the m-th
# removes key "d<m>") and app appends to "log".  A new version (ver + 1)
# starts again from gen_doc with every counter at 0.  "words" depends on the
# key alone and no edit touches it: its parts can always be shared.
#
# gen_doc: 26 to 34 kB of text, a skeleton of 29 to 43 parts.  Every
# container is either small enough to stay in the row or far too long to
# (items 10-14 kB, map 6-9 kB, words 6 kB, log 4.5 kB and 45 bytes more an
# append, "x3" 5 kB every other time it is set, a short object the other
# times, so that || also replaces a value kept in parts by one kept in the
# row and drops its part): the row keeps well under the budget and the
# ranges' size never changes.
$node->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE EXTENSION amcheck;
CREATE FUNCTION n_items(i int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 100 + (i * 37) % 80 $$;
CREATE FUNCTION n_keys(i int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 120 + (i * 53) % 60 $$;
CREATE FUNCTION item(i int, v int, j int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object('n', j, 'h', md5(i || '/' || v || '/' || j),
	'v', ((i * j + v) % 1000) / 7.0, 'ok', (i + j) % 3 = 0)
$$;
CREATE FUNCTION item_edit(i int, m int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object('edit', m, 'h', md5('edit ' || i || '/' || m))
$$;
CREATE FUNCTION se_pos(i int, m int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT (m * 7) % n_items(i) $$;
CREATE FUNCTION map_key(i int, m int) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'k' || (m * 11) % n_keys(i) $$;
CREATE FUNCTION map_val(i int, m int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT to_jsonb('sub ' || m || ' ' || md5('sub ' || i || '/' || m))
$$;
CREATE FUNCTION x_val(i int, m int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN m % 8 = 3
	THEN (SELECT jsonb_agg(md5(i || 'x' || m || '/' || j) ORDER BY j) FROM generate_series(1, 130) j)
	ELSE jsonb_build_object('cat', m, 'note', 'key x' || m % 4 || ' of ' || i) END
$$;
CREATE FUNCTION d_val(i int, j int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT to_jsonb(repeat(chr(97 + (i + j) % 26), 8) || j)
$$;
CREATE FUNCTION log_entry(i int, v int, k int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_array(k, md5('log ' || i || '/' || v || '/' || k))
$$;
CREATE FUNCTION words(i int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_agg(md5('word ' || i || '/' || j) || repeat('.', j % 7) ORDER BY j) FROM generate_series(1, 150) j
$$;
CREATE FUNCTION gen_doc(i int, v int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object(
	'id', i, 'ver', v, 'name', 'document ' || i || ' version ' || v,
	'items', (SELECT jsonb_agg(item(i, v, j) ORDER BY j) FROM generate_series(0, n_items(i) - 1) j),
	'map', (SELECT jsonb_object_agg('k' || j, md5('map ' || i || '/' || j)) FROM generate_series(0, n_keys(i) - 1) j),
	'words', words(i),
	'log', (SELECT jsonb_agg(log_entry(i, v, k) ORDER BY k) FROM generate_series(1, 100) k))
 || (SELECT jsonb_object_agg('d' || j, d_val(i, j)) FROM generate_series(1, 12) j)
$$;

-- what the model says one place of a document holds
CREATE FUNCTION exp_item(i int, v int, se int, j int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce((SELECT item_edit(i, max(m)) FROM generate_series(1, se) m
		WHERE se_pos(i, m) = j HAVING count(*) > 0),
	item(i, v, j))
$$;
CREATE FUNCTION exp_map(i int, sub int, j int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce((SELECT map_val(i, max(m)) FROM generate_series(1, sub) m
		WHERE map_key(i, m) = 'k' || j HAVING count(*) > 0),
	to_jsonb(md5('map ' || i || '/' || j)))
$$;
CREATE FUNCTION exp_x(i int, cat int, k int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT x_val(i, max(m)) FROM generate_series(1, cat) m WHERE m % 4 = k HAVING count(*) > 0
$$;
-- the whole document, rebuilt from the counters without replaying the edits
CREATE FUNCTION expected_doc(i int, v int, se int, sub int, cat int, del int, app int)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object(
	'id', i, 'ver', v, 'name', 'document ' || i || ' version ' || v,
	'items', (SELECT jsonb_agg(exp_item(i, v, se, j) ORDER BY j) FROM generate_series(0, n_items(i) - 1) j),
	'map', (SELECT jsonb_object_agg('k' || j, exp_map(i, sub, j)) FROM generate_series(0, n_keys(i) - 1) j),
	'words', words(i),
	'log', (SELECT jsonb_agg(log_entry(i, v, k) ORDER BY k) FROM generate_series(1, 100 + app) k))
 || (SELECT coalesce(jsonb_object_agg('d' || j, d_val(i, j)), '{}') FROM generate_series(del + 1, 12) j)
 || (SELECT coalesce(jsonb_object_agg('x' || k, exp_x(i, cat, k)), '{}') FROM generate_series(0, 3) k
		WHERE exp_x(i, cat, k) IS NOT NULL)
$$;
CREATE FUNCTION must(ok boolean, what text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION 'reader saw a wrong value: %', what;
	END IF;
	RETURN true;
END $$;

-- Rows 1 to 4 are hot, 1 to 32 are never deleted, 33 to 40 are deleted and
-- inserted again.
CREATE TABLE docs (id int PRIMARY KEY, ver int NOT NULL DEFAULT 0,
	se int NOT NULL DEFAULT 0, sub int NOT NULL DEFAULT 0, cat int NOT NULL DEFAULT 0,
	del int NOT NULL DEFAULT 0, app int NOT NULL DEFAULT 0,
	other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE docs SET (toast_tuple_target = 4000);
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 40) i;

-- TOAST rows against the live parts, each value id counted once:
-- rows|live chunks|values nobody refers to|parts whose value is missing|
-- values whose chunk count differs
CREATE FUNCTION toast_report(rel regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format($q$
WITH t AS (SELECT chunk_id, count(*) AS n FROM %s GROUP BY chunk_id),
	l AS (SELECT DISTINCT v.value_id, v.chunks FROM %s, jsonb_toaster_values(jb) v)
SELECT concat_ws('|', coalesce((SELECT sum(n) FROM t), 0), coalesce((SELECT sum(chunks) FROM l), 0),
	count(*) FILTER (WHERE l.value_id IS NULL),
	count(*) FILTER (WHERE t.chunk_id IS NULL),
	count(*) FILTER (WHERE t.n <> l.chunks))
FROM t FULL JOIN l ON t.chunk_id = l.value_id $q$,
		(SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel), rel) INTO r;
	RETURN r;
END $$;
-- parts referred to twice, by two live rows or by one, and TOAST values
-- referred to by two live rows (one row's parts share values)
CREATE FUNCTION shared_values(rel regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format($q$
SELECT coalesce(string_agg(format('%%s in rows %%s', what, ids), '; '), '') FROM (
	SELECT format('part %%s+%%s', p.value_id, p.value_offset) AS what,
		string_agg(id::text, ',' ORDER BY id) AS ids
	FROM %1$s, jsonb_toaster_parts(jb) p
	GROUP BY p.value_id, p.value_offset HAVING count(*) > 1
	UNION ALL
	SELECT format('value %%s', v.value_id), string_agg(id::text, ',' ORDER BY id)
	FROM %1$s, jsonb_toaster_values(jb) v
	GROUP BY v.value_id HAVING count(*) > 1) s $q$, rel)
	INTO r;
	RETURN r;
END $$;
});

# The parts before the load: which TOAST value each row's parts had.
$node->safe_psql('postgres', q{
CREATE TABLE before_parts AS
	SELECT id, p.path, p.range, p.value_id, p.value_offset FROM docs, jsonb_toaster_parts(jb) p;
});
is( $node->safe_psql('postgres', q{
SELECT min(n) >= 15 AND min(w) >= 2 FROM (
	SELECT id, count(*) AS n, count(*) FILTER (WHERE path = '{words}') AS w
	FROM before_parts GROUP BY id) s}),
	't', 'every document has many parts, "words" cut into several ranges');

# The load.  Scripts run with -M extended: whole documents sent by the
# client travel as parameters.  Keys: half of the updates go to rows 1-4.
my $dir = $node->basedir;
my %scripts = (
	# jsonb_set on one array element
	'set' => [ 12, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1))
	WHERE id = :id;
} ],
	# || adds a key, or replaces it
	'concat' => [ 6, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
UPDATE docs SET cat = cat + 1,
	jb = jb || jsonb_build_object('x' || (cat + 1) % 4, x_val(id, cat + 1))
	WHERE id = :id;
} ],
	# - removes a key (once they are all gone, a value equal to the old one)
	'minus' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
UPDATE docs SET del = del + 1, jb = jb - ('d' || del + 1) WHERE id = :id;
} ],
	# several keys at once: removed (jsonb - text[]; when none is left,
	# the stored value comes back), or set to what they hold (||)
	'multi' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
\set how random(0, 1)
\if :how = 0
UPDATE docs SET del = del + 2, jb = jb - ARRAY['d' || del + 1, 'd' || del + 2, 'none']
	WHERE id = :id;
\else
UPDATE docs SET other = other + 1,
	jb = jb || jsonb_build_object('name', 'document ' || id || ' version ' || ver, 'id', id, 'ver', ver)
	WHERE id = :id;
\endif
} ],
	# subscripting assignment
	'subscript' => [ 8, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
UPDATE docs SET sub = sub + 1, jb['map'][map_key(id, sub + 1)] = map_val(id, sub + 1)
	WHERE id = :id;
} ],
	# appends at the end of an array, two ways
	'append' => [ 6, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
\set how random(0, 1)
\if :how = 0
UPDATE docs SET app = app + 1, jb = jsonb_insert(jb, '{log,-1}', log_entry(id, ver, 101 + app), true)
	WHERE id = :id;
\else
UPDATE docs SET app = app + 1, jb['log'] = jb['log'] || jsonb_build_array(log_entry(id, ver, 101 + app))
	WHERE id = :id;
\endif
} ],
	# another column only
	'other' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
UPDATE docs SET other = other + 1 WHERE id = :id;
} ],
	# the ORM pattern: read, change, send the whole document back as text
	'orm_edit' => [ 6, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 32) END
BEGIN;
SELECT se + 1 AS nse,
	jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1))::text AS doc
	FROM docs WHERE id = :id FOR UPDATE \gset
UPDATE docs SET se = :nse, jb = :doc::jsonb WHERE id = :id;
COMMIT;
} ],
	# the ORM pattern again: the document sent back unchanged with another column
	'orm_resend' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 32) END
BEGIN;
SELECT jb::text AS doc FROM docs WHERE id = :id FOR UPDATE \gset
UPDATE docs SET other = other + 1, jb = :doc::jsonb WHERE id = :id;
COMMIT;
} ],
	# a new version of the document, sent by the client; "words" and most
	# of "map" stay the same.  Rows written concurrently all end as a new
	# version with counters at 0: consistent whichever wins.
	'replace' => [ 2, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 32) END
SELECT ver + 1 AS nv, gen_doc(id, ver + 1)::text AS doc FROM docs WHERE id = :id \gset
UPDATE docs SET ver = :nv, se = 0, sub = 0, cat = 0, del = 0, app = 0, jb = :doc::jsonb
	WHERE id = :id;
} ],
	# rolled back: the old version owns every part again
	'rollback' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
BEGIN;
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1))
	WHERE id = :id;
UPDATE docs SET del = del + 1, jb = jb - ('d' || del + 1) WHERE id = :id;
UPDATE docs SET cat = cat + 1,
	jb = jb || jsonb_build_object('x' || (cat + 1) % 4, x_val(id, cat + 1))
	WHERE id = :id;
ROLLBACK;
} ],
	# savepoints: several versions of a row in one transaction, some undone
	'savepoint' => [ 4, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
BEGIN;
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1))
	WHERE id = :id;
SAVEPOINT a;
UPDATE docs SET cat = cat + 1,
	jb = jb || jsonb_build_object('x' || (cat + 1) % 4, x_val(id, cat + 1))
	WHERE id = :id;
UPDATE docs SET app = app + 1, jb = jsonb_insert(jb, '{log,-1}', log_entry(id, ver, 101 + app), true)
	WHERE id = :id;
ROLLBACK TO a;
UPDATE docs SET sub = sub + 1, jb['map'][map_key(id, sub + 1)] = map_val(id, sub + 1)
	WHERE id = :id;
SAVEPOINT b;
UPDATE docs SET del = del + 1, jb = jb - ('d' || del + 1) WHERE id = :id;
RELEASE b;
SAVEPOINT c;
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1))
	WHERE id = :id;
ROLLBACK TO c;
UPDATE docs SET app = app + 1, jb['log'] = jb['log'] || jsonb_build_array(log_entry(id, ver, 101 + app))
	WHERE id = :id;
COMMIT;
} ],
	# a row deleted after its updates and inserted again; of two clients
	# doing so at once, the second finds the row gone and the key taken
	'churn' => [ 2, q{
\set id random(33, 40)
BEGIN;
DELETE FROM docs WHERE id = :id;
INSERT INTO docs (id, jb) VALUES (:id, gen_doc(:id, 0)) ON CONFLICT (id) DO NOTHING;
COMMIT;
} ],
	# readers: values through the accessors against the model
	'read' => [ 24, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
\set p random(0, 999)
SELECT must(jb -> 'items' -> (:p::int % n_items(id)) = exp_item(id, ver, se, :p::int % n_items(id)),
		format('items %s of row %s', :p::int % n_items(id), id))
	AND must(jb ->> 'name' = 'document ' || id || ' version ' || ver, format('name of row %s', id))
	AND must(jb #> ARRAY['map', 'k' || :p::int % n_keys(id)] = exp_map(id, sub, :p::int % n_keys(id)),
		format('map key %s of row %s', :p::int % n_keys(id), id))
	AND must(jb -> 'words' ->> (:p::int % 150) = words(id) ->> (:p::int % 150),
		format('word %s of row %s', :p::int % 150, id))
	AND must(jb #> '{log,-1}' = log_entry(id, ver, 100 + app), format('last log entry of row %s', id))
	AND must(jb -> 'log' -> 3 = log_entry(id, ver, 4), format('log entry 3 of row %s', id))
	AND must((jb -> ('x' || :p::int % 4)) IS NOT DISTINCT FROM exp_x(id, cat, :p::int % 4),
		format('key x%s of row %s', :p::int % 4, id))
	AND must((jb ? ('d' || 1 + :p::int % 12)) = (1 + :p::int % 12 > del),
		format('key d%s of row %s', 1 + :p::int % 12, id))
	FROM docs WHERE id = :id;
} ],
	# readers: whole documents against the model
	'read_whole' => [ 6, q{
\set id CASE WHEN random(0, 1) = 0 THEN random(1, 4) ELSE random(1, 40) END
SELECT must(jb = e AND md5(jb::text) = md5(e::text), format('document of row %s', id))
	FROM docs, LATERAL (SELECT expected_doc(id, ver, se, sub, cat, del, app) AS e OFFSET 0) x
	WHERE id = :id;
} ],
);

my @files;
foreach my $name (sort keys %scripts)
{
	my ($weight, $text) = @{ $scripts{$name} };
	my $file = "$dir/$name.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $text);
	push @files, '-f', "$file\@$weight";
}

my $toastrel = $node->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});

my $log_offset = -s $node->logfile;
my ($out, $err) = ('', '');
my $clients = 4;
my $per_client = 1200;
my $ok = IPC::Run::run(
	[
		$node->installed_command('pgbench'), '-n', '-M', 'extended',
		'-c', $clients, '-j', '2', '-t', $per_client,
		'--random-seed', '8', @files,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>' => \$out,
	'2>' => \$err);
note "pgbench output:\n$out";
note "pgbench errors:\n$err" if $err ne '';
ok($ok, 'pgbench ran to the end');
like($out, qr/number of transactions actually processed: ${\($clients * $per_client)}\/${\($clients * $per_client)}\b/,
	'every transaction was processed');
like($out, qr/number of failed transactions: 0 /, 'no transaction failed');
unlike($err, qr/aborted|ERROR|error/, 'no client was aborted, no reader saw a wrong value');
my $load_log = slurp_file($node->logfile, $log_offset);
unlike($load_log, qr/ERROR:|WARNING:|TRAP:|PANIC:/, 'no error or warning in the server log during the load');
my $waits = () = $load_log =~ /still waiting for/g;
note "lock waits longer than 20 ms during the load: $waits";

# Every script ran, and the load changed documents.
foreach my $name (sort keys %scripts)
{
	like($out, qr/SQL script \d+: \Q$dir\/$name.sql\E\n - weight: \d+ \(targets [\d.]+% of total\)\n - [1-9]\d* transactions/,
		"script $name ran");
}

sub verify
{
	my ($round) = @_;

	# every document is the one its counters give, whole and through the
	# accessors (which read the skeleton and the parts directly)
	my $bad = $node->safe_psql('postgres', q{
SELECT string_agg(id::text, ',' ORDER BY id)
FROM docs, LATERAL (SELECT expected_doc(id, ver, se, sub, cat, del, app) AS e OFFSET 0) x
WHERE md5(jb::text) <> md5(e::text)
   OR jb <> e
   OR (jb -> 'items') <> (e -> 'items')
   OR (jb -> 'map') <> (e -> 'map')
   OR (jb -> 'words') <> (e -> 'words')
   OR (jb #> '{log}') <> (e #> '{log}')
   OR (jb #>> '{items,42}') IS DISTINCT FROM (e #>> '{items,42}')
   OR (jb -> 'map' ->> 'k7') IS DISTINCT FROM (e -> 'map' ->> 'k7')
   OR (jb ? 'x3') IS DISTINCT FROM (e ? 'x3')});
	is($bad, '', "$round: every document equals the one regenerated from its counters");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM docs'), '40', "$round: every row is there");
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM docs, jsonb_toaster_storage(jb) s WHERE s.form <> 'skeleton'}),
		'0', "$round: every document is stored as a skeleton");

	my $corrupt = $node->safe_psql('postgres', q{
SELECT string_agg(format('%s/%s/%s: %s', blkno, offnum, attnum, msg), E'\n')
FROM verify_heapam('docs', check_toast => true)});
	is($corrupt, '', "$round: verify_heapam with check_toast finds nothing");
	my $toast = $node->safe_psql('postgres',
		q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});
	$corrupt = $node->safe_psql('postgres', qq{
SELECT string_agg(msg, E'\\n') FROM verify_heapam('$toast')});
	is($corrupt, '', "$round: verify_heapam of the TOAST relation finds nothing");
	$node->safe_psql('postgres', qq{
SELECT bt_index_check('docs_pkey', true);
SELECT bt_index_check(indexrelid, true) FROM pg_index WHERE indrelid = '$toast'::regclass;
});
	pass("$round: the primary key and the TOAST index are consistent");

	# one live row owns a part; no value twice in one row either
	is($node->safe_psql('postgres', q{SELECT shared_values('docs')}), '',
		"$round: no TOAST value is referred to by two live rows, or twice by one");

	# dead versions and the parts of aborted updates go with VACUUM; what
	# stays is exactly what the live values refer to, each value once
	$node->safe_psql('postgres', 'VACUUM docs');
	my ($rows, $live, $leaked, $missing, $wrong) =
	  split /\|/, $node->safe_psql('postgres', q{SELECT toast_report('docs')});
	is($rows, $live, "$round: after VACUUM the TOAST rows are the live parts' chunks ($rows)");
	is("$leaked|$missing|$wrong", '0|0|0',
		"$round: no leaked value, no missing value, no value with the wrong chunk count");
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE (jsonb_toaster_storage(jb)).chunks <>
	(SELECT sum(chunks) FROM jsonb_toaster_values(jb))}),
		'0', "$round: storage and parts agree on the chunks of every value");
}

verify('after the load');

# The load changed documents.
my $changed = $node->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE id <= 32 AND (ver, se, sub, cat, del, app) <> (0, 0, 0, 0, 0, 0)});
cmp_ok($changed, '>=', 25, "the load changed most documents ($changed of 32)");
is($node->safe_psql('postgres', q{SELECT min(ver) > 0 FROM docs WHERE id <= 4}),
	't', 'every hot row got new versions sent by clients');

# Sharing happened.  No edit touches "words": in every row whose document
# changed, its parts must still be where they were before the load,
# through every kind of update (a new version sent by the client
# included), unless the TOAST value they lay in was given up (a row keeps
# no more dead bytes than live ones: the UPDATE that would writes the
# parts still named in the values it gives up anew, and those go).  So a row may not both name a value it named
# before the load and hold a "words" part written since.  Without sharing
# each update would have written them anew.
my $words = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE b.value_id IS NOT NULL) || '|' || count(*) FILTER (WHERE b.value_id IS NULL)
FROM docs CROSS JOIN LATERAL jsonb_toaster_parts(jb) p
	LEFT JOIN before_parts b ON b.id = docs.id AND b.value_id = p.value_id
		AND b.value_offset = p.value_offset
WHERE docs.id <= 32 AND p.path = '{words}'
	AND (ver, se, sub, cat, del, app) <> (0, 0, 0, 0, 0, 0)});
my ($words_kept, $words_new) = split /\|/, $words;
cmp_ok($words_kept, '>=', $changed, "the \"words\" parts of changed documents were shared ($words_kept kept, $words_new written again)");
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM docs
WHERE EXISTS (SELECT FROM jsonb_toaster_parts(jb) p
		WHERE p.path = '{words}' AND NOT EXISTS (SELECT FROM before_parts b
			WHERE b.id = docs.id AND b.value_id = p.value_id AND b.value_offset = p.value_offset))
	AND EXISTS (SELECT FROM jsonb_toaster_values(jb) v
		WHERE v.value_id IN (SELECT value_id FROM before_parts b WHERE b.id = docs.id))}),
	'0', 'a "words" part is written again only with the value it lay in given up');
my $too_many_dead = $node->safe_psql('postgres', q{
SELECT string_agg(format('row %s: %s bytes of values, %s named (%s)', id, size, named, vals), E'\n')
FROM (
	SELECT docs.id, sum(v.size) AS size,
		sum((SELECT sum(p.stored_size::numeric / coalesce(p.unit_parts, 1))
			 FROM jsonb_toaster_parts(docs.jb) p
			 WHERE p.value_id = v.value_id)) AS named,
		string_agg(v.value_id || ':' || v.size || '/' || v.parts, ' ') AS vals
	FROM docs, jsonb_toaster_values(jb) v GROUP BY docs.id) s
WHERE size > 2 * named});
is($too_many_dead, '', 'no row keeps more dead bytes than live ones in its TOAST values');
my $kept = $node->safe_psql('postgres', q{
SELECT round(100.0 * count(*) FILTER (WHERE b.value_id IS NOT NULL) / count(*)) || '|' || count(*)
FROM docs CROSS JOIN LATERAL jsonb_toaster_parts(jb) p
	LEFT JOIN before_parts b ON b.id = docs.id AND b.value_id = p.value_id
		AND b.value_offset = p.value_offset
WHERE docs.id <= 32});
note "parts of rows 1-32 kept from before the load: $kept (percent|parts)";

# CLUSTER and VACUUM FULL copy each row's value once: the same documents,
# then the same checks; sharing goes on after the rewrite.
sub rewrite
{
	my ($how) = @_;
	my $before = $node->safe_psql('postgres',
		q{SELECT string_agg(id || ':' || md5(jb::text), ',' ORDER BY id) FROM docs});
	$node->safe_psql('postgres', $how);
	is($node->safe_psql('postgres',
		q{SELECT string_agg(id || ':' || md5(jb::text), ',' ORDER BY id) FROM docs}),
		$before, "$how: the documents are unchanged");
	verify($how);

	# One more edit of every row keeps the parts it does not touch, unless
	# the TOAST value they lay in is given up (as during the load: a row
	# keeps no more dead bytes than live ones, and the hot rows' values
	# may be close to that).  Parts are counted as changed when their
	# content (hash) is new to the row: a part kept as a delta
	# (src/format/delta.h) may be written whole again, with the content it
	# had, when the row has no room left for its delta.
	$node->safe_psql('postgres', q{
DROP TABLE IF EXISTS rewritten_parts;
CREATE TABLE rewritten_parts AS SELECT id, p.path, p.value_id, p.value_offset, p.hash FROM docs, jsonb_toaster_parts(jb) p;
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1));
});
	my ($rows_words_kept, $max_new, $rewritten) = split /\|/, $node->safe_psql('postgres', q{
SELECT count(DISTINCT id) FILTER (WHERE NOT words_new) || '|' || max(n) || '|' ||
	count(*) FILTER (WHERE new AND NOT changed) FROM (
	SELECT docs.id, r.value_id IS NULL AS new,
		p.hash NOT IN (SELECT hash FROM rewritten_parts o WHERE o.id = docs.id) AS changed,
		count(*) FILTER (WHERE r.value_id IS NULL AND
			p.hash NOT IN (SELECT hash FROM rewritten_parts o WHERE o.id = docs.id))
			OVER (PARTITION BY docs.id) AS n,
		bool_or(p.path = '{words}' AND r.value_id IS NULL) OVER (PARTITION BY docs.id) AS words_new
	FROM docs CROSS JOIN LATERAL jsonb_toaster_parts(jb) p
		LEFT JOIN rewritten_parts r ON r.id = docs.id AND r.value_id = p.value_id
			AND r.value_offset = p.value_offset) s});
	my $words_moved = $node->safe_psql('postgres', q{
SELECT coalesce(string_agg(format('row %s: part %s+%s', o.id, o.value_id, o.value_offset), ', '), '')
FROM rewritten_parts o JOIN docs d ON d.id = o.id
WHERE o.path = '{words}'
	AND NOT EXISTS (SELECT FROM jsonb_toaster_parts(d.jb) p
		WHERE p.value_id = o.value_id AND p.value_offset = o.value_offset)
	AND EXISTS (SELECT FROM jsonb_toaster_parts(d.jb) p WHERE p.value_id = o.value_id)});
	is($words_moved, '',
		"$how: an edit after the rewrite writes a \"words\" part again only with the value it lay in given up");
	cmp_ok($rows_words_kept, '>=', 36,
		"$how: and most rows share all their \"words\" parts ($rows_words_kept of 40)");
	cmp_ok($max_new, '<=', 3,
		"$how: and changes at most 3 parts a row (most: $max_new)");
	note "$how: parts written again with the same content: $rewritten";
	verify("$how, then an edit of every row");
}

rewrite('CLUSTER docs USING docs_pkey');
rewrite('VACUUM FULL docs');

# Everything deleted: nothing stays in the TOAST relation.
$node->safe_psql('postgres', 'DELETE FROM docs; VACUUM docs');
is($node->safe_psql('postgres', "SELECT count(*) FROM $toastrel"),
	'0', 'after DELETE and VACUUM the TOAST relation is empty');

# With wal_level = logical, a logically logged table shares parts as an
# unlogged one (not logically logged) does: the toaster logs the chunks of
# the values it shares for logical decoding, which rebuilds a value from
# the chunks its change wrote.
$node->append_conf('postgresql.conf', "wal_level = logical\n");
$node->restart;
$node->safe_psql('postgres', q{
CREATE UNLOGGED TABLE udocs (LIKE docs INCLUDING ALL);
ALTER TABLE udocs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 4) i;
INSERT INTO udocs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 4) i;
CREATE TABLE logical_parts AS
	SELECT 'docs' AS t, id, p.value_id, p.value_offset FROM docs, jsonb_toaster_parts(jb) p
	UNION ALL SELECT 'udocs', id, p.value_id, p.value_offset FROM udocs, jsonb_toaster_parts(jb) p;
UPDATE docs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1));
UPDATE udocs SET se = se + 1,
	jb = jsonb_set(jb, ARRAY['items', se_pos(id, se + 1)::text], item_edit(id, se + 1));
});
cmp_ok( $node->safe_psql('postgres', q{
SELECT count(*) FROM docs CROSS JOIN LATERAL jsonb_toaster_parts(jb) p
	JOIN logical_parts l ON l.t = 'docs' AND l.id = docs.id AND l.value_id = p.value_id
	AND l.value_offset = p.value_offset}),
	'>=', 4 * 20, 'wal_level = logical: an update of a logged table shares parts');
cmp_ok( $node->safe_psql('postgres', q{
SELECT count(*) FROM udocs CROSS JOIN LATERAL jsonb_toaster_parts(jb) p
	JOIN logical_parts l ON l.t = 'udocs' AND l.id = udocs.id AND l.value_id = p.value_id
	AND l.value_offset = p.value_offset}),
	'>=', 4 * 20, 'wal_level = logical: an update of an unlogged table shares parts');
$node->safe_psql('postgres', 'VACUUM docs; VACUUM udocs');
foreach my $t ('docs', 'udocs')
{
	my ($rows, $live, $leaked, $missing, $wrong) =
	  split /\|/, $node->safe_psql('postgres', qq{SELECT toast_report('$t')});
	is("$rows|$leaked|$missing|$wrong", "$live|0|0|0",
		"wal_level = logical: the TOAST rows of $t are its live parts' chunks");
	is( $node->safe_psql('postgres', qq{
SELECT count(*) FROM $t WHERE jb <> expected_doc(id, ver, se, sub, cat, del, app)}),
		'0', "wal_level = logical: the documents of $t are right");
}

ok(!$node->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
	'no assertion failure, PANIC or corruption in the server log');

$node->stop;
done_testing();
