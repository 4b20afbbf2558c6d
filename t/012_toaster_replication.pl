# Copyright (c) 2026, jsonb_toaster developers
#
# Logical replication and decoding of a toaster column under
# wal_level = logical, against the same statements on a standard jsonb
# column of the same publisher.  Each statement runs on t_toaster (opted
# in) and on t_stock (standard TOAST), in the same transaction: every kind
# of change -- inserts, updates by every path (jsonb_set adopted with no
# part written, a small edit kept as a delta, || and - through the general
# path, subscripting, a document sent whole by the client, a new version, an
# UPDATE of another column), deletes, a truncate, savepoints rolled back and
# released, an aborted transaction, and a transaction far larger than
# logical_decoding_work_mem, spilled by test_decoding and streamed to the
# subscribers.  Then:
# - test_decoding shows the same changes for both tables, a value shown as
#   unchanged (standard TOAST's unchanged-toast-datum, and the toaster's for
#   an UPDATE of another column, patch 0013) standing for the row's value
#   before the change;
# - stock subscribers through pgoutput, Debian's PostgreSQL 15 and an
#   unpatched PostgreSQL 18 (JT_STOCK18, from tools/build-server.sh stock),
#   each skipped if absent, end with both tables equal to the publisher's
#   standard one.
# Documents whose tree lies outside the row go through the same changes.
# The parts an update shares reach decoding both ways the toaster logs
# them: as stored chunks, and as one compressed stream.
# And a tree outside the row stored while wal_level was replica, whose
# value no transaction logged: decoding meets it unchanged (an UPDATE of
# another column), or, updated, rebuilt from the parts the update logs.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use Test::More;

my $gen_doc = slurp_file(dirname(__FILE__) . '/gen_doc.sql');

my $pub = PostgreSQL::Test::Cluster->new('publisher');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $pub->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module test_decoding is not installed'
  unless grep { -f } glob($pub->config_data('--pkglibdir') . '/test_decoding.*');
$pub->init(allows_streaming => 'logical');
$pub->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
jsonb_toaster.range_size = 1024
logical_decoding_work_mem = 64kB
max_replication_slots = 10
max_wal_senders = 10
wal_level = replica
});
$pub->start;

# trees outside the row while the table is not logically logged: wide
# objects of numbers, whose root leaves whole with a long directory
$pub->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE TABLE t_outside (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE t_outside ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO t_outside (id, jb) SELECT i, (SELECT jsonb_object_agg(j, i * 1000 + j)
	FROM generate_series(1, 800) j) FROM generate_series(1, 2) i;
});
is( $pub->safe_psql('postgres', q{
SELECT count(*) FROM t_outside, jsonb_toaster_parts(jb) WHERE kind = 'tree'}),
	'2', 'trees outside the row under wal_level = replica');
$pub->append_conf('postgresql.conf', "wal_level = logical\n");
$pub->restart;

my $tables = q{
CREATE TABLE t_toaster (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, jb jsonb);
CREATE TABLE t_stock (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, jb jsonb);
};
my $outside_table = q{
CREATE TABLE t_outside (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, jb jsonb);
};
$pub->safe_psql('postgres', "$gen_doc$tables" . q{
ALTER TABLE t_toaster ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE PUBLICATION p FOR TABLE t_toaster, t_stock, t_outside;
SELECT pg_create_logical_replication_slot('decoded', 'test_decoding');
});
my $logical_from = $pub->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');

# stock subscribers, empty tables: every row arrives as a change
my @subs;
my %installs = (
	sub15 => -x '/usr/lib/postgresql/15/bin/postgres' ? '/usr/lib/postgresql/15' : undef,
	sub18 => $ENV{JT_STOCK18});
