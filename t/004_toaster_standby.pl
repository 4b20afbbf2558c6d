# Copyright (c) 2026, jsonb_toaster developers
#
# A streaming standby replays skeletons and their parts: after inserts,
# updates of the column and of another column, edits through jsonb_set,
# deletes, VACUUM and VACUUM FULL on the primary, the standby returns the
# same documents, the same accessor results and the same part lists (same
# TOAST value ids) as the primary, amcheck finds nothing wrong there, and
# once promoted it writes and reads skeletons of its own.  The primary runs
# with wal_level = logical, so that the standby replays the toaster's own
# WAL records too (the chunks of shared parts it logs for logical
# decoding); t/010 has a standby of a wal_level = replica primary.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use Test::More;

# the test document of a key and version, shared with other TAP tests
my $gen_doc = slurp_file(dirname(__FILE__) . '/gen_doc.sql');

my $primary = PostgreSQL::Test::Cluster->new('primary');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $primary->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $primary->config_data('--sharedir') . '/extension/amcheck.control';
$primary->init(allows_streaming => 'logical');
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
jsonb_toaster.range_size = 1024
jsonb_toaster.unit_size = 2048
});
$primary->start;

# gen_doc(id, ver): 8 to 13 kB of text, stored as a skeleton with short
# fields inline and "items", "map" and "text" in parts, the containers cut
# into 1 kB ranges.
$primary->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE EXTENSION amcheck;
} . $gen_doc . q{-- documents up to 200 with a key divisible by 7 are renamed after the backup
CREATE FUNCTION expected_doc(i int, v int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN i % 7 = 0 AND i <= 200
	THEN jsonb_set(gen_doc(i, v), '{name}', to_jsonb('renamed ' || i))
	ELSE gen_doc(i, v) END
$$;
CREATE TABLE docs (id int PRIMARY KEY, ver int NOT NULL DEFAULT 0,
	other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 100) i;
});

# The standby starts from a base backup that already holds skeletons.
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# Changes streamed after the backup: new documents, rewrites, edits of one
# field, updates of another column (the pointer kept as it is), deletes,
# an aborted transaction and a rolled back savepoint.
my $lsn_before = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
$primary->safe_psql('postgres', q{
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(101, 200) i;
UPDATE docs SET ver = ver + 1, jb = gen_doc(id, ver + 1) WHERE id % 5 = 0;
UPDATE docs SET jb = jsonb_set(jb, '{name}', to_jsonb('renamed ' || id)) WHERE id % 7 = 0 AND id <= 200;
UPDATE docs SET other = other + 1 WHERE id % 3 = 0;
DELETE FROM docs WHERE id % 11 = 0;
BEGIN;
UPDATE docs SET ver = ver + 1, jb = gen_doc(id, ver + 1) WHERE id % 2 = 1;
DELETE FROM docs WHERE id % 13 = 0;
ROLLBACK;
BEGIN;
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(201, 210) i;
SAVEPOINT s;
UPDATE docs SET ver = ver + 1, jb = gen_doc(id, ver + 1) WHERE id > 150;
ROLLBACK TO s;
COMMIT;
-- documents that compress well, of parts stored one by one (ids 1 to 3:
-- an edit logs the parts it shares as a stream) or compressed together in
-- units (4 to 6: as the units' chunks)
CREATE TABLE listed (id int PRIMARY KEY, jb jsonb);
ALTER TABLE listed ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE FUNCTION listed_doc(i int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg('k' || j,
		(SELECT jsonb_agg(jsonb_build_object('n', k, 'tag', 'item ' || (k % 7) || ' of ' || i))
		 FROM generate_series(1, 60) k))
	FROM generate_series(1, 20) j
$$;
SET jsonb_toaster.unit_size = 0;
INSERT INTO listed SELECT i, listed_doc(i) FROM generate_series(1, 3) i;
SET jsonb_toaster.unit_size = 16384;
INSERT INTO listed SELECT i, listed_doc(i) FROM generate_series(4, 6) i;
UPDATE listed SET jb = jsonb_set(jb, '{k3,5,n}', to_jsonb(-id));
});

my $toastrel = $primary->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});

# the edits logged the parts they share for logical decoding, as chunks
# and as streams: the standby replays those records as well
SKIP:
{
	skip 'contrib module pg_walinspect is not installed', 1
	  unless -f $primary->config_data('--sharedir') . '/extension/pg_walinspect.control';
	$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
	is( $primary->safe_psql('postgres', qq{
SELECT string_agg(DISTINCT record_type, ' ' ORDER BY record_type)
FROM pg_get_wal_records_info('$lsn_before', pg_current_wal_insert_lsn())
WHERE resource_manager = 'jsonb_toaster'}),
		'SHARED_STREAM VALUE_CHUNKS',
		'the primary wrote jsonb_toaster WAL records of both kinds');
}

