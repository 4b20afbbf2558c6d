# Copyright (c) 2026, jsonb_toaster developers
#
# A TOAST value named by two row versions, deleted by a transaction whose
# xid is lower than the one that ended the older version.
#
# Row version V1 (xmax B) and its successor V2 (xmin B, xmax C) name the
# same TOAST value: in any table when B's UPDATE leaves the column alone,
# and, with the toaster, also when B changes the document but keeps its
# parts.  C, which replaces the document, deletes the value: its chunks get
# xmax C.  If C took its xid before B (it began writing earlier but updated
# the row after B committed), a horizon between the two (a transaction D
# with C < D < B still open) makes the chunks DEAD while V1 is only
# RECENTLY_DEAD: VACUUM removes the chunks and keeps V1.  No snapshot can
# see V1 then (any snapshot that saw B in progress saw C in progress too,
# and holds the horizon at or below C).  VACUUM FULL, CLUSTER and CREATE
# INDEX (V1 is not HOT-updated) copy or index RECENTLY_DEAD versions and
# read their values: on stock PostgreSQL they fail with "missing chunk
# number 0"; the series' patch 0010 makes them treat V1 as dead, since its
# successor is.
#
# The test runs the scenario on four tables: a standard jsonb column and an
# opted-in one, each once with B updating another column and once with B
# changing a short field of the document.  It asserts that
#
# - every snapshot that can see a version reads its document whole and
#   equal to the reference, through the accessors too, before and after the
#   rewrites, and nothing is removed while such a snapshot exists;
# - with the horizon between C and B, VACUUM removes the values C deleted,
#   those V1 shares with V2 among them (in the standard column when B left
#   it alone, in the opted-in one in both cases: the parts it shares are
#   the unchanged value's case, widened to UPDATEs of the column); amcheck's
#   verify_heapam (check_toast) reports V1's values as not found, since its
#   snapshot cannot prove V1 dead either; every command succeeds, and
#   afterwards amcheck is clean and the TOAST relations hold exactly the
#   values the live rows name, D still running;
# - once D ends, the rewrites succeed again and all stays clean;
# - with wal_level = logical the same: the opted-in column shares as it
#   does elsewhere (it logs the chunks of the values it shares for logical
#   decoding), though core stores even its unchanged pointer anew.
#
# A rewrite made while an old snapshot exists copies the values of the
# versions it can see as live values, which outlive those versions until
# the next rewrite, for both columns: the test states that too.  And, as a
# rule of the parts' ownership that had no test of its own: a speculative
# insertion that loses the race deletes the parts it wrote; and a part is
# named once per value and by one row, however a document is copied.

use strict;
use warnings FATAL => 'all';
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('xid_order');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
foreach my $module (qw(amcheck pageinspect))
{
	plan skip_all => "contrib module $module is not installed"
	  unless -f $node->config_data('--sharedir') . "/extension/$module.control";
}
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
});
$node->start;

