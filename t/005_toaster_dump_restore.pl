# Copyright (c) 2026, jsonb_toaster developers
#
# pg_dump and restore of toaster columns.  The dump carries the column
# option and the documents' text; restored (pg_restore from the custom
# format, psql from the plain format), the column is opted in again, the
# documents are equal to the originals, the large ones are skeletons again
# with the same layout of parts, and the TOAST relation holds exactly their
# parts.  Values of other forms (small, NULL, raw scalars, a column not
# opted in) keep their forms.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
jsonb_toaster.range_size = 1024
});
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION jsonb_toaster;
CREATE TABLE docs (id int PRIMARY KEY, jb jsonb, std jsonb)
	WITH (toast_tuple_target = 256);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
-- large documents: short fields inline, containers cut into ranges
INSERT INTO docs (id, jb, std)
SELECT i, d, CASE WHEN i % 10 = 0 THEN d END
FROM generate_series(1, 60) i, LATERAL (SELECT jsonb_build_object(
	'id', i, 'name', 'document ' || i, 'flag', i % 2 = 0, 'ünï', 'cødé ' || i,
	'items', (SELECT jsonb_agg(jsonb_build_object('n', j, 'h', md5((i * 1000 + j)::text),
			'v', ((i * j) % 1000) / 7.0)) FROM generate_series(1, 40 + i % 30) j),
	'text', (SELECT string_agg(md5((i * 100 + j)::text), '') FROM generate_series(1, 70 + i % 40) j),
	'map', (SELECT jsonb_object_agg('k' || j, md5((i + j)::text)) FROM generate_series(1, 50 + i % 40) j),
	'empty', '{}'::jsonb, 'none', '[]'::jsonb, 'null', NULL::jsonb) AS d) g;
-- edited and rewritten documents
UPDATE docs SET jb = jsonb_set(jb, '{name}', '"edited"') WHERE id % 7 = 0;
UPDATE docs SET jb = jb || '{"more": [1, 2, 3]}' WHERE id % 9 = 0;
-- other forms: small, NULL, a long raw scalar
INSERT INTO docs VALUES (1001, '{"small": true}', NULL), (1002, NULL, NULL),
	(1003, (SELECT to_jsonb(string_agg(md5(j::text), '')) FROM generate_series(1, 300) j), NULL);-- a column with an inline budget of its own (toaster_options)
CREATE TABLE budgeted (id int, jb jsonb);
ALTER TABLE budgeted ALTER COLUMN jb
	SET (toaster = 'jsonb_toaster', toaster_options = 'inline_budget=150');
INSERT INTO budgeted SELECT id, jb FROM docs WHERE id <= 20;
});

# forms of the source, and a description of every document and its parts
my $forms_query = q{
SELECT id, (jsonb_toaster_storage(jb)).form, (jsonb_toaster_storage(std)).form
FROM docs ORDER BY id};
my $budgeted_query = q{
SELECT id, md5(jb::text), (jsonb_toaster_storage(jb)).form,
	(jsonb_toaster_storage(jb)).inline_size <= 150 + 64
FROM budgeted ORDER BY id};
my $docs_query = q{
SELECT id, md5(jb::text), md5(std::text), jb ->> 'name', jb #> '{items,3}'
FROM docs ORDER BY id};
my $layout_query = q{
SELECT id, p.path, p.range, p.kind, p.count, p.raw_size
FROM docs, jsonb_toaster_parts(jb) p ORDER BY id, path, range};

my $forms = $node->safe_psql('src', $forms_query);
like($forms, qr/^1\|skeleton\|$/m, 'a large document is a skeleton in the source');
like($forms, qr/^10\|skeleton\|external$/m, 'the column not opted in holds standard TOAST');
like($forms, qr/^1001\|plain\|$/m, 'a small document stays plain');
like($forms, qr/^1003\|external\|$/m, 'a raw scalar is left to standard TOAST');
my $docs = $node->safe_psql('src', $docs_query);
my $layout = $node->safe_psql('src', $layout_query);
my $budgeted = $node->safe_psql('src', $budgeted_query);
unlike($budgeted, qr/\|f$/m, 'the budgeted column keeps every row within its budget');
like($budgeted, qr/\|skeleton\|t$/m, 'the budgeted column holds skeletons');
is( $node->safe_psql('src', q{
SELECT count(DISTINCT id) = 60 AND count(*) > count(DISTINCT (id, path))
FROM docs, jsonb_toaster_parts(jb)}),
	't', 'the source documents have parts cut into ranges');

