# Copyright (c) 2026, jsonb_toaster developers
#
# Core calls the toaster once a tuple in contexts that live as long as a
# table rewrite (VACUUM FULL, CLUSTER) or a logical decoding session, and
# frees only what it is handed back: whatever else the toaster allocates
# there stays until the end of the operation.  The memory a backend needs
# for these must therefore not grow with the number of rows.  Measured from
# outside the backend: its peak resident memory (VmHWM in /proc, reset
# before the operation through clear_refs), over the operation on N rows
# and on 4N rows of many-part documents.  Shared buffers are kept small
# so that the pages of shared memory a backend touches do not count.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('memory');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module test_decoding is not installed'
  unless grep { -f } glob($node->config_data('--pkglibdir') . '/test_decoding.*');
plan skip_all => 'no /proc/self/clear_refs to reset the peak memory'
  unless -w '/proc/self/clear_refs';

$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
shared_buffers = 1MB
work_mem = 64kB
maintenance_work_mem = 1MB
logical_decoding_work_mem = 64kB
jsonb_toaster.range_size = 64
});
$node->start;

# Documents of 3 kB in 10 parts or more (an array and an object cut into
# small ranges, 16 at most each), in tables opted in.
$node->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE FUNCTION mem_doc(i int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object('id', i,
	'list', (SELECT jsonb_agg(md5((i * 100 + j)::text)) FROM generate_series(1, 40) j),
	'map', (SELECT jsonb_object_agg('k' || j, md5((i * 100 - j)::text))
			FROM generate_series(1, 40) j))
$$;
CREATE FUNCTION mem_table(name text, nrows int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, jb jsonb)', name);
	EXECUTE format('ALTER TABLE %I ALTER COLUMN jb SET (toaster = %L)', name, 'jsonb_toaster');
	EXECUTE format('INSERT INTO %I SELECT i, mem_doc(i) FROM generate_series(1, %s) i',
				   name, nrows);
END $$;
});

my $n = $ENV{JT_MEMORY_ROWS} // 2000;
$node->safe_psql('postgres', qq{
SELECT mem_table('warm', 50);
SELECT mem_table('small', $n);
SELECT mem_table('large', 4 * $n);
});

my $parts = $node->safe_psql('postgres',
	q{SELECT min((jsonb_toaster_storage(jb)).parts) FROM large});
cmp_ok($parts, '>=', 10, "documents of $parts parts or more");
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM large WHERE (jsonb_toaster_storage(jb)).form <> 'skeleton'}),
	'0',
	'every document is a skeleton');

# kB of a field of /proc/<pid>/status
sub proc_status
{
	my ($pid, $field) = @_;
	my $status = slurp_file("/proc/$pid/status");
	$status =~ /^$field:\s+(\d+) kB/m
	  or die "no $field in /proc/$pid/status";
	return $1;
}

# Run $sql in a new session after $warmup, and return by how many kB the
# backend's resident memory peaked above what it was when $sql started.
sub peak_growth
{
	my ($warmup, $sql) = @_;
	my $session = $node->background_psql('postgres');
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	chomp $pid;

	$session->query_safe($warmup);
	open(my $fh, '>', "/proc/$pid/clear_refs")
	  or die "cannot open /proc/$pid/clear_refs: $!";
	print $fh "5\n";
	close($fh) or die "cannot reset the peak memory of $pid: $!";
	my $before = proc_status($pid, 'VmRSS');
	$session->query_safe($sql);
	my $peak = proc_status($pid, 'VmHWM');
	$session->quit;
	return $peak - $before;
}

# The most the peak may grow by from N to 4N rows or transactions, in kB:
# about 0.3 kB a row for N = 2000, where the leaks this test was written
# for kept about 3 kB a row (VACUUM FULL, CLUSTER) or a transaction
# (decoding); without them the peaks differ by a few hundred kB either way.
my $slack = 2 * 1024;

# VACUUM FULL and CLUSTER offer every skeleton to the toaster (get_parts)
for my $cmd ('VACUUM FULL', 'CLUSTER')
{
	my @growth = map {
		my $table = $_;
		my ($stmt, $warm) = map {
			$cmd eq 'CLUSTER' ? "CLUSTER $_ USING ${_}_pkey" : "$cmd $_"
		} ($table, 'warm');
		peak_growth($warm, $stmt);
	} ('small', 'large');
	note "$cmd: peak growth $growth[0] kB for $n rows, $growth[1] kB for "
	  . 4 * $n . " rows";
	cmp_ok($growth[1] - $growth[0], '<', $slack,
		"$cmd: memory does not grow with the number of rows");
}