my $gen_doc = slurp_file(dirname(__FILE__) . '/gen_doc.sql');
$node->safe_psql('postgres', qq{
CREATE EXTENSION jsonb_toaster;
CREATE EXTENSION amcheck;
CREATE EXTENSION pageinspect;
$gen_doc
-- the document of table tbl's row id at step ver: 1 inserted, 2 after B, 3
-- after C
CREATE FUNCTION ref_doc(tbl text, i int, ver int) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS \$\$
SELECT CASE WHEN ver = 2 AND tbl LIKE '%_doc'
		THEN jsonb_set(gen_doc(i, 1), '{flag}', '"changed"')
	WHEN ver = 2 THEN gen_doc(i, 1)
	ELSE gen_doc(i, ver) END
\$\$;
-- how many chunks of value v the TOAST relation of tbl holds, visible or
-- not: a deleted value's chunks are hidden from SELECT long before VACUUM
-- removes them
CREATE FUNCTION chunks_of(tbl regclass, v oid) RETURNS bigint LANGUAGE sql AS \$\$
SELECT count(*) FROM pg_class c,
	generate_series(0, pg_relation_size(c.reltoastrelid) / current_setting('block_size')::int - 1) b,
	heap_page_items(get_raw_page(c.reltoastrelid::regclass::text, b::int)) i
WHERE c.oid = tbl AND i.lp_flags = 1
	AND get_byte(i.t_data, 0) + get_byte(i.t_data, 1) * 256 + get_byte(i.t_data, 2) * 65536
		+ get_byte(i.t_data, 3) * 16777216::bigint = v
\$\$;
-- how many values the TOAST relation of tbl holds chunks of, visible or not
CREATE FUNCTION values_present(tbl regclass) RETURNS bigint LANGUAGE sql AS \$\$
SELECT count(DISTINCT get_byte(i.t_data, 0) + get_byte(i.t_data, 1) * 256
		+ get_byte(i.t_data, 2) * 65536 + get_byte(i.t_data, 3) * 16777216::bigint)
FROM pg_class c,
	generate_series(0, pg_relation_size(c.reltoastrelid) / current_setting('block_size')::int - 1) b,
	heap_page_items(get_raw_page(c.reltoastrelid::regclass::text, b::int)) i
WHERE c.oid = tbl AND i.lp_flags = 1
\$\$;
});

my @tables = qw(s_other s_doc t_other t_doc);

# The TOAST values the documents of table $t name, a query (column v):
# those their parts lie in, or their own value.  Not through a function: a function's
# argument may be detoasted on its way in.
sub named
{
	my ($t) = @_;
	return qq{SELECT d.v FROM $t, LATERAL (SELECT value_id FROM jsonb_toaster_values($t.jb)
	UNION ALL SELECT pg_column_toast_chunk_id($t.jb)) d(v) WHERE d.v IS NOT NULL};
}

# The values in $t's TOAST relation that no live row names, and the values
# live rows name that it does not hold: "stray|missing".
sub stray_and_missing
{
	my ($t) = @_;
	my $toast = $node->safe_psql('postgres',
		"SELECT reltoastrelid::regclass FROM pg_class WHERE oid = '$t'::regclass");
	my $named = named($t);
	return $node->safe_psql(
		'postgres', qq{
WITH named AS ($named), held AS (SELECT DISTINCT chunk_id FROM $toast)
SELECT (SELECT count(*) FROM held WHERE chunk_id NOT IN (SELECT v FROM named))
	|| '|' || (SELECT count(*) FROM named WHERE v NOT IN (SELECT chunk_id FROM held))});
}

# Four tables of three rows each, at step 1; the opted-in ones as
# skeletons with parts, the standard ones as external values.
sub setup
{
	my $sql = "DROP TABLE IF EXISTS " . join(', ', @tables) . ";\n";
	foreach my $t (@tables)
	{
		$sql .= qq{
CREATE TABLE $t (id int PRIMARY KEY, n int, jb jsonb);
CREATE INDEX ${t}_n ON $t (n);
};
		# standard TOAST would keep these documents in the row, compressed
		$sql .=
		  $t =~ /^t_/
		  ? "ALTER TABLE $t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');\n"
		  : "ALTER TABLE $t ALTER COLUMN jb SET STORAGE EXTERNAL;\n";
		$sql .= "INSERT INTO $t SELECT g, g, gen_doc(g, 1) FROM generate_series(1, 3) g;\n";
	}
	$node->safe_psql('postgres', $sql);
	foreach my $t (@tables)
	{
		my $form = $t =~ /^t_/ ? 'skeleton' : 'external';
		is( $node->safe_psql(
				'postgres', qq{
SELECT count(*) FROM $t WHERE (jsonb_toaster_storage(jb)).form = '$form'}),
			'3', "$t: stored as $form");
	}
}

