# Copyright (c) 2026, jsonb_toaster developers
#
# The lifecycle matrix, operations across clusters and restarts.  The table
# of every storage state (t/JtLifecycle.pm), with its column opted in, with
# its option reset by hand, and in a database without the extension, goes
# through pg_dump and
# pg_restore, a restart without the library preloaded, crash recovery
# (SIGKILL to a backend during a load), a physical standby and its
# promotion, pg_upgrade to a new cluster of the same installation, and
# logical replication to a stock PostgreSQL 15 subscriber; after each,
# the checks of the matrix: every document equals its standard copy,
# amcheck finds nothing, and after VACUUM the TOAST rows are exactly the
# live values' chunks.  Without the library preloaded, DROP EXTENSION must
# still be refused.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use File::Spec;
use Test::More;
use IPC::Run;
use lib dirname(__FILE__);
use JtLifecycle;

my $node = PostgreSQL::Test::Cluster->new('old');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', q{
autovacuum = off
restart_after_crash = on
});
$node->append_conf('preload.conf', "shared_preload_libraries = 'jsonb_toaster'\n");
$node->append_conf('postgresql.conf', "include_if_exists = 'preload.conf'\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE ext; CREATE DATABASE noext');
$node->safe_psql('ext', 'CREATE EXTENSION jsonb_toaster; CREATE EXTENSION amcheck;'
	  . helpers_sql());
$node->safe_psql('noext', 'CREATE EXTENSION amcheck;' . probes_sql()
	  . 'SET search_path = public, jt_probe;' . helpers_sql());
# the table of every state: the column opted in, its option reset by hand,
# and in a database without the extension (where the toaster declines)
my @cases = (
	[ 'opted in', load_case($node, 'ext', 'c', holder => 0) ],
	[ 'option reset by hand', load_case($node, 'ext', 'r', holder => 0, reset => 1) ],
	[
		'no extension',
		load_case($node, 'noext', 'c', holder => 0, probes => 1, declined => 1)
	],
);
foreach my $c (@cases)
{
	BAIL_OUT("setting up every state ($c->[0]): $c->[1]{error}") if $c->[1]{error};
}
my $case = $cases[0][1];
my $pre = $case->{pre};

# the checks on every case, on $n (default the case's node), in the
# databases %$dbs names instead of the case's own
sub check_all
{
	my ($label, $n, $dbs, %o) = @_;
	foreach my $c (@cases)
	{
		my %case = %{ $c->[1] };
		$case{node} = $n if $n;
		$case{db} = $dbs->{ $case{db} } if $dbs && $dbs->{ $case{db} };
		check_case(\%case, "$label ($c->[0])", %o);
	}
}

# new rows and edits of table $t, numbered $k; the same on the reference
sub churn_sql
{
	my ($t, $k) = @_;
	return sprintf(q{
INSERT INTO %1$s (id, state, jb) SELECT i, 'churn', gen_doc(i, 4) FROM generate_series(%2$d, %2$d + 1) i;
UPDATE %1$s SET jb = jsonb_set(jb, '{items,7,h}', to_jsonb('churn %2$d'::text)) WHERE id IN (41, 51, 71, 21);
UPDATE %1$s SET jb = jb || jsonb_build_object('churn', %2$d) WHERE id IN (42, 61, 11, 31);
UPDATE %1$s SET other = other + 1 WHERE id IN (43, 72);
DELETE FROM %1$s WHERE id = %2$d - 9;
}, $t, $k);
}

# the same churn in every case, on $n
my $churn_n = 0;
sub churn
{
	my ($n) = @_;
	my $k = 100 + 10 * $churn_n++;
	foreach my $c (@cases)
	{
		$n->safe_psql($c->[1]{db}, $c->[1]{pre} . churn_sql('m', $k) . churn_sql('m_ref', $k));
	}
}

# pg_dump and pg_restore into other databases of the same cluster
my $dumpdir = $node->basedir;
my %restored = (ext => 'restored', noext => 'restored_noext');
foreach my $db (sort keys %restored)
{
	$node->command_ok(
		[ 'pg_dump', '-Fc', '-f', "$dumpdir/$db.dump", '-d', $node->connstr($db) ],
		"pg_dump -Fc $db");
	$node->safe_psql('postgres', "CREATE DATABASE $restored{$db}");
	$node->command_ok(
		[
			'pg_restore', '--exit-on-error', '-d', $node->connstr($restored{$db}),
			"$dumpdir/$db.dump"
		],
		"pg_restore $db");
}
is( run_sql($node, 'restored', $pre . q{
SELECT count(*) FILTER (WHERE (jsonb_toaster_storage(jb)).form = 'skeleton') > 0 FROM m}),
	't', 'pg_restore: the restored column stores skeletons');
check_all('pg_dump, pg_restore', undef, \%restored);

# a restart without the library: skeletons cannot be read, nor the
# extension dropped; preloaded again, everything is as it was
unlink($node->data_dir . '/preload.conf') or die "cannot remove preload.conf: $!";
$node->restart;
like( run_sql($node, 'ext', $pre . 'SELECT jb FROM m'),
	qr/^ERROR: .*custom toaster with ID \d+ is not loaded/s,
	'not preloaded: reading the skeletons fails with core\'s error');
foreach my $c (@cases)
{
	is( run_sql($node, $c->[1]{db}, $c->[1]{pre} . q{
SELECT jt_diff($$SELECT id, jb FROM m WHERE (jsonb_toaster_storage(jb)).form IS DISTINCT FROM 'skeleton'$$,
	$$SELECT id, jb FROM m_ref WHERE id IN (SELECT id FROM m
		WHERE (jsonb_toaster_storage(jb)).form IS DISTINCT FROM 'skeleton')$$)}),
		'', "not preloaded ($c->[0]): the documents that are not skeletons equal their reference");
}
my $drop = run_sql($node, 'ext', 'DROP EXTENSION jsonb_toaster');
# the guard lives in the library: the extension's event trigger loads it
like($drop, qr/^ERROR: .*jsonb_toaster/s, 'not preloaded: DROP EXTENSION is refused');
like(run_sql($node, 'ext',
		'SET session_replication_role = replica; DROP EXTENSION jsonb_toaster'),
	qr/^ERROR: .*jsonb_toaster/s,
	'not preloaded: DROP EXTENSION is refused in a replica session too');
run_sql($node, 'ext', 'CREATE EXTENSION jsonb_toaster') unless $drop =~ /^ERROR/;
$node->append_conf('preload.conf', "shared_preload_libraries = 'jsonb_toaster'\n");
$node->restart;
check_all('restart without the library, then with it');

# crash recovery: SIGKILL to a backend while two clients load documents
# into the table and its reference in the same transactions
my $script = $node->basedir . '/load.sql';
append_to_file($script, q{
\set i random(1000, 1000000000)
BEGIN;
INSERT INTO m (id, state, jb) VALUES (:i, 'load', gen_doc(:i % 1000, 5)) ON CONFLICT DO NOTHING;
INSERT INTO m_ref (id, state, jb) VALUES (:i, 'load', gen_doc(:i % 1000, 5)) ON CONFLICT DO NOTHING;
UPDATE m SET jb = jsonb_set(jb, '{items,2,h}', to_jsonb(:i)) WHERE id = 52;
UPDATE m_ref SET jb = jsonb_set(jb, '{items,2,h}', to_jsonb(:i)) WHERE id = 52;
COMMIT;
});
{
	local $ENV{PGOPTIONS} = '-c search_path=c,public';
	local $ENV{PGAPPNAME} = 'jt_load';
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			$node->installed_command('pgbench'), '-n', '-c', '2', '-j', '2',
			'-T', '60', '-f', $script, '-h', $node->host, '-p', $node->port, 'ext'
		],
		'>' => \$out,
		'2>' => \$err);
	$node->poll_query_until('ext', q{SELECT count(*) >= 40 FROM c.m WHERE state = 'load'})
	  or die "the load made no progress: $err";
	my $victim = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE application_name = 'jt_load' LIMIT 1});
	my $log_offset = -s $node->logfile;
	kill 'KILL', $victim;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_offset);
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the server did not come back';
	$h->finish;
	ok($node->log_contains(qr/automatic recovery in progress/, $log_offset),
		'crash recovery ran');
}
check_all('crash recovery');

