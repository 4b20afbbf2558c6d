# Copyright (c) 2026, jsonb_toaster developers
#
# The lifecycle of a bytea column stored by the appendable bytea toaster.
# Table "b" opts in, table "r" is a standard column fed the same
# statements (inserts, appends of 1 byte to 10 kB, appends that abort,
# updates of another column, replacements, deletes).  After each operation
# (VACUUM FULL, CLUSTER, an ALTER TABLE rewrite, a crash, dump and
# restore) and on a streaming standby:
#   - every value equals its reference, whole and in slices;
#   - values of a chunk or more are the toaster's (pointer overhead);
#   - verify_heapam(check_toast => true) of the table and of its TOAST
#     relation and bt_index_check() of their indexes report nothing;
#   - a REPEATABLE READ session that took its snapshot before the appends
#     still reads the values it saw;
#   - once that session is gone and the table vacuumed, the TOAST rows are
#     exactly the full chunks the live values name.
# A server at wal_level = logical leaves values to standard TOAST, and
# test_decoding gives the same changes for "b" as for "r", also for values
# stored by the toaster before the server was restarted at that level.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('primary');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
});
$node->start;

my $setup = q{
CREATE FUNCTION blob(seed int, n int) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
SELECT substring(coalesce(string_agg(sha256(convert_to(seed::text || '/' || i, 'UTF8')),
		'' ORDER BY i), '') FROM 1 FOR n)
FROM generate_series(0, (n - 1) / 32) i
$$;
CREATE TABLE b (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, data bytea);
ALTER TABLE b ALTER COLUMN data SET (toaster = 'bytea_appendable');
CREATE TABLE r (id int PRIMARY KEY, other int NOT NULL DEFAULT 0, data bytea);
};
$node->safe_psql('postgres', "CREATE EXTENSION amcheck;\nCREATE EXTENSION jsonb_toaster;\n" . $setup);

# run a statement on b and on r (%t is the table)
sub both
{
	my ($n, $db, $sql) = @_;
	for my $t ('b', 'r')
	{
		(my $s = $sql) =~ s/%t/$t/g;
		$n->safe_psql($db, $s);
	}
}

# one round of the workload: k chooses sizes and rows
sub round
{
	my ($n, $db, $k) = @_;
	both($n, $db, qq{INSERT INTO %t (id, data)
SELECT $k * 100 + g, blob($k * 100 + g, 2676 * (g % 4) + 37 * g + $k)
FROM generate_series(1, 12) g});
	for my $size (1, 10, 100, 1000, 2500, 10000)
	{
		both($n, $db, qq{UPDATE %t SET data = data || blob($k * 1000 + $size + id, $size)
WHERE id % 3 = $size % 3});
	}
	# appends that abort, on b only: its next appends number past them
	$n->safe_psql($db, qq{BEGIN;
UPDATE b SET data = data || blob(7, 5000) WHERE id % 2 = 0;
ROLLBACK;
DO \$\$ BEGIN
	UPDATE b SET data = data || blob(8, 3000) WHERE id % 2 = 1;
	RAISE EXCEPTION 'abort';
EXCEPTION WHEN raise_exception THEN END \$\$;});
	both($n, $db, qq{UPDATE %t SET data = data || blob($k, 4000) WHERE id % 4 = 1});
	both($n, $db, qq{UPDATE %t SET other = other + 1 WHERE id % 5 = 0});
	both($n, $db, qq{UPDATE %t SET data = blob($k + 50, 6000) WHERE id = $k * 100 + 3});
	both($n, $db, qq{DELETE FROM %t WHERE id = $k * 100 + 4});
}

my $differ = q{
SELECT count(*) FROM b FULL JOIN r USING (id)
WHERE b.data IS DISTINCT FROM r.data OR b.other IS DISTINCT FROM r.other
   OR md5(b.data) IS DISTINCT FROM md5(r.data)
   OR length(b.data) IS DISTINCT FROM length(r.data)
   OR EXISTS (SELECT FROM (VALUES (1), (2676), (2677), (4000), (9000)) o (off)
			  WHERE substring(b.data FROM o.off FOR 3000) IS DISTINCT FROM
					substring(r.data FROM o.off FOR 3000))};
