# Copyright (c) 2026, jsonb_toaster developers
#
# Loading the library: preloaded or on demand, with its setting prefix
# reserved either way.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# 1. Preloaded.  A misspelled setting in postgresql.conf is reported and
# removed at startup, and cannot be set at run time.
my $node = PostgreSQL::Test::Cluster->new('preloaded');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'jsonb_toaster'
jsonb_toaster.no_such_setting = 1
});
$node->start;

ok( $node->log_contains(
		qr/invalid configuration parameter name "jsonb_toaster\.no_such_setting", removing it/),
	'unknown setting under the reserved prefix is removed at startup');

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SET jsonb_toaster.no_such_setting = 1');
isnt($ret, 0, 'setting an unknown jsonb_toaster.* parameter fails');
like($stderr, qr/"jsonb_toaster" is a reserved prefix/,
	'the error names the reserved prefix');

$node->safe_psql('postgres', q{
CREATE EXTENSION jsonb_toaster;
CREATE TABLE t (jb jsonb);
INSERT INTO t SELECT jsonb_build_object('pad', repeat('x', 100000),
  'hex', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i));
});
is( $node->safe_psql(
		'postgres', 'SELECT form, compression FROM t, jsonb_toaster_storage(jb)'),
	'external|pglz',
	'a large value is described as external, pglz-compressed');

# The description survives a restart unchanged (it is read from the pointer).
my $before = $node->safe_psql('postgres',
	'SELECT s.* FROM t, jsonb_toaster_storage(jb) s');
$node->restart;
is($node->safe_psql('postgres', 'SELECT s.* FROM t, jsonb_toaster_storage(jb) s'),
	$before, 'same description after restart');
$node->stop;

# 2. Not preloaded: CREATE EXTENSION loads the library on first use.
my $plain = PostgreSQL::Test::Cluster->new('not_preloaded');
$plain->init;
$plain->start;
is( $plain->safe_psql(
		'postgres', q{
CREATE EXTENSION jsonb_toaster;
SELECT form FROM jsonb_toaster_storage('[1, 2, 3]');
}),
	'plain',
	'functions work without shared_preload_libraries');
($ret, $stdout, $stderr) = $plain->psql('postgres', q{
LOAD 'jsonb_toaster';
SET jsonb_toaster.no_such_setting = 1;
});
like($stderr, qr/"jsonb_toaster" is a reserved prefix/,
	'the prefix is reserved once the library is loaded on demand');
$plain->stop;

done_testing();