# The check of every document of the tables seen by a query: whole,
# through the accessors (parts and fields kept in the row), at step $ver.
sub docs_query
{
	my ($t, $ver) = @_;
	return qq{
SELECT count(*) FILTER (WHERE jb = r AND jb::text = r::text
		AND jb->>'text' = r->>'text' AND jb #> '{items,3}' = r #> '{items,3}'
		AND jb->'map' = r->'map' AND jb #>> '{nested,a,b}' = r #>> '{nested,a,b}'
		AND jb->>'name' = r->>'name' AND jb->>'flag' = r->>'flag')
	|| '/' || count(*)
FROM (SELECT jb, ref_doc('$t', id, $ver) AS r FROM $t) s};
}

sub docs_ok
{
	my ($label, $ver, $session) = @_;
	foreach my $t (@tables)
	{
		my $q = docs_query($t, $ver);
		my $got =
		  defined $session
		  ? $session->query_safe($q)
		  : $node->safe_psql('postgres', $q);
		is($got, '3/3', "$label: $t reads step $ver");
	}
}

sub xid_of
{
	my ($session) = @_;
	return $session->query_safe('SELECT txid_current()');
}

# B: a single transaction that updates every row of the four tables, never
# HOT (n is indexed); in the *_doc tables it also changes a short field.
sub run_b
{
	my $out = $node->safe_psql(
		'postgres', q{
BEGIN;
SELECT txid_current();
UPDATE s_other SET n = n + 10;
UPDATE t_other SET n = n + 10;
UPDATE s_doc SET n = n + 10, jb = jsonb_set(jb, '{flag}', '"changed"');
UPDATE t_doc SET n = n + 10, jb = jsonb_set(jb, '{flag}', '"changed"');
COMMIT;
});
	return $out;
}

# Values named by the step-1 versions, before B.
sub record_v1_values
{
	$node->safe_psql(
		'postgres', qq{
DROP TABLE IF EXISTS v1_values;
CREATE TABLE v1_values AS
} . join(
			"\nUNION ALL\n",
			map {
				"SELECT '$_'::regclass AS tbl, v AS value_id FROM (" . named($_) . ") n"
			} @tables));
}

# Of the values the step-1 versions named, those no current row names:
# chunks still held, values.
sub v1_only_chunks
{
	my ($t) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT coalesce(sum(chunks_of(tbl, value_id)), 0) || '/' || count(*)
FROM v1_values WHERE tbl = '$t'::regclass
	AND value_id NOT IN (} . named($t) . ')');
}

# Run a command as its own session; '' on success, else the error.
sub try_sql
{
	my ($sql) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	return $ret == 0 ? '' : $stderr;
}

# The commands that copy or index RECENTLY_DEAD versions.  The standard
# tables build their indexes with the builtin accessors, as stock does.
sub commands
{
	my ($t) = @_;
	my $off =
	  $t =~ /^s_/ ? 'SET jsonb_toaster.override_builtins = off; ' : '';
	return (
		[
			'CREATE INDEX on a field in a part',
			"${off}CREATE INDEX ${t}_text ON $t (md5(jb->>'text'))"
		],
		[
			'CREATE INDEX on a field in the row',
			"${off}CREATE INDEX ${t}_name ON $t ((jb->>'name'))"
		],
		[ 'VACUUM FULL', "VACUUM FULL $t" ],
		[ 'CLUSTER', "CLUSTER $t USING ${t}_pkey" ]);
}

sub clean_ok
{
	my ($label) = @_;
	foreach my $t (@tables)
	{
		is( $node->safe_psql(
				'postgres', qq{
SELECT count(*) FROM verify_heapam('$t', check_toast => true)}),
			'0', "$label: $t: verify_heapam finds nothing");
		is( $node->safe_psql(
				'postgres', qq{
SELECT count(*) FROM (SELECT bt_index_check(indexrelid::regclass, true)
	FROM pg_index WHERE indrelid = '$t'::regclass) s}),
			$node->safe_psql('postgres',
				"SELECT count(*) FROM pg_index WHERE indrelid = '$t'::regclass"),
			"$label: $t: bt_index_check finds nothing in any index");
		is(stray_and_missing($t), '0|0',
			"$label: $t: TOAST holds exactly the values live rows name");
	}
}