# values of a chunk or more the toaster does not hold
my $not_ours = q{
SELECT count(*) FROM b WHERE length(data) >= 2676
  AND (bytea_appendable_storage(data)).form IS DISTINCT FROM 'appendable'};
my $chunks_live = q{
SELECT (SELECT count(*) FROM pg_toast.%s) =
	(SELECT coalesce(sum(chunks + (tail_size > 0)::int), 0)
	 FROM b, bytea_appendable_storage(data) WHERE form = 'appendable')};

sub toastrel
{
	my ($n, $db) = @_;
	return $n->safe_psql($db,
		q{SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'b'::regclass});
}

sub check
{
	my ($n, $db, $label, %opt) = @_;
	is($n->safe_psql($db, $differ), '0', "$label: values equal the reference");
	is($n->safe_psql($db, $not_ours), '0', "$label: the toaster holds every value of a chunk or more")
	  unless $opt{mixed};
	return if $opt{read_only};
	my $toast = toastrel($n, $db);
	is( $n->safe_psql($db, qq{
SELECT count(*) FROM verify_heapam('b', check_toast => true);
SELECT count(*) FROM verify_heapam('$toast')}),
		"0\n0", "$label: verify_heapam finds nothing");
	$n->safe_psql($db, qq{
SELECT bt_index_check('b_pkey', true);
SELECT bt_index_check(indexrelid, true) FROM pg_index WHERE indrelid = '$toast'::regclass});
	return if $opt{holder} || $opt{mixed};
	$n->safe_psql($db, 'VACUUM b');
	(my $q = $chunks_live) =~ s/pg_toast\.%s/$toast/;
	is($n->safe_psql($db, $q), 't', "$label: the TOAST rows are the live values' chunks");
}

my $standby;
$node->backup('base');
$standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;

round($node, 'postgres', 1);
check($node, 'postgres', 'after the first round');

# a session whose snapshot predates the second round
my $digest = q{SELECT string_agg(id || ':' || md5(data), ',' ORDER BY id) FROM b};
my $before = $node->safe_psql('postgres', $digest);
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$holder->query_safe('SELECT count(*) FROM pg_class');
round($node, 'postgres', 2);
check($node, 'postgres', 'after the second round', holder => 1);

# The holder takes no lock on b until it reads it, at the end: the
# rewrites below wait for no one.
for my $op ('VACUUM FULL b', 'CLUSTER b USING b_pkey')
{
	$node->safe_psql('postgres', $op);
	check($node, 'postgres', $op, holder => 1);
	round($node, 'postgres', $op =~ /^VACUUM/ ? 3 : 4);
	check($node, 'postgres', "appends after $op", holder => 1);
	$node->safe_psql('postgres', $op);
}
is($holder->query_safe($digest), $before,
	'after the rewrites, the older snapshot reads the values it saw');
$holder->query_safe('COMMIT');
$holder->quit;
# the rewrites copied the versions the older snapshot could see, each
# stored anew, whose chunks stay once those versions are vacuumed, as
# standard TOAST values do; a rewrite without such a snapshot drops them
$node->safe_psql('postgres', 'VACUUM FULL b');
check($node, 'postgres', 'the older snapshot gone');

# an ALTER TABLE rewrite stores every value anew from an expression
$node->safe_psql('postgres',
	q{ALTER TABLE b ALTER COLUMN data TYPE bytea USING data || '\x00'::bytea});
$node->safe_psql('postgres', q{UPDATE r SET data = data || '\x00'::bytea});
check($node, 'postgres', 'ALTER TABLE rewrite');
round($node, 'postgres', 5);
check($node, 'postgres', 'appends after ALTER TABLE');

