# Copyright (c) 2026, jsonb_toaster developers
#
# Skeletons on a server that runs without the library preloaded.  Core
# registers custom toasters only from shared_preload_libraries, so reading a
# skeleton must give a clear ERROR whose hint says to preload the library,
# never a crash or a wrong value; so must every change that would have to
# delete a skeleton's parts (they would leak otherwise).  Everything else
# keeps working: other columns, rows whose documents are not skeletons, the
# sizes core reads from the pointer's header, new documents (stored by
# standard TOAST), and amcheck reports the skeletons as unreadable.  With
# the library preloaded again every document reads back as it was, and no
# TOAST row was lost or leaked.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('node');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init;
$node->append_conf('postgresql.conf', q{
autovacuum = off
jsonb_toaster.range_size = 1024
});
$node->append_conf('preload.conf', "shared_preload_libraries = 'jsonb_toaster'\n");
$node->append_conf('postgresql.conf', "include_if_exists = 'preload.conf'\n");
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE EXTENSION amcheck;
CREATE TABLE docs (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO docs (id, jb)
SELECT i, jsonb_build_object('id', i, 'name', 'document ' || i,
	'items', (SELECT jsonb_agg(jsonb_build_object('n', j, 'h', md5((i * 1000 + j)::text)))
		FROM generate_series(1, 100) j),
	'text', (SELECT string_agg(md5((i * 100 + j)::text), '') FROM generate_series(1, 100) j))
FROM generate_series(1, 5) i;
INSERT INTO docs (id, jb) VALUES (100, '{"small": "document"}'), (101, NULL);
CREATE VIEW doc_ids AS SELECT id, jb -> 'id' AS doc_id FROM docs;
});
is( $node->safe_psql('postgres', q{
SELECT string_agg((jsonb_toaster_storage(jb)).form, ',' ORDER BY id) FROM docs WHERE id < 100}),
	'skeleton,skeleton,skeleton,skeleton,skeleton',
	'the large documents are skeletons');
my $toastrel = $node->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});
my $docs_query = q{SELECT id, other, md5(jb::text), jb ->> 'name' FROM docs ORDER BY id};
my $docs = $node->safe_psql('postgres', $docs_query);
my $sizes_query = q{SELECT id, pg_column_size(jb) FROM docs ORDER BY id};
my $sizes = $node->safe_psql('postgres', $sizes_query);
my $toast_rows = $node->safe_psql('postgres', "SELECT count(*) FROM $toastrel");
cmp_ok($toast_rows, '>', 0, 'the skeletons have parts in the TOAST relation');

# Restart without the library.
unlink($node->data_dir . '/preload.conf') or die "cannot remove preload.conf: $!";
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'the library is not preloaded');

# the error core raises for a pointer whose toaster is not registered
my $not_loaded = qr/ERROR:  custom toaster with ID \d+ is not loaded
DETAIL:  Values stored by a custom toaster can be read only with that toaster loaded\.
HINT:  Include the extension module that implements this custom toaster in "shared_preload_libraries"\./;

sub fails_with_hint
{
	my ($sql, $what) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$what: fails");
	like($stderr, $not_loaded, "$what: the error says to preload the library");
}

fails_with_hint('SELECT jb FROM docs WHERE id = 1', 'reading a skeleton');
fails_with_hint(q{SELECT jb ->> 'name' FROM docs WHERE id = 2}, 'an accessor on a skeleton');
fails_with_hint(q{SELECT doc_id FROM doc_ids WHERE id = 3}, 'a view over a skeleton');
fails_with_hint('SELECT md5(jb::text) FROM docs', 'a scan over the skeletons');
fails_with_hint('COPY docs TO STDOUT', 'COPY TO');
# Loading the library on demand does not register the toaster: only
# shared_preload_libraries does.
fails_with_hint(q{LOAD 'jsonb_toaster'; SELECT jb FROM docs WHERE id = 1},
	'reading a skeleton after LOAD');
# deleting a skeleton needs its toaster, or its parts would leak
fails_with_hint('DELETE FROM docs WHERE id = 4', 'DELETE of a skeleton');
fails_with_hint(q{UPDATE docs SET jb = '{}' WHERE id = 5}, 'UPDATE of a skeleton');