# What is compared: one line per document with its text, accessor results
# and storage, then every part with its TOAST value id.
my $docs_query = q{
SELECT id, ver, other, md5(jb::text), octet_length(jb::text),
	jb -> 'id', jb ->> 'name', jb -> 'flag', md5((jb -> 'map')::text),
	jb -> 'map' ->> 'k17', jb -> 'items' -> 21, jb #> '{items,37,h}',
	jb #>> '{nested,a,b}' = repeat('x' || id, 150 + ver % 50), md5(jb ->> 'text'),
	jb ? 'map', jb ? 'k17', jb ?| '{nope,tags}', jb ?& '{id,nope}',
	(jb -> 'tags') @> '"tag9"', s.form, s.raw_size, s.inline_size, s.parts, s.chunks
FROM docs, jsonb_toaster_storage(jb) s ORDER BY id};
my $parts_query = q{
SELECT id, p.* FROM docs, jsonb_toaster_parts(jb) p ORDER BY id, path, range};

sub check_documents
{
	my ($node, $what) = @_;
	is( $node->safe_psql('postgres', q{
SELECT count(*) FROM docs
WHERE md5(jb::text) <> md5(expected_doc(id, ver)::text)}),
		'0', "$what: every document is the generated one");
	is( $node->safe_psql('postgres', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton')
FROM docs}),
		'192 192', "$what: the expected documents, all stored as skeletons");
}

sub compare
{
	my ($what) = @_;
	$primary->wait_for_replay_catchup($standby);
	my $docs = $primary->safe_psql('postgres', $docs_query);
	is($standby->safe_psql('postgres', $docs_query),
		$docs, "$what: the standby returns the primary's documents and accessor results");
	my $parts = $primary->safe_psql('postgres', $parts_query);
	is($standby->safe_psql('postgres', $parts_query),
		$parts, "$what: the standby has the primary's parts");
	check_documents($standby, "$what, standby");
}

check_documents($primary, 'primary');
is( $primary->safe_psql('postgres', q{
SELECT count(*) > count(DISTINCT id) * 4 FROM docs, jsonb_toaster_parts(jb) p}),
	't', 'the documents have several parts each');
compare('after the changes');
my $listed_query = q{SELECT string_agg(md5(jb::text), ' ' ORDER BY id) FROM listed};
is($standby->safe_psql('postgres', $listed_query),
	$primary->safe_psql('postgres', $listed_query),
	'the standby returns the primary\'s documents whose shared parts were logged either way');

# The standby has only replayed WAL: its TOAST relation holds exactly the
# live parts once the primary has vacuumed.
$primary->safe_psql('postgres', 'VACUUM docs');
compare('after VACUUM');
is( $standby->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) = (SELECT sum(v.chunks) FROM docs, jsonb_toaster_values(jb) v)}),
	't', 'the standby\'s TOAST relation holds exactly the live parts');
is( $standby->safe_psql('postgres', q{
SELECT count(*) FROM verify_heapam('docs', check_toast => true)}),
	'0', 'verify_heapam with check_toast finds nothing on the standby');

# VACUUM FULL keeps the parts' value ids; the standby follows.
$primary->safe_psql('postgres', 'VACUUM FULL docs');
$toastrel = $primary->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});
compare('after VACUUM FULL');
is( $standby->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) = (SELECT sum(v.chunks) FROM docs, jsonb_toaster_values(jb) v)}),
	't', 'after VACUUM FULL the standby\'s TOAST relation holds exactly the live parts');

# Promoted, the standby writes skeletons of its own.
$standby->promote;
$standby->safe_psql('postgres', q{
UPDATE docs SET ver = ver + 1, jb = expected_doc(id, ver + 1) WHERE id % 4 = 0;
DELETE FROM docs WHERE id IN (1, 2);
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 2) i;
VACUUM docs;
});
check_documents($standby, 'promoted standby');
is( $standby->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) = (SELECT sum(v.chunks) FROM docs, jsonb_toaster_values(jb) v)}),
	't', 'the promoted standby\'s TOAST relation holds exactly the live parts');
is( $standby->safe_psql('postgres', q{
SELECT count(*) FROM verify_heapam('docs', check_toast => true)}),
	'0', 'verify_heapam with check_toast finds nothing on the promoted standby');

foreach my $node ($primary, $standby)
{
	ok(!$node->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
		$node->name . ': no assertion failure, PANIC or corruption in the log');
}

$standby->stop;
$primary->stop;
done_testing();