# Chunks of an aborted append share their numbers with the next append's
# once an index scan has marked their entries dead (the next append no
# longer sees them): a standby, which does not skip such entries and does
# not get the rows' hint bits, must still read only the committed chunks.
$node->safe_psql('postgres', q{
CREATE TABLE sb (id int PRIMARY KEY, data bytea);
ALTER TABLE sb ALTER COLUMN data SET (toaster = 'bytea_appendable');
CREATE TABLE sbr (id int PRIMARY KEY, data bytea);
INSERT INTO sb VALUES (1, blob(1, 3 * 2676 + 100));
INSERT INTO sbr VALUES (1, blob(1, 3 * 2676 + 100));
BEGIN;
UPDATE sb SET data = data || blob(2, 2 * 2676) WHERE id = 1;
ROLLBACK;});
my $sbtoast = $node->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE oid = 'sb'::regclass});
$node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM $sbtoast WHERE chunk_id > 0 AND chunk_seq >= 3;
SELECT count(*) FROM $sbtoast WHERE chunk_id > 0 AND chunk_seq >= 3;
CHECKPOINT;
UPDATE sb SET data = data || blob(3, 2 * 2676) WHERE id = 1;
UPDATE sbr SET data = data || blob(3, 2 * 2676) WHERE id = 1;});
my $sbcheck = q{SELECT sb.data = sbr.data, md5(substring(sb.data FROM 3 * 2676 + 101 FOR 3000))
	= md5(substring(sbr.data FROM 3 * 2676 + 101 FOR 3000)) FROM sb, sbr};
is($node->safe_psql('postgres', $sbcheck), 't|t',
	'after an aborted append, the next one reads back on the primary');

# A pointer held past the rollback of the subtransaction that made it
# names chunks VACUUM then removes and a later append numbers again: it
# must fail to read (as a standard TOAST pointer to a removed value does),
# not read the later append's bytes.
$node->safe_psql('postgres', q{
CREATE TABLE sx (id int PRIMARY KEY, data bytea);
ALTER TABLE sx ALTER COLUMN data SET (toaster = 'bytea_appendable');
INSERT INTO sx VALUES (1, blob(1, 2 * 2676 + 10));
CREATE FUNCTION held_after_rollback() RETURNS text LANGUAGE plpgsql AS $$
DECLARE v bytea; before text;
BEGIN
	BEGIN
		UPDATE sx SET data = data || blob(2, 4000) WHERE id = 1;
		SELECT data INTO v FROM sx WHERE id = 1;
		before := md5(v);
		RAISE EXCEPTION 'roll back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	PERFORM pg_sleep(3);
	UPDATE sx SET data = data || blob(3, 4000) WHERE id = 1;
	RETURN format('changed=%s', before <> md5(v));
END $$;});
# Run function (which sleeps after its rollback) in a session of its own,
# VACUUM sx meanwhile: its read of the pointer it holds must fail.
sub held_fails
{
	my ($function, $label) = @_;
	my $held = $node->background_psql('postgres', on_error_stop => 0);
	$held->query_until(qr/holding/, "\\echo holding\nSELECT $function();\n");
	sleep 1;
	$node->safe_psql('postgres', 'VACUUM sx');
	$held->query('SELECT 1');
	like($held->{stderr}, qr/was written by a transaction that rolled back/, $label);
	$held->quit;
}
held_fails('held_after_rollback',
	'a pointer held past its rollback fails to read the chunks a later append numbered alike');
is($node->safe_psql('postgres', q{SELECT data = blob(1, 2 * 2676 + 10) FROM sx}), 't',
	'and the row keeps its committed value');

# The same with two appends in the rolled-back subtransaction, the second
# writing only a tail: a slice of the first append's chunks, which the
# later append numbered alike, must fail to read too.
$node->safe_psql('postgres', q{
CREATE FUNCTION held_slice_after_rollback() RETURNS text LANGUAGE plpgsql AS $$
DECLARE v bytea; before text;
BEGIN
	BEGIN
		UPDATE sx SET data = data || blob(2, 4000) WHERE id = 1;
		UPDATE sx SET data = data || blob(4, 10) WHERE id = 1;
		SELECT data INTO v FROM sx WHERE id = 1;
		before := md5(substring(v FROM 2 * 2676 + 1 FOR 2676));
		RAISE EXCEPTION 'roll back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	PERFORM pg_sleep(3);
	UPDATE sx SET data = data || blob(3, 4000) WHERE id = 1;
	RETURN format('changed=%s', before <> md5(substring(v FROM 2 * 2676 + 1 FOR 2676)));
END $$;});
held_fails('held_slice_after_rollback',
	'a slice of a pointer held past its rollback fails to read too');

