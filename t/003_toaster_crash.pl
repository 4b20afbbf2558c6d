# Copyright (c) 2026, jsonb_toaster developers
#
# Crash recovery of toaster columns.  Two clients load skeleton documents
# (inserts, rewrites, edits through the accessors, updates of another
# column, deletes) while a third session holds an uncommitted transaction
# that rewrites and deletes documents the load does not touch.  The server
# is killed with SIGKILL twice: once a backend (the postmaster then restarts
# every process and recovers), once the postmaster and all its children at
# the same moment.  After each restart every document must equal the one
# generated again from its key, every acknowledged document must still be
# there, the uncommitted changes must be gone, amcheck must find nothing
# wrong, and after VACUUM the TOAST relation must hold exactly the chunks of
# the live values' parts.  The server runs with wal_level = logical, so
# that recovery also replays the toaster's own WAL records (the chunks of
# shared parts it logs for logical decoding); t/010 crashes a server at
# wal_level = replica.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

# the test document of a key and version, shared with other TAP tests
my $gen_doc = slurp_file(dirname(__FILE__) . '/gen_doc.sql');

my $node = PostgreSQL::Test::Cluster->new('crash');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
wal_level = logical
restart_after_crash = on
autovacuum = off
# many parts per document, wide containers cut into several ranges (units
# of two ranges, so that containers longer than that are cut)
jsonb_toaster.range_size = 1024
jsonb_toaster.unit_size = 2048
});
$node->start;

# gen_doc(id, ver): the document of a key, 8 to 13 kB of text; at the
# default inline budget its short fields stay in the skeleton and "items",
# "map" and "text" leave it, the containers in 1 kB ranges.  A document
# edited in place carries an "edits" counter on top.
$node->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE EXTENSION amcheck;
} . $gen_doc . q{CREATE FUNCTION expected_doc(i int, v int, e int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN e = 0 THEN gen_doc(i, v) ELSE gen_doc(i, v) || jsonb_build_object('edits', e) END
$$;
CREATE SEQUENCE doc_ids;
CREATE TABLE docs (id int PRIMARY KEY, ver int NOT NULL DEFAULT 0,
	edits int NOT NULL DEFAULT 0, other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE docs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO docs (id, jb)
	SELECT n, gen_doc(n, 0) FROM (SELECT nextval('doc_ids')::int AS n FROM generate_series(1, 50)) s;
-- documents the load never touches; an uncommitted transaction changes them
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(1000001, 1000030) i;
});

my $toastrel = $node->safe_psql('postgres',
	q{SELECT reltoastrelid::regclass FROM pg_class WHERE relname = 'docs'});

# The load: odd keys are never deleted, so every odd key a reader has seen
# committed must survive the crash.  Keys are drawn among those issued.
my $script = $node->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
\set r random(1, 100)
\if :r <= 40
INSERT INTO docs (id, jb) SELECT n, gen_doc(n, 0) FROM (SELECT nextval('doc_ids')::int AS n) s;
\elif :r <= 60
BEGIN;
UPDATE docs SET ver = ver + 1, edits = 0, jb = gen_doc(id, ver + 1)
	WHERE id = (SELECT 1 + floor(random() * last_value)::int FROM doc_ids);
INSERT INTO docs (id, jb) SELECT n, gen_doc(n, 0) FROM (SELECT nextval('doc_ids')::int AS n) s;
COMMIT;
\elif :r <= 75
UPDATE docs SET edits = edits + 1,
	jb = jsonb_set(jb, '{edits}', to_jsonb(edits + 1)) || jsonb_build_object('name', jb -> 'name')
	WHERE id = (SELECT 1 + floor(random() * last_value)::int FROM doc_ids);
\elif :r <= 90
UPDATE docs SET other = other + 1
	WHERE id = (SELECT 1 + floor(random() * last_value)::int FROM doc_ids);
\else
DELETE FROM docs WHERE id = (SELECT 2 * (1 + floor(random() * last_value / 2)::int) FROM doc_ids);
\endif
});