# The appendable bytea toaster: appends (adopt) and VACUUM FULL (toast,
# each value stored anew) of every row, in one statement.  The tables are
# unlogged: at this server's wal_level = logical the toaster leaves logged
# tables' values to standard TOAST.
$node->safe_psql('postgres', qq{
CREATE FUNCTION blob(seed int, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS \$\$
SELECT substring(string_agg(sha256(convert_to(seed || '/' || i, 'UTF8')), '' ORDER BY i)
	FROM 1 FOR n)
FROM generate_series(0, (n - 1) / 32) i
\$\$;
CREATE UNLOGGED TABLE bwarm (id int PRIMARY KEY, data bytea);
CREATE UNLOGGED TABLE bsmall (LIKE bwarm INCLUDING ALL);
CREATE UNLOGGED TABLE blarge (LIKE bwarm INCLUDING ALL);
ALTER TABLE bwarm ALTER COLUMN data SET (toaster = 'bytea_appendable');
ALTER TABLE bsmall ALTER COLUMN data SET (toaster = 'bytea_appendable');
ALTER TABLE blarge ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO bwarm SELECT i, blob(i, 3000) FROM generate_series(1, 50) i;
INSERT INTO bsmall SELECT i, blob(i, 3000) FROM generate_series(1, $n) i;
INSERT INTO blarge SELECT i, blob(i, 3000) FROM generate_series(1, 4 * $n) i;
});
for my $case (
	[ 'appends', q{UPDATE %s SET data = data || blob(id + 1, 3000)} ],
	[ 'VACUUM FULL', q{VACUUM FULL %s} ])
{
	my ($what, $sql) = @$case;
	my @growth = map { peak_growth(sprintf($sql, 'bwarm'), sprintf($sql, $_)) }
	  ('bsmall', 'blarge');
	note "bytea $what: peak growth $growth[0] kB for $n rows, $growth[1] kB for "
	  . 4 * $n . " rows";
	cmp_ok($growth[1] - $growth[0], '<', $slack,
		"appendable bytea, $what: memory does not grow with the number of rows");
}
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM blarge WHERE data <> blob(id, 3000) || blob(id + 1, 3000)
   OR (bytea_appendable_storage(data)).form <> 'appendable'}),
	'0', 'appendable bytea values intact and held by the toaster');

# the documents are intact after the rewrites
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FROM large WHERE jb <> mem_doc(id)}),
	'0',
	'documents intact after the rewrites');

# Logical decoding reassembles every document (get_parts and reassemble),
# one transaction after another, in the session that decodes.
$node->safe_psql('postgres', q{
CREATE TABLE decoded (id int PRIMARY KEY, jb jsonb);
ALTER TABLE decoded ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SELECT pg_create_logical_replication_slot('warm', 'test_decoding');
INSERT INTO decoded SELECT i, mem_doc(i) FROM generate_series(1, 20) i;
});
my @decoded;
for my $ntx ($n / 4, $n)
{
	my $slot = "s$ntx";
	$node->safe_psql('postgres',
		qq{SELECT pg_create_logical_replication_slot('$slot', 'test_decoding')});
	$node->safe_psql('postgres', qq{
DO \$\$
BEGIN
	FOR i IN 1 .. $ntx LOOP
		INSERT INTO decoded VALUES (100000 + i, mem_doc(i));
		COMMIT;
	END LOOP;
END \$\$;
DELETE FROM decoded WHERE id > 100000;
});
	my $warm =
	  q{SELECT count(*) FROM pg_logical_slot_peek_changes('warm', NULL, 1)};
	my $growth = peak_growth($warm,
		qq{SELECT count(*) FROM pg_logical_slot_get_changes('$slot', NULL, NULL,
			'skip-empty-xacts', '1')});
	# a slot left behind would keep WAL for nothing
	$node->safe_psql('postgres',
		qq{SELECT pg_drop_replication_slot('$slot')});
	push @decoded, $growth;
}
note "decoding: peak growth $decoded[0] kB for "
  . $n / 4
  . " transactions, $decoded[1] kB for $n";
cmp_ok($decoded[1] - $decoded[0], '<', $slack,
	'decoding: memory does not grow with the number of transactions');

# the reassembled documents are the inserted ones
$node->safe_psql('postgres',
	q{SELECT pg_create_logical_replication_slot('check', 'test_decoding')});
$node->safe_psql('postgres',
	q{INSERT INTO decoded SELECT 200000 + i, mem_doc(i) FROM generate_series(1, 5) i});
my $changes = $node->safe_psql('postgres',
	q{SELECT string_agg(data, E'\n') FROM pg_logical_slot_get_changes('check', NULL, NULL)
	  WHERE data LIKE 'table public.decoded: INSERT:%'});
my @docs = split /\n/, $changes;
is(scalar @docs, 5, 'five inserts decoded');
like($docs[0], qr/"list": \["/, 'a decoded document holds its parts');

$node->stop;
done_testing();