#
# 1. Snapshots that can see the old versions: nothing they read is removed,
# the rewrites keep every version, and the snapshots read them all.
#
setup();
record_v1_values();
{
	my $c = $node->background_psql('postgres');
	my $r1 = $node->background_psql('postgres');
	my $r2 = $node->background_psql('postgres');

	$c->query_safe('BEGIN');
	my $xid_c = xid_of($c);
	# a snapshot before B: it sees step 1; it touches no table of the test,
	# so that the rewrites need not wait for it
	$r1->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$r1->query_safe('SELECT count(*) FROM pg_class');
	my $xid_b = run_b();
	# a snapshot between B and C: step 2
	$r2->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$r2->query_safe('SELECT count(*) FROM pg_class');
	cmp_ok($xid_c, '<', $xid_b, 'C took its xid before B');
	$c->query_safe(
		join('', map { "UPDATE $_ SET jb = gen_doc(id, 3);\n" } @tables)
		  . 'COMMIT;');
	$c->quit;

	$node->safe_psql('postgres', 'VACUUM ' . join(', ', @tables));
	foreach my $t (qw(s_other t_other t_doc))
	{
		like(v1_only_chunks($t), qr/^[1-9]\d*\/[1-9]\d*$/,
			"old snapshots: VACUUM keeps the values of ${t}'s old versions");
	}
	foreach my $t (@tables)
	{
		foreach my $cmd (commands($t))
		{
			is(try_sql($cmd->[1]), '', "old snapshots: $t: $cmd->[0] succeeds");
		}
	}
	docs_ok('old snapshots, current', 3);
	docs_ok('old snapshots, snapshot before B', 1, $r1);
	docs_ok('old snapshots, snapshot between B and C', 2, $r2);
	$r1->query_safe('COMMIT');
	$r2->query_safe('COMMIT');
	$r1->quit;
	$r2->quit;
	# The rewrites copied the values of the old versions as live values:
	# they outlive those versions, until the next rewrite (standard TOAST
	# alike)
	$node->safe_psql('postgres', 'VACUUM ' . join(', ', @tables));
	foreach my $t (@tables)
	{
		like(stray_and_missing($t), qr/^[1-9]\d*\|0$/,
			"old snapshots, afterwards: $t: values of the old versions copied by the rewrites are left");
	}
	$node->safe_psql('postgres', join('', map { "VACUUM FULL $_;\n" } @tables));
	docs_ok('old snapshots, after another rewrite', 3);
	clean_ok('old snapshots, after another rewrite');
}