# An UPDATE of another column keeps the pointer as it is, if core lets it
# run at all.
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'UPDATE docs SET other = 1 WHERE id = 3');
my $other3 = 0;
if ($ret != 0)
{
	like($stderr, $not_loaded, 'UPDATE of another column: refused with the hint');
}
else
{
	pass('UPDATE of another column: done, the pointer kept');
	$other3 = 1;
	$docs =~ s/^3\|0\|/3|1|/m;
}

# Opting a column in names a toaster that must be loaded.
($ret, $stdout, $stderr) = $node->psql('postgres', q{
CREATE TABLE more (jb jsonb);
ALTER TABLE more ALTER COLUMN jb SET (toaster = 'jsonb_toaster')});
like($stderr, qr/ERROR:  custom toaster "jsonb_toaster" is not loaded
HINT:  Include the extension module that implements this custom toaster in "shared_preload_libraries"\./,
	'opting a column in needs the toaster loaded');

# What does not need the toaster keeps working.
ok($node->safe_psql('postgres', 'SELECT 1') eq '1', 'the server is up: no crash');
is( $node->safe_psql('postgres', q{SELECT string_agg(id || ':' || other, ',' ORDER BY id) FROM docs}),
	"1:0,2:0,3:$other3,4:0,5:0,100:0,101:0",
	'other columns of every row can be read');
is( $node->safe_psql('postgres', q{SELECT jb ->> 'small', jb IS NULL FROM docs WHERE id IN (100, 101) ORDER BY id}),
	"document|f\n|t", 'documents that are not skeletons can be read');
is( $node->safe_psql('postgres', q{SELECT count(*) FROM docs WHERE jb IS NOT NULL}),
	'6', 'IS NULL tests do not read the skeletons');
is($node->safe_psql('postgres', $sizes_query), $sizes,
	'pg_column_size reads the sizes from the pointers');
# new documents go to standard TOAST while the toaster is away
$node->safe_psql('postgres', q{
INSERT INTO docs (id, jb)
SELECT 200, jsonb_build_object('id', 200, 'text',
	(SELECT string_agg(md5(j::text), '') FROM generate_series(1, 300) j))});
is( $node->safe_psql('postgres', q{
SELECT pg_column_toast_chunk_id(jb) IS NOT NULL, jb ->> 'id' FROM docs WHERE id = 200}),
	't|200', 'a new large document is stored by standard TOAST, and can be read');
# amcheck says which values cannot be read
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM verify_heapam('docs', check_toast => true)
WHERE msg ~ '^custom TOAST pointer has toaster ID \d+, which is not loaded$'}),
	5 + $other3, 'verify_heapam reports each skeleton (and row version) as needing its toaster');
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM verify_heapam('docs', check_toast => true)
WHERE msg !~ '^custom TOAST pointer has toaster ID \d+, which is not loaded$'}),
	'0', 'and nothing else');
ok(!$node->log_contains(qr/TRAP:|PANIC:|terminated by signal/),
	'no assertion failure, PANIC or crash in the server log');

# Preloaded again: everything reads back as it was.
$node->append_conf('preload.conf', "shared_preload_libraries = 'jsonb_toaster'\n");
$node->restart;
is($node->safe_psql('postgres', $docs_query =~ s/ORDER BY/WHERE id < 200 ORDER BY/r), $docs,
	'with the library preloaded again, every document reads back');
is( $node->safe_psql('postgres', q{
SELECT (jsonb_toaster_storage(jb)).form, jb ->> 'id' FROM docs WHERE id = 200}),
	'external|200', 'the document stored meanwhile stays under standard TOAST');
is( $node->safe_psql('postgres', q{SELECT count(*) FROM verify_heapam('docs', check_toast => true)}),
	'0', 'verify_heapam finds nothing');
$node->safe_psql('postgres', 'VACUUM docs');
is( $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) =
	(SELECT sum((jsonb_toaster_storage(jb)).chunks) FROM docs)}),
	't', 'the TOAST relation holds exactly the chunks of the values');
# and the refused changes can be made now
$node->safe_psql('postgres', q{
DELETE FROM docs WHERE id = 4;
UPDATE docs SET jb = '{}' WHERE id = 5;
VACUUM docs;
});
is( $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) =
	(SELECT sum((jsonb_toaster_storage(jb)).chunks) FROM docs)}),
	't', 'the refused changes succeed with the toaster, leaving no chunk behind');

$node->stop;
done_testing();
