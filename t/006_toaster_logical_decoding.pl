# Copyright (c) 2026, jsonb_toaster developers
#
# Logical decoding of toaster columns.  Decoding cannot read TOAST
# relations: core rebuilds each part of a skeleton from the chunks the
# decoded transaction wrote, or the toaster logged with it (the parts it
# shares with the old version), and the toaster's reassemble callback makes
# the document out of them.  Decoded with test_decoding, every change must
# carry the whole document -- inserts in single- and multi-row
# transactions, an UPDATE of the column (by the general path, and adopted
# pointers of jsonb_set sharing every part), old tuples of a REPLICA
# IDENTITY FULL table, savepoints rolled back, aborted transactions, a
# transaction large enough to be spilled to disk -- except that an UPDATE
# of another column keeps the pointer, shown unchanged as standard TOAST
# shows an unchanged value (patch 0013); and the TOAST relation still holds
# exactly the live parts.  The decoding runs after the table has been truncated, so
# nothing can be read back from the table: the values come from the WAL or
# not at all.  Then logical replication (pgoutput, streaming of large
# transactions) must give a subscriber the publisher's documents.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use Test::More;
use Digest::MD5 qw(md5_hex);

# the test document of a key and version, shared with other TAP tests
my $gen_doc = slurp_file(dirname(__FILE__) . '/gen_doc.sql');

my $node = PostgreSQL::Test::Cluster->new('publisher');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module test_decoding is not installed'
  unless grep { -f } glob($node->config_data('--pkglibdir') . '/test_decoding.*');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
jsonb_toaster.range_size = 1024
logical_decoding_work_mem = 64kB
});
$node->start;

# gen_doc(id, ver): 8 to 13 kB of text, a skeleton with parts cut into ranges
my $setup = q{
CREATE EXTENSION jsonb_toaster;
} . $gen_doc . q{CREATE TABLE docs (id int PRIMARY KEY, ver int NOT NULL DEFAULT 0,
	other int NOT NULL DEFAULT 0, std jsonb, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE docs_full (id int PRIMARY KEY, ver int NOT NULL DEFAULT 0,
	other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE docs_full ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE docs_full REPLICA IDENTITY FULL;
};
$node->safe_psql('postgres', $setup);
$node->safe_psql('postgres',
	q{SELECT pg_create_logical_replication_slot('s', 'test_decoding')});

# Each transaction, and the changes test_decoding must show for it.  A
# document is shown as doc(id,ver) when it is exactly gen_doc(id, ver).
my @expected;
$node->safe_psql('postgres', q{
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 3) i;
});
push @expected, 'BEGIN',
  (map { "docs INSERT id=$_ ver=0 other=0 std=null jb=doc($_,0)" } 1 .. 3),
  'COMMIT';
$node->safe_psql('postgres', q{INSERT INTO docs (id, jb) VALUES (4, gen_doc(4, 0))});
push @expected, 'BEGIN', 'docs INSERT id=4 ver=0 other=0 std=null jb=doc(4,0)', 'COMMIT';

$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(5, 8) i;
UPDATE docs SET ver = 1, jb = gen_doc(id, 1) WHERE id = 1;
UPDATE docs SET other = 1 WHERE id = 2;
DELETE FROM docs WHERE id = 3;
UPDATE docs SET jb = jb || '{"x": 1}' WHERE id = 5;
UPDATE docs SET jb = jb - 'x' WHERE id = 5;
COMMIT;
});
push @expected, 'BEGIN',
  (map { "docs INSERT id=$_ ver=0 other=0 std=null jb=doc($_,0)" } 5 .. 8),
  'docs UPDATE id=1 ver=1 other=0 std=null jb=doc(1,1)',
  'docs UPDATE id=2 ver=0 other=1 std=null jb=unchanged',
  'docs DELETE id=3',
  'docs UPDATE id=5 ver=0 other=0 std=null jb=other',
  'docs UPDATE id=5 ver=0 other=0 std=null jb=doc(5,0)',
  'COMMIT';