#
# 2. The horizon between C and B, with no snapshot that can see V1: VACUUM
# removes what C deleted and keeps V1.  $label names the run; $shares says
# which tables' B shares values with V1.
#
sub horizon_between
{
	my ($label, $shares) = @_;

	setup();
	record_v1_values();
	my $c = $node->background_psql('postgres');
	my $d = $node->background_psql('postgres');

	$c->query_safe('BEGIN');
	my $xid_c = xid_of($c);
	# D: an xid between C's and B's, no snapshot once its statement ends
	$d->query_safe('BEGIN');
	my $xid_d = xid_of($d);
	my $xid_b = run_b();
	ok($xid_c < $xid_d && $xid_d < $xid_b, "$label: xids in the order C < D < B");

	foreach my $t (@tables)
	{
		my $shared = $node->safe_psql(
			'postgres', qq{
SELECT bool_and(v IN (SELECT value_id FROM v1_values WHERE tbl = '$t'::regclass))
FROM (} . named($t) . ') n');
		is($shared, $shares->{$t} ? 't' : 'f',
			"$label: B's new versions of $t "
			  . ($shares->{$t} ? 'share the old values' : 'share nothing'));
	}

	$c->query_safe(
		join('', map { "UPDATE $_ SET jb = gen_doc(id, 3);\n" } @tables)
		  . 'COMMIT;');
	$c->quit;

	$node->safe_psql('postgres', 'VACUUM ' . join(', ', @tables));
	foreach my $t (@tables)
	{
		# what C deleted goes; what B deleted (V1 owned it alone) stays
		like(v1_only_chunks($t),
			$shares->{$t} ? qr/^0\/[1-9]\d*$/ : qr/^[1-9]\d*\/[1-9]\d*$/,
			"$label: VACUUM "
			  . ($shares->{$t} ? 'removed' : 'kept')
			  . " the values of ${t}'s V1");
	}

	# amcheck checks the values of versions its snapshot cannot prove dead
	foreach my $t (@tables)
	{
		like(
			$node->safe_psql(
				'postgres', qq{
SELECT count(*) || '/' || count(*) FILTER (WHERE msg ~ '^toast value \\d+ not found in toast table\$')
FROM verify_heapam('$t', check_toast => true)}),
			$shares->{$t} ? qr/^([1-9]\d*)\/\1$/ : qr/^0\/0$/,
			"$label: $t: verify_heapam "
			  . ($shares->{$t} ? "reports V1's values missing" : 'finds nothing'));
	}

	# V1 is dead in fact (its successor is), and the series' patch 0010
	# makes the commands treat it so: the index builds leave it out, the
	# rewrites drop it, with the values only it named
	foreach my $t (@tables)
	{
		foreach my $cmd (commands($t))
		{
			is(try_sql($cmd->[1]), '', "$label: $t: $cmd->[0] succeeds");
		}
	}
	docs_ok("$label, current", 3);
	is($d->query_safe(docs_query('t_doc', 3)), '3/3', "$label: D reads step 3");
	clean_ok("$label, rewritten while D runs");

	$d->query_safe('COMMIT');
	$d->quit;
	foreach my $t (@tables)
	{
		foreach my $cmd (grep { $_->[0] !~ /INDEX/ } commands($t))
		{
			is(try_sql($cmd->[1]), '',
				"$label, once D ended: $t: $cmd->[0] succeeds");
		}
	}
	docs_ok("$label, once D ended", 3);
	$node->safe_psql('postgres', 'VACUUM ' . join(', ', @tables));
	clean_ok("$label, once D ended");
}

horizon_between('horizon between C and B',
	{ s_other => 1, s_doc => 0, t_other => 1, t_doc => 1 });

#
# 3. A speculative insertion that loses the race deletes the parts it
# wrote (is_speculative): they are dead at once, and VACUUM removes them.
# Both sessions pass the pre-check, write their row and its parts, then
# wait (in the unique index's expression, at its second call) until the
# lock is released; one of them then finds the other's key and aborts its
# insertion.
#
$node->safe_psql(
	'postgres', q{
CREATE TABLE spec (k int, jb jsonb);
ALTER TABLE spec ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE FUNCTION spec_key(k int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	calls int := coalesce(nullif(current_setting('spec.calls', true), ''), '0')::int + 1;
BEGIN
	PERFORM set_config('spec.calls', calls::text, false);
	IF calls = 2 THEN
		PERFORM pg_advisory_lock_shared(1);
		PERFORM pg_advisory_unlock_shared(1);
	END IF;
	RETURN k;
END $$;
CREATE UNIQUE INDEX spec_k ON spec (spec_key(k));
});
{
	my $ctl = $node->background_psql('postgres');
	my @ins = map { $node->background_psql('postgres') } (1, 2);

	$ctl->query_safe('SELECT pg_advisory_lock(1)');
	foreach my $i (1, 2)
	{
		$ins[ $i - 1 ]->query_until(
			qr/inserting/, qq{\\echo inserting
INSERT INTO spec VALUES (1, gen_doc(1, $i)) ON CONFLICT DO NOTHING;
});
	}
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 2 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted})
	  or die 'the insertions did not reach the index';
	is($node->safe_psql('postgres', 'SELECT values_present(\'spec\') > 0'),
		't', 'speculative insertions: both wrote their parts');
	my $written = $node->safe_psql('postgres', "SELECT values_present('spec')");
	$ctl->query_safe('SELECT pg_advisory_unlock(1)');
	$_->query_safe('SELECT 1') foreach @ins;
	$_->quit foreach (@ins, $ctl);

	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) || '/' || count(*) FILTER (WHERE jb = gen_doc(1, 1) OR jb = gen_doc(1, 2))