# a physical standby, then its promotion
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
churn($node);
foreach my $c (@cases)
{
	$node->safe_psql($c->[1]{db}, $c->[1]{pre} . 'VACUUM m; VACUUM m_ref;');
}
$node->wait_for_replay_catchup($standby);
check_all('standby', $standby, undef, no_vacuum => 1);
foreach my $c (@cases)
{
	my $q = $c->[1]{pre} . q{SELECT jt_leaks('m')};
	is( run_sql($standby, $c->[1]{db}, $q),
		run_sql($node, $c->[1]{db}, $q),
		"standby ($c->[0]): the TOAST relation holds what the primary's does");
}
$standby->promote;
churn($standby);
check_all('promoted standby', $standby);
$standby->stop;

# pg_upgrade to a new cluster of the same installation
churn($node);
my $new = PostgreSQL::Test::Cluster->new('new');
$new->init;
$new->append_conf('postgresql.conf', q{
autovacuum = off
shared_preload_libraries = 'jsonb_toaster'
});
$node->stop;
my $bindir = $node->config_data('--bindir');
{
	# pg_upgrade writes its reports into the new data directory
	my $cwd = File::Spec->rel2abs('.');
	chdir $new->basedir or die "cannot enter " . $new->basedir . ": $!";
	$new->command_ok(
		[
			'pg_upgrade', '--no-sync',
			'--old-datadir' => $node->data_dir,
			'--new-datadir' => $new->data_dir,
			'--old-bindir' => $bindir,
			'--new-bindir' => $bindir,
			'--socketdir' => $new->host,
			'--old-port' => $node->port,
			'--new-port' => $new->port,
		],
		'pg_upgrade');
	chdir $cwd or die "cannot return to $cwd: $!";
}
$new->start;
check_all('pg_upgrade', $new);
churn($new);
check_all('pg_upgrade, then changes', $new);
$new->stop;