# the standby replays every kind of change
$node->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $sbcheck), 't|t',
	'and on the standby, which sees the aborted chunks');
check($standby, 'postgres', 'standby', read_only => 1);
is($standby->safe_psql('postgres', $digest), $node->safe_psql('postgres', $digest),
	'the standby reads what the primary reads');

# crash: an uncommitted append is gone, committed ones stay
round($node, 'postgres', 6);
my $crashing = $node->background_psql('postgres', on_error_stop => 0);
$crashing->query_safe('BEGIN');
$crashing->query_safe(q{UPDATE b SET data = data || blob(9, 9000)});
$node->stop('immediate');
$crashing->quit;
$node->start;
check($node, 'postgres', 'after a crash');
round($node, 'postgres', 7);
check($node, 'postgres', 'appends after the crash');

# COPY FREEZE into a table created in the same transaction writes frozen
# chunk rows (all-visible pages); reads and later appends must not care
my $copyfile = $node->basedir . '/b.copy';
$node->safe_psql('postgres', qq{COPY b (id, data) TO '$copyfile'});
$node->safe_psql('postgres', qq{
BEGIN;
CREATE TABLE bf (id int PRIMARY KEY, data bytea);
ALTER TABLE bf ALTER COLUMN data SET (toaster = 'bytea_appendable');
COPY bf FROM '$copyfile' WITH (FREEZE);
COMMIT;
UPDATE bf SET data = data || blob(id, 3000) WHERE id % 2 = 0;
VACUUM (FREEZE) bf;
UPDATE bf SET data = data || blob(id, 700);});
is( $node->safe_psql('postgres', q{
SELECT count(*), count(*) FILTER (WHERE bf.data IS NOT DISTINCT FROM r.data ||
		CASE WHEN id % 2 = 0 THEN blob(id, 3000) ELSE '' END || blob(id, 700)),
	count(*) FILTER (WHERE length(r.data) >= 2676 AND
		(bytea_appendable_storage(bf.data)).form = 'appendable') =
	count(*) FILTER (WHERE length(r.data) >= 2676)
FROM bf JOIN r USING (id)}),
	$node->safe_psql('postgres', 'SELECT count(*), count(*), true FROM r'),
	'COPY FREEZE, appends and VACUUM FREEZE: every value as written, the large ones the toaster\'s');
is( $node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM verify_heapam('bf', check_toast => true)) +
	(SELECT count(*) FROM pg_class c, verify_heapam(c.reltoastrelid) WHERE c.oid = 'bf'::regclass)}),
	'0', 'COPY FREEZE: verify_heapam of the table and of its TOAST relation reports nothing');
$node->safe_psql('postgres', q{
SELECT bt_index_check(i.indexrelid, true) FROM pg_class c, pg_index i
WHERE c.oid = 'bf'::regclass AND i.indrelid = c.reltoastrelid});

# dump and restore: the column keeps its toaster, values and appends work
my $dump = $node->basedir . '/b.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
	'pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ],
	'pg_restore');
is( $node->safe_psql('restored', q{
SELECT attoptions FROM pg_attribute WHERE attrelid = 'b'::regclass AND attname = 'data'}),
	'{toaster=bytea_appendable}', 'the restored column opts in');
check($node, 'restored', 'restored');
round($node, 'restored', 8);
check($node, 'restored', 'appends after the restore');

# wal_level = logical: the toaster leaves values to standard TOAST, and
# logical decoding sees the same changes for b as for r, also after
# values stored by the toaster at wal_level = replica
my $ld = PostgreSQL::Test::Cluster->new('logical');
$ld->init;
$ld->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
});
$ld->start;
$ld->safe_psql('postgres', "CREATE EXTENSION amcheck;\nCREATE EXTENSION jsonb_toaster;\n" . $setup);
round($ld, 'postgres', 1);
isnt($ld->safe_psql('postgres', q{
SELECT count(*) FROM b WHERE pg_column_size(data) > length(data) AND length(data) >= 2676}),
	'0', 'at wal_level = replica the toaster holds values');
