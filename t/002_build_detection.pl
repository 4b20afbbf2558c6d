# Copyright (c) 2026, jsonb_toaster developers
#
# The build detects whether the server has the custom TOAST hooks of
# patches/postgresql-18, and says so.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

# What the server's headers offer, found independently of the Makefile
my $includedir = $node->config_data('--includedir-server');
my $has_hooks = -f "$includedir/access/toast_custom.h" ? 't' : 'f';

$node->safe_psql('postgres', 'CREATE EXTENSION jsonb_toaster');
is($node->safe_psql('postgres', 'SELECT jsonb_toaster_custom_toast()'),
	$has_hooks,
	'the library reports the hooks as the server headers have them');

# The test suite runs against the patched server: the hooks must be found
# there, or the toaster would silently be left out of the build.
if ($ENV{JT_EXPECT_CUSTOM_TOAST})
{
	is($has_hooks, 't', 'the server under test has the hooks');
}

$node->stop;
done_testing();