# logical replication to a stock PostgreSQL 15 subscriber
my $pg15 = '/usr/lib/postgresql/15';
SKIP:
{
	skip 'PostgreSQL 15 is not installed', 4 unless -x "$pg15/bin/postgres";
	my $pub = PostgreSQL::Test::Cluster->new('publisher');
	$pub->init(allows_streaming => 'logical');
	$pub->append_conf('postgresql.conf', q{
autovacuum = off
shared_preload_libraries = 'jsonb_toaster'
# large transactions are streamed to the subscriber
logical_decoding_work_mem = 64kB
});
	$pub->start;
	$pub->safe_psql('postgres', 'CREATE DATABASE ext');
	$pub->safe_psql('ext', 'CREATE EXTENSION jsonb_toaster; CREATE EXTENSION amcheck;'
		  . helpers_sql());
	# a logically logged table shares parts and keeps deltas as any other
	my $pcase = load_case($pub, 'ext', 'c', holder => 0);
	BAIL_OUT("setting up every state: $pcase->{error}") if $pcase->{error};

	my $sub = PostgreSQL::Test::Cluster->new('sub15', install_path => $pg15);
	$sub->init;
	$sub->start;
	$sub->safe_psql('postgres', q{
CREATE SCHEMA c;
CREATE TABLE c.m (id int PRIMARY KEY, state text NOT NULL, other int NOT NULL DEFAULT 0, jb jsonb);
});
	$pub->safe_psql('ext', 'CREATE PUBLICATION p FOR TABLE c.m');
	my $connstr = $pub->connstr('ext') =~ s/'/''/gr;
	$sub->safe_psql('postgres',
		"CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p WITH (streaming = on)");
	$sub->wait_for_subscription_sync($pub, 's');
	# what each side holds: every document's text and a few accessors
	my $q = q{SELECT id, other, md5(jb::text), jb -> 'name', jb #> '{items,3}', jb ->> 'k150'
		FROM c.%s ORDER BY id};
	is($sub->safe_psql('postgres', sprintf($q, 'm')), $pub->safe_psql('ext', sprintf($q, 'm_ref')),
		'logical replication to PostgreSQL 15: the initial copy equals the reference');
	$pub->safe_psql('ext', $pre . churn_sql('m', 1000) . churn_sql('m_ref', 1000));
	$pub->safe_psql('ext', q{
SET search_path = c, public;
BEGIN;
UPDATE m SET jb = jsonb_set(jb, '{name}', '"in a long transaction"') WHERE id > 40;
UPDATE m_ref SET jb = jsonb_set(jb, '{name}', '"in a long transaction"') WHERE id > 40;
INSERT INTO m (id, state, jb) SELECT i, 'many', gen_doc(i, 6) FROM generate_series(2000, 2100) i;
INSERT INTO m_ref (id, state, jb) SELECT i, 'many', gen_doc(i, 6) FROM generate_series(2000, 2100) i;
COMMIT;
});
	$pub->wait_for_catchup('s');
	is($sub->safe_psql('postgres', sprintf($q, 'm')), $pub->safe_psql('ext', sprintf($q, 'm_ref')),
		'logical replication to PostgreSQL 15: changes streamed equal the reference');
	check_case($pcase, 'logical replication publisher');
	$sub->stop;
	$pub->stop;
}

foreach my $n ($node, $standby, $new)
{
	ok(!$n->log_contains(qr/TRAP:|PANIC:|terminated by signal 6|corrupt jsonb_toaster value/),
		$n->name . ': no assertion failure, PANIC or corruption in the server log');
}

done_testing();