my $held_even = $ld->safe_psql('postgres', q{
SELECT count(*) FROM b WHERE id % 2 = 0 AND pg_column_size(data) > length(data)
  AND length(data) >= 2676});
cmp_ok($held_even, '>', 0, 'the toaster holds values of rows whose other column changes');
$ld->append_conf('postgresql.conf', 'wal_level = logical');
$ld->restart;
$ld->safe_psql('postgres',
	q{SELECT pg_create_logical_replication_slot('s', 'test_decoding')});
both($ld, 'postgres', q{UPDATE %t SET other = other + 1 WHERE id % 2 = 0});
both($ld, 'postgres', q{UPDATE %t SET data = data || blob(id, 2500) WHERE id % 3 = 0});
both($ld, 'postgres', q{INSERT INTO %t (id, data) SELECT 900 + g, blob(g, 5000) FROM generate_series(1, 3) g});
both($ld, 'postgres', q{UPDATE %t SET data = data || blob(id, 100) WHERE id > 900});
both($ld, 'postgres', q{DELETE FROM %t WHERE id = 901});
check($ld, 'postgres', 'at wal_level = logical', mixed => 1);
is( $ld->safe_psql('postgres', q{
SELECT count(*) FROM b WHERE pg_column_size(data) > length(data) AND length(data) >= 2676
  AND (id % 2 = 0 OR id % 3 = 0 OR id > 900)}),
	'0', 'at wal_level = logical the values written are standard TOAST');
my $changes = $ld->safe_psql('postgres', q{
SELECT data FROM pg_logical_slot_get_changes('s', NULL, NULL, 'include-xids', '0')});

# both() runs each statement on b, then on r, in transactions of their
# own: the n-th transaction of b's changes matches the n-th of r's, whose
# rows may come in another order
my $data_re = qr/data\[bytea\]:(unchanged-toast-datum|'[^']*')/;
my (@btx, @rtx, @cur);
my $curtab = '';
for my $line (split /\n/, $changes)
{
	if ($line =~ /^table public\.(b|r): (.*)$/)
	{
		$curtab = $1;
		push @cur, $2;
	}
	elsif ($line =~ /^COMMIT/ && @cur)
	{
		my @sorted = sort {
			(my $x = $a) =~ s/$data_re/V/;
			(my $y = $b) =~ s/$data_re/V/;
			$x cmp $y
		} @cur;
		push @{ $curtab eq 'b' ? \@btx : \@rtx }, [@sorted];
		@cur = ();
	}
}
ok(scalar(@btx) >= 5, 'changes of b were decoded');
is(scalar(@btx), scalar(@rtx), 'as many transactions of b as of r');

# A value the toaster stored is stored anew when another column of its row
# changes in a logically logged table, so decoding shows it whole where r
# has an unchanged TOAST value; every other change is the same.
my ($same, $whole_for_unchanged, $other) = (0, 0, 0);
for my $t (0 .. $#rtx)
{
	my @bl = @{ $btx[$t] // [] };
	my @rl = @{ $rtx[$t] };
	$other++ if @bl != @rl;
	for my $i (0 .. $#rl)
	{
		my ($bl, $rl) = ($bl[$i] // '', $rl[$i]);
		if ($bl eq $rl) { $same++; next; }
		(my $bs = $bl) =~ s/$data_re/V/;
		(my $rs = $rl) =~ s/$data_re/V/;
		my ($bv) = $bl =~ $data_re;
		my ($rv) = $rl =~ $data_re;
		if ($bs eq $rs && defined $rv && $rv eq 'unchanged-toast-datum')
		{
			$whole_for_unchanged++;
		}
		else
		{
			$other++;
			diag(substr("b: $bl", 0, 200) . "\n" . substr("r: $rl", 0, 200));
		}
	}
}
is($other, 0, 'test_decoding gives b the changes of r');
ok($same > 10, 'most changes are identical');
is($whole_for_unchanged, $held_even,
	'only values the toaster held show whole for another column\'s update');

$ld->stop;
$standby->stop;
$node->stop;
done_testing();