# savepoints: the changes of a rolled back subtransaction are not decoded
$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO docs (id, jb) VALUES (11, gen_doc(11, 0));
SAVEPOINT a;
INSERT INTO docs (id, jb) VALUES (12, gen_doc(12, 0));
UPDATE docs SET ver = 5, jb = gen_doc(id, 5) WHERE id = 11;
ROLLBACK TO a;
SAVEPOINT b;
INSERT INTO docs (id, jb) VALUES (13, gen_doc(13, 0));
RELEASE b;
UPDATE docs SET ver = 2, jb = gen_doc(id, 2) WHERE id = 4;
COMMIT;
});
push @expected, 'BEGIN',
  'docs INSERT id=11 ver=0 other=0 std=null jb=doc(11,0)',
  'docs INSERT id=13 ver=0 other=0 std=null jb=doc(13,0)',
  'docs UPDATE id=4 ver=2 other=0 std=null jb=doc(4,2)',
  'COMMIT';

# an aborted transaction is not decoded at all
$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO docs (id, jb) VALUES (14, gen_doc(14, 0));
UPDATE docs SET ver = 9, jb = gen_doc(id, 9) WHERE id = 1;
ROLLBACK;
});

# the whole document leaves the row: the tree is a single reference
$node->safe_psql('postgres', q{
BEGIN;
SET LOCAL jsonb_toaster.inline_budget = 0;
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(15, 16) i;
COMMIT;
});
push @expected, 'BEGIN',
  (map { "docs INSERT id=$_ ver=0 other=0 std=null jb=doc($_,0)" } 15 .. 16),
  'COMMIT';

# a transaction far larger than logical_decoding_work_mem: spilled to disk
$node->safe_psql('postgres', q{
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(100, 160) i;
});
push @expected, 'BEGIN',
  (map { "docs INSERT id=$_ ver=0 other=0 std=null jb=doc($_,0)" } 100 .. 160),
  'COMMIT';

# a column under standard TOAST next to the skeleton: unchanged, neither is
# sent
$node->safe_psql('postgres', q{
UPDATE docs SET std = gen_doc(id, 0) WHERE id = 6;
UPDATE docs SET other = 2 WHERE id = 6;
});
push @expected,
  'BEGIN', 'docs UPDATE id=6 ver=0 other=0 std=doc(6,0) jb=unchanged', 'COMMIT',
  'BEGIN', 'docs UPDATE id=6 ver=0 other=2 std=unchanged jb=unchanged', 'COMMIT';

# Parts taken over from the version replaced, as under wal_level =
# replica: an UPDATE of another column keeps the pointer, jsonb_set of a
# short field writes no part (its pointer adopted) and the general path
# shares every part.  Decoding gets the chunks of the TOAST values they lie
# in from the toaster's own WAL records, logged with the new version.
sub values_of
{
	my ($id) = @_;
	return $node->safe_psql('postgres', qq{
SELECT string_agg(DISTINCT value_id::text, ',') FROM docs, jsonb_toaster_parts(jb)
WHERE id = $id});
}
my $values_before = values_of(7);
$node->safe_psql('postgres', q{
BEGIN;
UPDATE docs SET other = 3 WHERE id = 7;
UPDATE docs SET jb = jsonb_set(jb, '{name}', '"renamed"') WHERE id = 7;
UPDATE docs SET jb = jsonb_set(jb, '{name}', to_jsonb('document 7 version 0'::text))
WHERE id = 7;
UPDATE docs SET jb = (jb::text)::jsonb || '{"name": "document 7 version 0"}' WHERE id = 7;
UPDATE docs SET jb = jsonb_set(jb, '{items,2,h}', '"edited"') WHERE id = 8;
UPDATE docs SET jb = jsonb_set(jb, '{items,2,h}', to_jsonb(md5('8003'))) WHERE id = 8;
COMMIT;
});
push @expected, 'BEGIN',
  'docs UPDATE id=7 ver=0 other=3 std=null jb=unchanged',
  'docs UPDATE id=7 ver=0 other=3 std=null jb=other',
  'docs UPDATE id=7 ver=0 other=3 std=null jb=doc(7,0)',
  'docs UPDATE id=7 ver=0 other=3 std=null jb=doc(7,0)',
  'docs UPDATE id=8 ver=0 other=0 std=null jb=other',
  'docs UPDATE id=8 ver=0 other=0 std=null jb=doc(8,0)',
  'COMMIT';