foreach my $name (sort keys %installs)
{
	my $path = $installs{$name};
	next unless defined $path && -x "$path/bin/postgres";
	my $sub = PostgreSQL::Test::Cluster->new($name, install_path => $path);
	$sub->init;
	$sub->start;
	$sub->safe_psql('postgres', $tables . $outside_table);
	my $connstr = $pub->connstr('postgres') =~ s/'/''/gr;
	$sub->safe_psql('postgres',
		"CREATE SUBSCRIPTION $name CONNECTION '$connstr' PUBLICATION p WITH (streaming = on)");
	$sub->wait_for_subscription_sync($pub, $name);
	push @subs, [ $name, $sub ];
}

# Run a statement (%1$s: the table) on both tables, in one transaction
# with whatever surrounds it.
sub both
{
	my ($sql) = @_;
	return join('', map { sprintf($sql, $_) . "\n" } qw(t_toaster t_stock));
}

$pub->safe_psql('postgres',
	both(q{INSERT INTO %1$s (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1, 30) i;}));
$pub->safe_psql('postgres',
	both(q{INSERT INTO %1$s (id, jb) VALUES (31, gen_doc(31, 0));}));
$pub->safe_psql('postgres', 'BEGIN;' . both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{name}', '"renamed"') WHERE id %% 5 = 1;
UPDATE %1$s SET jb = jsonb_set(jb, '{items,2,h}', '"edited"') WHERE id %% 5 = 2;
UPDATE %1$s SET jb = jb || '{"x": 1}' WHERE id %% 5 = 3;
UPDATE %1$s SET jb = jb - 'x' WHERE id %% 5 = 3;
UPDATE %1$s SET jb['tags'][0] = '"subscripted"' WHERE id %% 5 = 4;
UPDATE %1$s SET jb = jsonb_set(jb::text::jsonb, '{ver}', '7') WHERE id %% 5 = 0;
}) . 'COMMIT;');
$pub->safe_psql('postgres', both(q{UPDATE %1$s SET other = other + 1 WHERE id %% 3 = 0;}));
$pub->safe_psql('postgres', both(q{UPDATE %1$s SET jb = gen_doc(id, 1) WHERE id %% 7 = 0;}));
$pub->safe_psql('postgres', both(q{DELETE FROM %1$s WHERE id %% 11 = 0;}));

# savepoints: a rolled back subtransaction's changes are not sent
$pub->safe_psql('postgres', 'BEGIN;' . both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{name}', '"in a subtransaction"') WHERE id = 1;
SAVEPOINT a;
UPDATE %1$s SET jb = jsonb_set(jb, '{name}', '"rolled back"') WHERE id = 2;
INSERT INTO %1$s (id, jb) VALUES (40, gen_doc(40, 0));
ROLLBACK TO a;
SAVEPOINT b;
UPDATE %1$s SET other = 5, jb = jsonb_set(jb, '{items,4,h}', '"released"') WHERE id = 3;
RELEASE b;
}) . 'COMMIT;');

# an aborted transaction is not sent at all
$pub->safe_psql('postgres', 'BEGIN;' . both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{name}', '"aborted"');
INSERT INTO %1$s (id, jb) VALUES (41, gen_doc(41, 0));
}) . 'ROLLBACK;');