# Start the load and an uncommitted transaction, wait until the load has
# made progress, and return what must survive: the odd keys seen committed.
sub start_load
{
	my ($target) = @_;
	my ($out, $err) = ('', '');
	local $ENV{PGAPPNAME} = 'jt_load';
	my $h = IPC::Run::start(
		[
			$node->installed_command('pgbench'), '-n', '-c', '2', '-j', '2',
			'-T', '120', '-f', $script, '-h', $node->host, '-p', $node->port,
			'postgres'
		],
		'>' => \$out,
		'2>' => \$err);

	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_safe(q{
BEGIN;
UPDATE docs SET ver = 7, jb = gen_doc(id, 7) WHERE id BETWEEN 1000001 AND 1000010;
DELETE FROM docs WHERE id BETWEEN 1000011 AND 1000020;
INSERT INTO docs (id, jb) SELECT i, gen_doc(i, 0) FROM generate_series(2000001, 2000020) i;
});

	$node->poll_query_until('postgres',
		"SELECT last_value >= $target FROM doc_ids")
	  or die "the load made no progress: $err";
	$node->safe_psql('postgres', 'CHECKPOINT');
	# some more work after the checkpoint, so that recovery replays it
	my $now = $node->safe_psql('postgres', 'SELECT last_value FROM doc_ids');
	$node->poll_query_until('postgres',
		"SELECT last_value >= $now + 50 FROM doc_ids")
	  or die "the load made no progress: $err";
	my $seen = $node->safe_psql('postgres',
		q{SELECT coalesce(string_agg(id::text, ',' ORDER BY id), '') FROM docs
		  WHERE id % 2 = 1 AND id < 1000000});
	return ($h, $bg, $seen, \$err);
}

sub end_load
{
	my ($h, $bg, $err) = @_;
	# the clients lose their connections; pgbench stops by itself
	$h->finish;
	like($$err, qr/perhaps the backend died|server closed the connection|terminating connection/,
		'the load was interrupted by the crash');
	# psql has lost its server too; its exit status does not matter
	eval { $bg->quit; };
}

sub toast_rows
{
	return $node->safe_psql('postgres', "SELECT count(*) FROM $toastrel");
}

sub live_chunks
{
	return $node->safe_psql('postgres',
		'SELECT sum(v.chunks) FROM docs, jsonb_toaster_values(jb) v');
}

sub verify
{
	my ($round, $seen) = @_;

	my $rows = $node->safe_psql('postgres',
		'SELECT count(*) FROM docs WHERE id < 1000000');
	cmp_ok($rows, '>', 100, "$round: the load committed documents");

	# every document is the one its key and version give, whole and through
	# the accessors (which read the skeleton and parts directly)
	my $bad = $node->safe_psql('postgres', q{
SELECT string_agg(id::text, ',')
FROM docs, LATERAL (SELECT expected_doc(id, ver, edits) AS e OFFSET 0) x
WHERE md5(jb::text) <> md5(e::text)
   OR jb <> e
   OR (jb ->> 'name') IS DISTINCT FROM (e ->> 'name')
   OR (jb -> 'map' ->> 'k7') IS DISTINCT FROM (e -> 'map' ->> 'k7')
   OR (jb #> '{items,33}') IS DISTINCT FROM (e #> '{items,33}')
   OR (jb #>> '{nested,a,b}') IS DISTINCT FROM (e #>> '{nested,a,b}')
   OR (jb ? 'edits') IS DISTINCT FROM (e ? 'edits')
   OR (jb -> 'text') IS DISTINCT FROM (e -> 'text')});
	is($bad, '', "$round: every document equals the generated one");

	is($node->safe_psql('postgres', q{
SELECT count(*) FROM docs, jsonb_toaster_storage(jb) s WHERE s.form <> 'skeleton'}),
		'0', "$round: every document is stored as a skeleton");
	is($node->safe_psql('postgres', q{
SELECT min(parts) >= 4 AND bool_and(ranged) FROM (
	SELECT id, count(*) AS parts, count(*) > count(DISTINCT path) AS ranged
	FROM docs, jsonb_toaster_parts(jb) GROUP BY id) p}),
		't', "$round: every document has several parts, some cut into ranges");

	# nothing the load acknowledged is lost
	my $missing = $node->safe_psql('postgres', qq{
SELECT count(*) FROM unnest('{$seen}'::int[]) k WHERE NOT EXISTS (SELECT 1 FROM docs WHERE id = k)});
	is($missing, '0', "$round: every committed odd key survived");

	# the uncommitted transaction left no trace
	is($node->safe_psql('postgres', q{
SELECT count(*), sum(ver) FROM docs WHERE id > 1000000}),
		'30|0', "$round: the uncommitted changes are gone");

	my $corrupt = $node->safe_psql('postgres', q{
SELECT string_agg(format('%s/%s/%s: %s', blkno, offnum, attnum, msg), E'\n')
FROM verify_heapam('docs', check_toast => true)});
	is($corrupt, '', "$round: verify_heapam with check_toast finds nothing");
	$corrupt = $node->safe_psql('postgres', qq{
SELECT string_agg(msg, E'\\n') FROM verify_heapam('$toastrel')});
	is($corrupt, '', "$round: verify_heapam of the TOAST relation finds nothing");
	$node->safe_psql('postgres', qq{
SELECT bt_index_check('docs_pkey', true);
SELECT bt_index_check(indexrelid, true) FROM pg_index WHERE indrelid = '$toastrel'::regclass;
});
	pass("$round: the primary key and the TOAST index are consistent");

	# dead row versions and the parts of aborted transactions go with VACUUM;
	# what stays is what the live values refer to
	$node->safe_psql('postgres', 'VACUUM docs');
	is(toast_rows(), live_chunks(),
		"$round: after VACUUM the TOAST relation holds exactly the live parts");
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE (jsonb_toaster_storage(jb)).chunks <>
	(SELECT sum(chunks) FROM jsonb_toaster_values(jb))}),
		'0', "$round: storage and parts agree on the chunks of every value");
}