FROM spec}),
		'1/1',
		'speculative insertions: one row, whole');
	my $kept = $node->safe_psql('postgres',
		'SELECT count(*) FROM (' . named('spec') . ') n');
	cmp_ok($kept, '<', $written,
		'speculative insertions: the loser had written parts too');
	is(stray_and_missing('spec'), '0|0',
		'speculative insertions: none of the loser\'s parts is visible');
	$node->safe_psql('postgres', 'VACUUM spec');
	is($node->safe_psql('postgres', "SELECT values_present('spec')"),
		$kept, 'speculative insertions: VACUUM leaves the winner\'s parts alone');
}

#
# 4. A part is named once per value, by one row: a container of a stored
# document set elsewhere in it, or in another row, gets parts of its own,
# whichever way the new value is made.
#
$node->safe_psql(
	'postgres', q{
CREATE TABLE dup (id int PRIMARY KEY, jb jsonb);
ALTER TABLE dup ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO dup SELECT g, gen_doc(g, 1) FROM generate_series(1, 2) g;
INSERT INTO dup VALUES (4, gen_doc(4, 1));
UPDATE dup SET jb = jsonb_set(jb, '{copy}', jb->'items') WHERE id = 1;
UPDATE dup SET jb = jb || jsonb_build_object('c2', jb->'map', 'c3', jb->'map') WHERE id = 1;
INSERT INTO dup SELECT 3, jb FROM dup WHERE id = 2;
UPDATE dup SET jb = jsonb_set(jb, '{c4}', (SELECT jb->'map' FROM dup WHERE id = 2)) WHERE id = 4;
INSERT INTO dup SELECT 5, jb || '{"c5": 1}' FROM dup WHERE id = 2;
});
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT count(*) FROM (SELECT p.value_id, p.value_offset FROM dup, jsonb_toaster_parts(jb) p
		GROUP BY 1, 2 HAVING count(*) > 1) d) +
	(SELECT count(*) FROM (SELECT v.value_id FROM dup, jsonb_toaster_values(jb) v
		GROUP BY 1 HAVING count(*) > 1) d)}),
	'0',
	'copies: no part is named twice, by one value or by two rows, and no TOAST value by two rows');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE jb = CASE id
	WHEN 1 THEN gen_doc(1, 1) || jsonb_build_object('copy', gen_doc(1, 1)->'items',
		'c2', gen_doc(1, 1)->'map', 'c3', gen_doc(1, 1)->'map')
	WHEN 4 THEN jsonb_set(gen_doc(4, 1), '{c4}', gen_doc(2, 1)->'map')
	WHEN 5 THEN gen_doc(2, 1) || '{"c5": 1}'
	ELSE gen_doc(2, 1) END)
FROM dup}),
	'5',
	'copies: every document as made');
$node->safe_psql('postgres', 'DELETE FROM dup WHERE id <> 3; VACUUM dup');
is($node->safe_psql('postgres', q{SELECT count(*) FROM dup WHERE jb = gen_doc(2, 1)}),
	'1', 'copies: deleting the others leaves the copy whole');
is(stray_and_missing('dup'), '0|0', 'copies: TOAST holds exactly the copy\'s values');

# With wal_level = logical, core stores an unchanged custom pointer anew
# (offering the value to the toaster again) and calls no adopt; the
# toaster still shares V1's parts through its general path, logging their
# chunks for logical decoding: the same as above.
$node->append_conf('postgresql.conf', "wal_level = logical\n");
$node->restart;
horizon_between('wal_level = logical',
	{ s_other => 1, s_doc => 0, t_other => 1, t_doc => 1 });

$node->stop;
done_testing();