# far larger than logical_decoding_work_mem: spilled, and streamed
$pub->safe_psql('postgres', 'BEGIN;' . both(q{
INSERT INTO %1$s (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(100, 160) i;
UPDATE %1$s SET jb = jsonb_set(jb, '{name}', '"in a large transaction"') WHERE id >= 100;
UPDATE %1$s SET jb = jsonb_set(jb, '{items,1,h}', '"large"') WHERE id < 100;
UPDATE %1$s SET other = other + 10 WHERE id %% 2 = 0;
}) . 'COMMIT;');

# a truncate, and rows after it
$pub->safe_psql('postgres', both(q{TRUNCATE %1$s;}));
$pub->safe_psql('postgres', both(
		q{INSERT INTO %1$s (id, jb) SELECT i, gen_doc(i, 2) FROM generate_series(1, 5) i;}));
$pub->safe_psql('postgres', both(
		q{UPDATE %1$s SET other = 1, jb = jsonb_set(jb, '{flag}', 'null') WHERE id = 2;}));
$pub->safe_psql('postgres', both(q{UPDATE %1$s SET other = 2 WHERE id = 3;}));

# documents whose tree leaves the row (wide objects of numbers), under
# wal_level = logical: inserted, edited in place (the tree's value shared,
# its edits in the row) twice, sent whole by the client (parts shared, a
# new tree), left alone by an UPDATE of another column, deleted
$pub->safe_psql('postgres', both(q{
INSERT INTO %1$s (id, jb) SELECT i, (SELECT jsonb_object_agg(j, i * 1000 + j)
	FROM generate_series(1, 1000) j) FROM generate_series(201, 206) i;}));
$pub->safe_psql('postgres', both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{7}', '"seven"') WHERE id IN (201, 202);}));
$pub->safe_psql('postgres', both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{9}', '"nine"') WHERE id = 201;}));
$pub->safe_psql('postgres', both(q{
UPDATE %1$s SET jb = jb::text::jsonb || '{"1": 0}' WHERE id = 203;}));
$pub->safe_psql('postgres', both(q{UPDATE %1$s SET other = 7 WHERE id = 204;}));
$pub->safe_psql('postgres', both(q{DELETE FROM %1$s WHERE id = 205;}));
is( $pub->safe_psql('postgres', q{
SELECT string_agg(id || ':' || (SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree'), ' ' ORDER BY id)
FROM t_toaster WHERE id > 200}),
	'201:1 202:1 203:1 204:1 206:1',
	'trees outside the row under wal_level = logical');

# the outside trees: an UPDATE of another column, one of the document
$pub->safe_psql('postgres', q{UPDATE t_outside SET other = 1 WHERE id = 1;});
$pub->safe_psql('postgres', q{
UPDATE t_outside SET jb = jsonb_set(jb, '{7}', '"seven"') WHERE id = 2;});
is( $pub->safe_psql('postgres', q{
SELECT string_agg(id || ':' || (SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree'), ' ' ORDER BY id)
FROM t_outside}),
	'1:1 2:1', 'the trees stored under wal_level = replica stay outside');

# large documents (containers cut into over 64 ranges, the tree outside
# the row whatever else it holds), under wal_level = logical: inserted, an
# element changed (a delta), a short field changed (edits of the tree), a
# key added (a tree of another size, written alone), sent whole by the
# client, left alone by an UPDATE of another column
my $large = "SET jsonb_toaster.range_size = 64;\n";
$pub->safe_psql('postgres', $large . both(q{
INSERT INTO %1$s (id, jb) SELECT i, jsonb_build_object('meta', jsonb_build_object('v', i),
	'items', (SELECT jsonb_agg(jsonb_build_object('k', j, 'name', md5((i * 100000 + j)::text)))
			  FROM generate_series(1, 9000) j)) FROM generate_series(301, 303) i;}));
$pub->safe_psql('postgres', $large . both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{items,3000,name}', '"changed"') WHERE id = 301;
UPDATE %1$s SET jb = jsonb_set(jb, '{meta,v}', '0') WHERE id = 302;}));
$pub->safe_psql('postgres', $large . both(q{
UPDATE %1$s SET jb = jb || '{"added": 1}' WHERE id IN (301, 302);
UPDATE %1$s SET jb = jsonb_set(jb::text::jsonb, '{items,10}', '1') WHERE id = 303;
UPDATE %1$s SET other = 3 WHERE id = 303;}));
# the same array below a value of the root (opened, format version 8): an
# element changed through the path, a field of the opened value changed
$pub->safe_psql('postgres', $large . both(q{
INSERT INTO %1$s (id, jb) SELECT 304, jsonb_build_object('meta', jsonb_build_object('v', 4),
	'data', jsonb_build_object('n', 1, 'items', (SELECT jsonb_agg(jsonb_build_object('k', j,
		'name', md5(j::text))) FROM generate_series(1, 9000) j)));}));
$pub->safe_psql('postgres', $large . both(q{
UPDATE %1$s SET jb = jsonb_set(jb, '{data,items,4000,name}', '"nested"') WHERE id = 304;
UPDATE %1$s SET jb['data']['items'][8999]['k'] = '0' WHERE id = 304;
UPDATE %1$s SET jb = jsonb_set(jb, '{data,n}', '2') WHERE id = 304;}));
is( $pub->safe_psql('postgres', q{
SELECT string_agg(id || ':' || (SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE kind = 'tree')
	|| ':' || ((SELECT count(*) FROM jsonb_toaster_parts(jb) WHERE path IN ('{items}', '{data,items}')) > 64),
	' ' ORDER BY id)
FROM t_toaster WHERE id > 300}),
	'301:1:true 302:1:true 303:1:true 304:1:true',
	'large documents keep their trees outside the row under wal_level = logical');

# the parts shared were logged both ways: as their stored chunks (a value
# that is one compressed stream already) and as one stream of their raw
# contents compressed together (parts written apart by earlier updates)
SKIP:
{
	skip 'contrib module pg_walinspect is not installed', 1
	  unless -f $pub->config_data('--sharedir') . '/extension/pg_walinspect.control';
	is( $pub->safe_psql('postgres', qq{
CREATE EXTENSION pg_walinspect;
SELECT string_agg(DISTINCT record_type, ' ' ORDER BY record_type)
FROM pg_get_wal_records_info('$logical_from', pg_current_wal_insert_lsn())
WHERE resource_manager = 'jsonb_toaster'}),
		'SHARED_STREAM VALUE_CHUNKS',
		'shared parts logged as chunks and as streams');
}

# the publisher's two tables hold the same documents, one as skeletons
my $rows = q{SELECT id, other, md5(jb::text) FROM %s ORDER BY id};
is($pub->safe_psql('postgres', sprintf($rows, 't_toaster')),
	$pub->safe_psql('postgres', sprintf($rows, 't_stock')),
	'publisher: both tables hold the same rows');
is( $pub->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') || '/' || count(*)
FROM t_toaster}),
	'14/14', 'publisher: the toaster stores its documents as skeletons');

# Decode.  Parse test_decoding's lines into each table's changes, a value
# shown unchanged replaced by the row's value before the change; the
# changes of a transaction are compared sorted, since a statement visits
# the rows of the two tables in their heaps' orders.
sub parse_tuple
{
	my ($text) = @_;
	my %cols;
	while ($text =~ /\G\s*(\w+)\[([^\]]+)\]:('((?:[^']++|'')*)'|\S+)/gc)
	{
		my ($name, $raw, $quoted) = ($1, $3, $4);
		$cols{$name} =
			defined $quoted ? $quoted =~ s/''/'/gr
		  : $raw eq 'unchanged-toast-datum' ? \'unchanged'
		  : $raw;
	}
	die "cannot parse tuple: " . substr($text, pos($text) // 0, 200)
	  unless (pos($text) // 0) == length($text);
	return \%cols;
}

my $out = $pub->safe_psql('postgres', q{
SELECT data FROM pg_logical_slot_get_changes('decoded', NULL, NULL,
	'include-xids', '0', 'skip-empty-xacts', '1')});
my (%changes, %model, %unchanged);
# the rows of t_outside before the changes decoded (copied by no slot)
foreach my $row (split /\n/, $pub->safe_psql('postgres', q{
SELECT id, other FROM t_outside ORDER BY id}))
{
	my ($id, $other) = split /\|/, $row;
	$model{t_outside}{$id} = { id => $id, other => $other, jb => 'unknown' };
}

my $xact = 0;
my %raw;
foreach my $line (split /\n/, $out)
{
	$xact++ if $line eq 'BEGIN';
	next if $line eq 'BEGIN' || $line eq 'COMMIT';
	# the line as test_decoding wrote it, the table's name left out
	push @{ $raw{$1}[$xact] }, $2 if $line =~ /^table public\.(\w+): (.*)$/s;
	if ($line =~ /^table public\.(\w+): TRUNCATE:/)
	{
		push @{ $changes{$1}[$xact] }, 'TRUNCATE';
		$model{$1} = {};
		next;
	}
	die "unexpected line: " . substr($line, 0, 200)
	  unless $line =~ /^table public\.(\w+): (INSERT|UPDATE|DELETE): (.*)$/s;
	my ($table, $action, $cols) = ($1, $2, parse_tuple($3));
	my $id = $cols->{id};
	if ($action eq 'DELETE')
	{
		delete $model{$table}{$id};
		push @{ $changes{$table}[$xact] }, "DELETE $id";
		next;
	}
	foreach my $c (keys %$cols)
	{
		next unless ref $cols->{$c};
		$unchanged{$table}++;
		die "$table: $c of row $id shown unchanged with no value before"
		  unless defined $model{$table}{$id}{$c};
		$cols->{$c} = $model{$table}{$id}{$c};
	}
	$model{$table}{$id} = $cols;
	push @{ $changes{$table}[$xact] },
	  "$action $id " . join(' ', map { "$_=" . md5_of($cols->{$_}) } sort keys %$cols);
}
foreach my $t (keys %changes)
{
	# a statement on both tables outside BEGIN makes a transaction each
	$changes{$t} = [ map { [ sort @$_ ] } grep { defined } @{ $changes{$t} } ];
	$raw{$t} = [ map { [ sort @$_ ] } grep { defined } @{ $raw{$t} } ];
}
my $nchanges = 0;
$nchanges += scalar @$_ foreach @{ $changes{t_stock} // [] };

sub md5_of
{
	my ($v) = @_;
	return length($v) > 64 ? 'md5:' . Digest::MD5::md5_hex($v) : $v;
}
use Digest::MD5;

cmp_ok($nchanges, '>', 100, 'test_decoding: the changes were decoded');
is_deeply($changes{t_toaster}, $changes{t_stock},
	'test_decoding: the toaster column\'s changes are the standard column\'s');
# documents this size are TOASTed by both: what is shown unchanged is too
is_deeply($raw{t_toaster}, $raw{t_stock},
	'test_decoding: the toaster column\'s decoded text is the standard column\'s');
cmp_ok($unchanged{t_toaster} // 0, '>', 0,
	'test_decoding: an UPDATE of another column shows the document unchanged');
my $outside_2 = $pub->safe_psql('postgres', q{SELECT md5(jb::text) FROM t_outside WHERE id = 2});
is_deeply([ map { @$_ } @{ $changes{t_outside} } ],
	[ 'UPDATE 1 id=1 jb=unknown other=1', "UPDATE 2 id=2 jb=md5:$outside_2 other=0" ],
	'test_decoding: a tree outside the row, left alone, shown unchanged; updated, whole');
cmp_ok(
	$pub->safe_psql('postgres',
		q{SELECT spill_txns FROM pg_stat_replication_slots WHERE slot_name = 'decoded'}),
	'>', 0, 'test_decoding: the large transaction was spilled to disk');

# the subscribers
my $want = $pub->safe_psql('postgres', sprintf($rows, 't_stock'));
foreach my $s (@subs)
{
	my ($name, $sub) = @$s;
	$pub->wait_for_catchup($name);
	is($sub->safe_psql('postgres', sprintf($rows, 't_toaster')), $want,
		"$name: the toaster column's table equals the publisher's");
	is($sub->safe_psql('postgres', sprintf($rows, 't_stock')), $want,
		"$name: the standard column's table equals the publisher's");
	is($sub->safe_psql('postgres', sprintf($rows, 't_outside')),
		$pub->safe_psql('postgres', sprintf($rows, 't_outside')),
		"$name: the table of outside trees equals the publisher's");
	cmp_ok(
		$pub->safe_psql('postgres',
			"SELECT stream_txns FROM pg_stat_replication_slots WHERE slot_name = '$name'"),
		'>', 0, "$name: a transaction was streamed");
	$sub->stop;
}
note('stock subscribers: ' . join(', ', map { $_->[0] } @subs));

ok(!$pub->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
	'publisher: no assertion failure, PANIC or corruption in the log');
$pub->stop;
done_testing();