is(values_of(7), $values_before,
	'the new versions took over every part of the old one');

# REPLICA IDENTITY FULL: old tuples carry the whole old document
$node->safe_psql('postgres', q{
INSERT INTO docs_full (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 3) i;
BEGIN;
UPDATE docs_full SET ver = 1, jb = gen_doc(id, 1) WHERE id = 1;
UPDATE docs_full SET other = 1 WHERE id = 2;
DELETE FROM docs_full WHERE id = 3;
COMMIT;
});
push @expected, 'BEGIN',
  (map { "docs_full INSERT id=$_ ver=0 other=0 jb=doc($_,0)" } 1 .. 3),
  'COMMIT', 'BEGIN',
  'docs_full UPDATE id=1 ver=0 other=0 jb=doc(1,0) -> id=1 ver=1 other=0 jb=doc(1,1)',
  'docs_full UPDATE id=2 ver=0 other=0 jb=doc(2,0) -> id=2 ver=0 other=1 jb=unchanged',
  'docs_full DELETE id=3 ver=0 other=0 jb=doc(3,0)',
  'COMMIT';

# Every part of the values written so far must be gone from the tables
# before decoding: first check that no part leaked, then truncate.
sub toast_exact
{
	my ($table, @cols) = @_;
	$node->safe_psql('postgres', "VACUUM $table");
	my $toastrel = $node->safe_psql('postgres',
		"SELECT reltoastrelid::regclass FROM pg_class WHERE relname = '$table'");
	my $chunks = join(' + ',
		map { "coalesce(sum((jsonb_toaster_storage($_)).chunks), 0)" } @cols);
	is( $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM $toastrel) = (SELECT $chunks FROM $table)}),
		't', "$table: the TOAST relation holds exactly the live values' chunks");
}
toast_exact('docs', 'jb', 'std');
toast_exact('docs_full', 'jb');
is( $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') FROM docs}),
	'72', 'the documents were stored as skeletons');
$node->safe_psql('postgres', 'TRUNCATE docs, docs_full');
push @expected, 'BEGIN', 'TRUNCATE', 'COMMIT';