# Round 1: SIGKILL to a backend of the load; the postmaster terminates every
# other process and recovers.
my ($h, $bg, $seen, $err) = start_load(300);
my $victim = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE application_name = 'jt_load' LIMIT 1});
ok($victim =~ /^\d+$/, 'found a backend of the load');
my $log_offset = -s $node->logfile;
kill 'KILL', $victim;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the server did not come back';
ok( $node->log_contains(qr/database system was not properly shut down; automatic recovery in progress/,
		$log_offset),
	'round 1: crash recovery ran');
end_load($h, $bg, $err);
verify('round 1', $seen);

# Round 2: SIGKILL to the postmaster and every child at once.  The postmaster
# is stopped first so that it forks nothing in between.
($h, $bg, $seen, $err) = start_load(
	$node->safe_psql('postgres', 'SELECT last_value FROM doc_ids') + 300);
my $postmaster = $node->{_pid};
kill 'STOP', $postmaster;
my @children;
opendir(my $proc, '/proc') or die "cannot read /proc: $!";
foreach my $pid (grep { /^\d+$/ } readdir($proc))
{
	open(my $fh, '<', "/proc/$pid/stat") or next;
	my $stat = <$fh>;
	close($fh);
	push @children, $pid if $stat =~ /\) \S+ (\d+) / && $1 == $postmaster;
}
closedir($proc);
cmp_ok(scalar(@children), '>=', 5, 'found the processes of the server');
kill 'KILL', @children;
$node->kill9;
# Wait until they are gone.  A zombie holds no shared memory, but a zombie
# postmaster still owns its lock file: if the init process of a container
# does not reap it, remove the file, as an administrator would.
sub proc_state
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or return '';
	my $stat = <$fh>;
	close($fh);
	return $stat =~ /\) (\S+) / ? $1 : '';
}
foreach my $pid (@children, $postmaster)
{
	for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
	{
		my $state = proc_state($pid);
		last if $state eq '' || ($state eq 'Z' && ($pid != $postmaster || $i >= 50));
		usleep(100_000);
	}
}
unlink($node->data_dir . '/postmaster.pid') if proc_state($postmaster) eq 'Z';
$log_offset = -s $node->logfile;
$node->start;
ok( $node->log_contains(qr/database system was interrupted; last known up at|database system was not properly shut down/,
		$log_offset),
	'round 2: crash recovery ran');
end_load($h, $bg, $err);
verify('round 2', $seen);

# The recovered cluster keeps working: rewrite every document once more.
$node->safe_psql('postgres', q{
UPDATE docs SET ver = ver + 1, edits = 0, jb = gen_doc(id, ver + 1);
VACUUM docs;
});
is( $node->safe_psql('postgres', q{
SELECT count(*) FROM docs WHERE md5(jb::text) <> md5(gen_doc(id, ver)::text)}),
	'0', 'documents rewritten after recovery are intact');
is(toast_rows(), live_chunks(),
	'and the TOAST relation holds exactly their parts');

ok(!$node->log_contains(qr/TRAP:|PANIC:|corrupt jsonb_toaster value/),
	'no assertion failure, PANIC or corruption in the server log');

$node->stop;
done_testing();