sub check_restored
{
	my ($db, $how) = @_;
	is( $node->safe_psql($db, q{
SELECT attoptions FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attname = 'jb'}),
		'{toaster=jsonb_toaster}', "$how: the column option is restored");
	is( $node->safe_psql($db, q{
SELECT attoptions FROM pg_attribute WHERE attrelid = 'budgeted'::regclass AND attname = 'jb'}),
		'{toaster=jsonb_toaster,toaster_options=inline_budget=150}',
		"$how: the column's toaster options are restored");
	is($node->safe_psql($db, $budgeted_query), $budgeted,
		"$how: the documents of the budgeted column are equal, within its budget");
	is( $node->safe_psql($db, q{
SELECT attoptions IS NULL FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attname = 'std'}),
		't', "$how: the other column is not opted in");
	is( $node->safe_psql($db, q{SELECT reloptions FROM pg_class WHERE oid = 'docs'::regclass}),
		'{toast_tuple_target=256}', "$how: the table's TOAST target is restored");
	is($node->safe_psql($db, $docs_query), $docs, "$how: the documents are equal");
	is($node->safe_psql($db, $forms_query), $forms,
		"$how: every value has its form again, large documents skeletons");
	is($node->safe_psql($db, $layout_query), $layout,
		"$how: the skeletons have the same parts");
	my $toastrel = $node->safe_psql($db,
		q{SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'docs'::regclass});
	is( $node->safe_psql($db, qq{
SELECT (SELECT count(*) FROM $toastrel) =
	(SELECT coalesce(sum((jsonb_toaster_storage(jb)).chunks), 0) +
		coalesce(sum((jsonb_toaster_storage(std)).chunks), 0) FROM docs)}),
		't', "$how: the TOAST relation holds exactly the values' chunks");
	# the restored database takes new documents the same way
	$node->safe_psql($db, q{
UPDATE docs SET jb = jb || '{"after": "restore"}' WHERE id <= 5;
INSERT INTO docs SELECT 2000, jb, NULL FROM docs WHERE id = 6;
});
	is( $node->safe_psql($db, q{
SELECT count(*) FROM docs, jsonb_toaster_storage(jb) s
WHERE (id <= 5 OR id = 2000) AND s.form = 'skeleton' AND jb ? 'id'}),
		'6', "$how: the restored column stores new skeletons");
}

my $dumpdir = $node->basedir;

# custom format, pg_restore into a new database
$node->command_ok(
	[ 'pg_dump', '-Fc', '-f', "$dumpdir/src.dump", '-d', $node->connstr('src') ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE restored_c');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored_c'), "$dumpdir/src.dump" ],
	'pg_restore');
check_restored('restored_c', 'pg_restore');

# plain format, replayed with psql
$node->command_ok(
	[ 'pg_dump', '-Fp', '-f', "$dumpdir/src.sql", '-d', $node->connstr('src') ],
	'pg_dump -Fp');
my $sql = slurp_file("$dumpdir/src.sql");
like($sql, qr/ALTER TABLE ONLY public\.docs ALTER COLUMN jb SET \(toaster='?jsonb_toaster'?\);/,
	'the plain dump sets the column option');
ok(index($sql, '"name": "document 17"') > 0, 'the plain dump holds the documents as text');
# the option comes before the data, so that the data is stored by the toaster
ok(index($sql, "SET (toaster") < index($sql, 'COPY public.docs'),
	'the column option precedes the data');
$node->safe_psql('postgres', 'CREATE DATABASE restored_p');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dumpdir/src.sql",
	  '-d', $node->connstr('restored_p') ],
	'psql restores the plain dump');
check_restored('restored_p', 'psql');

ok(!$node->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
	'no assertion failure, PANIC or corruption in the server log');

$node->stop;
done_testing();