# Decode.  Parse test_decoding's lines into columns.
sub parse_tuple
{
	my ($text) = @_;
	my @cols;
	while ($text =~ /\G\s*(\w+)\[([^\]]+)\]:('((?:[^']++|'')*)'|\S+)/gc)
	{
		my ($name, $type, $raw, $quoted) = ($1, $2, $3, $4);
		my $value =
			defined $quoted ? $quoted =~ s/''/'/gr
		  : $raw eq 'null' ? undef
		  : $raw eq 'unchanged-toast-datum' ? \'unchanged'
		  : $raw;
		push @cols, [ $name, $type, $value ];
	}
	die "cannot parse tuple: " . substr($text, pos($text) // 0, 200)
	  unless (pos($text) // 0) == length($text);
	return \@cols;
}

my $out = $node->safe_psql('postgres', q{
SELECT data FROM pg_logical_slot_get_changes('s', NULL, NULL,
	'include-xids', '0', 'skip-empty-xacts', '1')});
my (@changes, %wanted);
foreach my $line (split /\n/, $out)
{
	if ($line eq 'BEGIN' || $line eq 'COMMIT')
	{
		push @changes, $line;
	}
	elsif ($line =~ /^table [^:]+: TRUNCATE:/)
	{
		push @changes, 'TRUNCATE';
	}
	elsif ($line =~ /^table public\.(\w+): (INSERT|UPDATE|DELETE): (.*)$/s)
	{
		my ($table, $action, $rest) = ($1, $2, $3);
		my @tuples =
		  $rest =~ /^old-key:(.*?) new-tuple:(.*)$/s
		  ? (parse_tuple($1), parse_tuple($2))
		  : (parse_tuple($rest));
		push @changes, [ $table, $action, @tuples ];
		foreach my $t (@tuples)
		{
			my %c = map { $_->[0] => $_->[2] } @$t;
			$wanted{"$c{id},$c{ver}"} = 1 if defined $c{ver};
			$wanted{"$c{id},0"} = 1;
		}
	}
	else
	{
		push @changes, "unexpected line: " . substr($line, 0, 200);
	}
}

# the documents the decoded tuples should hold
my %docs;
my ($ids, $vers) = ('', '');
foreach my $k (keys %wanted)
{
	my ($i, $v) = split /,/, $k;
	$ids .= ",$i";
	$vers .= ",$v";
}
$ids =~ s/^,//;
$vers =~ s/^,//;
foreach my $row (split /\n/, $node->safe_psql('postgres', qq{
SELECT i || ',' || v || ' ' || gen_doc(i, v)::text
FROM unnest('{$ids}'::int[], '{$vers}'::int[]) AS u(i, v)}))
{
	my ($k, $doc) = split / /, $row, 2;
	$docs{$k} = $doc;
}

sub show_tuple
{
	my ($t) = @_;
	my %c = map { $_->[0] => $_->[2] } @$t;
	my @shown;
	foreach my $col (@$t)
	{
		my ($name, $type, $value) = @$col;
		my $s;
		if (!defined $value) { $s = 'null'; }
		elsif (ref $value) { $s = $$value; }
		elsif ($type eq 'jsonb')
		{
			$s = 'other';
			foreach my $v (defined $c{ver} ? ($c{ver}, 0) : (0))
			{
				if (defined $docs{"$c{id},$v"} && $value eq $docs{"$c{id},$v"})
				{
					$s = "doc($c{id},$v)";
					last;
				}
			}
		}
		else { $s = $value; }
		push @shown, "$name=$s";
	}
	return join ' ', @shown;
}

my @shown = map {
	ref $_ ? "$_->[0] $_->[1] " . join(' -> ', map { show_tuple($_) } @{$_}[ 2 .. $#$_ ])
	  : $_
} @changes;
is_deeply(\@shown, \@expected,
	'test_decoding shows every change with the whole documents');

# the large transaction was spilled to disk
cmp_ok(
	$node->safe_psql('postgres',
		q{SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = 's'}),
	'>', 0, 'the large transaction was spilled to disk');

$node->safe_psql('postgres', q{SELECT pg_drop_replication_slot('s')});

# Logical replication to a second node, which opts its column in too.
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
jsonb_toaster.range_size = 1024
});
$sub->start;
$sub->safe_psql('postgres', $setup);

# initial data, copied by the table synchronisation
$node->safe_psql('postgres', q{
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 20) i;
UPDATE docs SET std = gen_doc(id, 0) WHERE id % 5 = 0;
INSERT INTO docs_full (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 10) i;
CREATE PUBLICATION p FOR TABLE docs, docs_full;
});
my $connstr = $node->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', qq{
CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p WITH (streaming = on)});
$sub->wait_for_subscription_sync($node, 's');

# changes, one of them large enough to be streamed before it commits
$node->safe_psql('postgres', q{
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(100, 150) i;
BEGIN;
UPDATE docs SET ver = ver + 1, jb = gen_doc(id, ver + 1) WHERE id % 3 = 0;
UPDATE docs SET other = other + 1 WHERE id % 4 = 0;
DELETE FROM docs WHERE id % 7 = 0;
COMMIT;
UPDATE docs_full SET ver = ver + 1, jb = gen_doc(id, ver + 1) WHERE id % 2 = 0;
UPDATE docs_full SET other = other + 1 WHERE id % 3 = 0;
DELETE FROM docs_full WHERE id = 5;
});
$node->wait_for_catchup('s');

my $cmp = q{
SELECT id, ver, other, md5(jb::text), md5(std::text) FROM docs ORDER BY id};
my $cmp_full = q{SELECT id, ver, other, md5(jb::text) FROM docs_full ORDER BY id};
is($sub->safe_psql('postgres', $cmp), $node->safe_psql('postgres', $cmp),
	'the subscriber has the publisher\'s documents');
is($sub->safe_psql('postgres', $cmp_full), $node->safe_psql('postgres', $cmp_full),
	'the subscriber has the publisher\'s documents (REPLICA IDENTITY FULL)');
is( $sub->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE md5(jb::text) <> md5(gen_doc(id, ver)::text)}),
	'0', 'the subscriber\'s documents are the generated ones');
is( $sub->safe_psql('postgres', q{
SELECT count(*) || ' ' || count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton')
FROM docs}),
	'62 62', 'the subscriber stores them as skeletons');
cmp_ok(
	$node->safe_psql('postgres',
		q{SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = 's'}),
	'>', 0, 'a transaction was streamed');

# Documents of 3 and 5 MB (parts of 1 kB stored alone, unit_size 0) with
# one key changed: decoding gives them whole.
$node->safe_psql('postgres', q{
CREATE TABLE big (id int PRIMARY KEY, jb jsonb);
ALTER TABLE big ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SET jsonb_toaster.unit_size = 0;
INSERT INTO big SELECT n, (SELECT jsonb_object_agg('k' || i, repeat('pattern ', 125))
	FROM generate_series(1, n * 1000) i) FROM generate_series(3, 5) n WHERE n <> 4;
SELECT pg_create_logical_replication_slot('big', 'test_decoding');
UPDATE big SET jb = jsonb_set(jb, '{k7}', '"seven"');});
# The documents test_decoding shows for the UPDATEs of table (id, jb)
# that slot has not yet consumed, by id.
sub decoded_updates
{
	my ($slot, $table) = @_;
	my %docs;
	foreach my $line (split /\n/, $node->safe_psql('postgres', qq{
SELECT data FROM pg_logical_slot_get_changes('$slot', NULL, NULL, 'include-xids', '0')
WHERE data LIKE 'table public.$table: UPDATE:%'}))
	{
		$line =~ /id\[integer\]:(\d+) jb\[jsonb\]:'(.*)'$/s
		  or die "cannot parse: " . substr($line, 0, 200);
		(my $doc = $2) =~ s/''/'/g;
		$docs{$1} = $doc;
	}
	return %docs;
}
my %decoded = decoded_updates('big', 'big');
foreach my $n (3, 5)
{
	is( $node->safe_psql('postgres', qq{SELECT md5(jb::text) FROM big WHERE id = $n}),
		md5_hex($decoded{$n} // ''),
		"a document of $n MB with one key changed decoded whole");
}

# The parts an update shares are logged as one stream of their raw
# contents compressed together when that is smaller, but never more than
# 4 MB of them: beyond, as their stored chunks.  Parts of 40 kB stored
# alone, every one the same text (lz4 finds the copies within its window):
# 74 shared parts (3 MB) go as a stream, 124 (5 MB) as chunks; both decode
# whole.
SKIP:
{
	skip 'contrib module pg_walinspect is not installed', 10
	  unless -f $node->config_data('--sharedir') . '/extension/pg_walinspect.control';
	skip 'the server was built without lz4', 10
	  unless $node->safe_psql('postgres', q{
SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'}) eq 't';
	$node->safe_psql('postgres', q{
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
CREATE TABLE bigz (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
ALTER TABLE bigz ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SET jsonb_toaster.unit_size = 0;
INSERT INTO bigz SELECT n, (SELECT jsonb_object_agg('k' || i,
		(SELECT string_agg(md5(j::text), '') FROM generate_series(1, 1250) j))
	FROM generate_series(1, n * 25) i) FROM generate_series(3, 5) n WHERE n <> 4;
SELECT pg_create_logical_replication_slot('bigz', 'test_decoding');});
	my %kinds;
	foreach my $n (3, 5)
	{
		my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
		$node->safe_psql('postgres',
			qq{UPDATE bigz SET jb = jsonb_set(jb, '{k7}', '"seven"') WHERE id = $n});
		$kinds{$n} = $node->safe_psql('postgres', qq{
SELECT string_agg(DISTINCT record_type, ' ' ORDER BY record_type)
FROM pg_get_wal_records_info('$from', pg_current_wal_insert_lsn())
WHERE resource_manager = 'jsonb_toaster'});
	}
	is($kinds{3}, 'SHARED_STREAM', '3 MB of shared parts logged as one stream');
	is($kinds{5}, 'VALUE_CHUNKS', '5 MB of shared parts logged as their chunks');
	my %zdecoded = decoded_updates('bigz', 'bigz');
	foreach my $n (3, 5)
	{
		is( $node->safe_psql('postgres', qq{SELECT md5(jb::text) FROM bigz WHERE id = $n}),
			md5_hex($zdecoded{$n} // ''),
			"lz4, $n MB, its shared parts logged either way: decoded whole");
	}

	# A stream is compressed with lz4 whatever the column's method (this
	# server has lz4: bigz's column uses it), pglz's documents included.
	$node->safe_psql('postgres', q{
CREATE TABLE bigp (id int PRIMARY KEY, jb jsonb COMPRESSION pglz);
SET jsonb_toaster.unit_size = 0;
ALTER TABLE bigp ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO bigp SELECT 1, (SELECT jsonb_object_agg('k' || i,
		(SELECT jsonb_agg(jsonb_build_object('n', j, 'tag', 'item ' || (j % 7)))
		 FROM generate_series(1, 100) j))
	FROM generate_series(1, 40) i);
SELECT pg_create_logical_replication_slot('bigp', 'test_decoding');});
	my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$node->safe_psql('postgres',
		q{UPDATE bigp SET jb = jsonb_set(jb, '{k7,3,n}', '-3') WHERE id = 1});
	like(
		$node->safe_psql('postgres', qq{
SELECT string_agg(record_type || ': ' || description, E'\n')
FROM pg_get_wal_records_info('$from', pg_current_wal_insert_lsn())
WHERE resource_manager = 'jsonb_toaster'}),
		qr/^SHARED_STREAM: .*; stream of \d+ bytes, lz4$/,
		'a pglz column\'s shared parts logged as one stream compressed with lz4');
	my %pdecoded = decoded_updates('bigp', 'bigp');
	is( $node->safe_psql('postgres', q{SELECT md5(jb::text) FROM bigp WHERE id = 1}),
		md5_hex($pdecoded{1} // ''),
		'pglz, its shared parts streamed with lz4: decoded whole');

	# Parts that compressed alone to more than seven eighths of their size
	# go into the stream as stored, not decompressed to be compressed
	# again; a stream that is mostly such parts is not compressed.  Fields
	# of hex digits (hashes) in every part, or in half of them, the other
	# half compressing well; the update writes one part anew, so that the
	# parts the stream holds are fewer than the value's.
	$node->safe_psql('postgres', q{
CREATE TABLE hexy (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
SET jsonb_toaster.unit_size = 0;
ALTER TABLE hexy ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO hexy SELECT i, (SELECT jsonb_object_agg('field' || lpad(j::text, 2, '0'),
		CASE WHEN i = 1 OR j < 50
			 THEN left(encode(sha512(convert_to(i || '/' || j, 'UTF8')), 'hex') ||
					   encode(sha512(convert_to(i || '/' || j || '/2', 'UTF8')), 'hex'), 200)
			 ELSE repeat('field ' || j || ' ', 25) END)
	FROM generate_series(0, 99) j) FROM generate_series(1, 2) i;
SELECT pg_create_logical_replication_slot('hexy', 'test_decoding');});
	my %hexy_desc;
	foreach my $i (1, 2)
	{
		my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
		$node->safe_psql('postgres',
			qq{UPDATE hexy SET jb = jsonb_set(jb, '{field42}', to_jsonb(repeat('changed ', 400))) WHERE id = $i});
		$hexy_desc{$i} = $node->safe_psql('postgres', qq{
SELECT string_agg(record_type || ': ' || description, E'\n')
FROM pg_get_wal_records_info('$from', pg_current_wal_insert_lsn())
WHERE resource_manager = 'jsonb_toaster'});
	}
	like($hexy_desc{1}, qr/^SHARED_STREAM: .*, uncompressed$/,
		'parts of hex digits streamed as stored, the stream not compressed again');
	like($hexy_desc{2}, qr/^SHARED_STREAM: .*, lz4$/,
		'half of the parts as stored: the stream compressed');
	my %hdecoded = decoded_updates('hexy', 'hexy');
	foreach my $i (1, 2)
	{
		is( $node->safe_psql('postgres', qq{SELECT md5(jb::text) FROM hexy WHERE id = $i}),
			md5_hex($hdecoded{$i} // ''),
			"parts streamed as stored ($i): decoded whole");
	}
}

# Folded inline skeletons (format version 8): a document whose tree is
# compressed with its parts in the row decodes whole, inserted, updated by
# jsonb_set (stored anew, folded again) and by another column's UPDATE
# with REPLICA IDENTITY FULL (the old tuple carries it too).  The shape of
# sql/folded.sql's documents, which fold.
$node->safe_psql('postgres', q{
CREATE FUNCTION fdoc(id int) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_object_agg(format('short_field_%s', lpad(j::text, 2, '0')),
							format('value %s of record %s', lpad(j::text, 6, '0'), lpad(id::text, 6, '0')))
		|| jsonb_build_object('leader', 'L' || id, 'edit', 'x', 'fields',
			(SELECT jsonb_agg(jsonb_build_object('tag', k, 'v', md5((id * 100 + k)::text)))
			 FROM generate_series(1, 25) k))
	FROM generate_series(1, 30) j
$$;
CREATE TABLE folded (id int PRIMARY KEY, n int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE folded ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE folded REPLICA IDENTITY FULL;
SELECT pg_create_logical_replication_slot('folded', 'test_decoding');
INSERT INTO folded (id, jb) SELECT i, fdoc(i) FROM generate_series(1, 2) i;
UPDATE folded SET jb = jsonb_set(jb, '{edit}', '"y"') WHERE id = 1;
UPDATE folded SET n = 1 WHERE id = 2;});
is( $node->safe_psql('postgres', q{
SELECT string_agg((jsonb_toaster_storage(jb)).form || ':' ||
	(SELECT count(*) FROM jsonb_toaster_values(jb)), ',' ORDER BY id) FROM folded}),
	'skeleton:0,skeleton:0', 'the documents are kept in the row as skeletons');
# each document decoded, named by what it equals: the document inserted
# (fdoc) or the one the table holds now
my %fmd5;
foreach my $row (split /\n/, $node->safe_psql('postgres',
	q{SELECT id || ' ' || md5(fdoc(id)::text) || ' ' || md5(jb::text) FROM folded}))
{
	my ($id, $orig, $now) = split / /, $row;
	$fmd5{$id} = { $now => 'now', $orig => 'orig' };
}
my @fshown;
foreach my $line (split /\n/, $node->safe_psql('postgres', q{
SELECT data FROM pg_logical_slot_get_changes('folded', NULL, NULL, 'include-xids', '0')
WHERE data LIKE 'table public.folded:%'}))
{
	$line =~ /^table public\.folded: (\w+): .*?id\[integer\]:(\d+)/
	  or die "cannot parse: " . substr($line, 0, 200);
	my ($kind, $id) = ($1, $2);
	my @docs;
	while ($line =~ /jb\[jsonb\]:'((?:[^']|'')*)'/g)
	{
		(my $doc = $1) =~ s/''/'/g;
		push @docs, $fmd5{$id}{ md5_hex($doc) } // 'other';
	}
	push @fshown, join(' ', $kind, $id, @docs);
}
is_deeply(\@fshown,
	[ 'INSERT 1 orig', 'INSERT 2 orig', 'UPDATE 1 orig now', 'UPDATE 2 orig orig' ],
	'folded documents decode whole: inserts, jsonb_set, another column');

foreach my $n ($node, $sub)
{
	ok(!$n->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
		$n->name . ': no assertion failure, PANIC or corruption in the log');
}

$sub->stop;
$node->stop;
done_testing();
