# Copyright (c) 2026, jsonb_toaster developers
#
# The lifecycle matrix, operations within one cluster.  Each operation runs
# on a table that holds every storage state at once (t/JtLifecycle.pm:
# values written before the column opted in, plain, compressed and
# external; skeletons with parts, ranges and deltas; skeletons whose parts
# older row versions share, kept visible by an older snapshot), in four
# settings: the column opted in; its option reset by hand; a database
# where the extension is not installed; a session with the builtin
# overrides off.  After each: every document equals its standard copy,
# amcheck finds nothing, the older snapshot reads what it read before, and
# after VACUUM the TOAST rows are exactly the live values' chunks.  Then the
# operations that process every row run on a larger table, with and
# without the toaster: the backend's private memory must not grow with the
# number of rows more than it does for standard jsonb.

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use File::Basename qw(dirname);
use Test::More;
use lib dirname(__FILE__);
use JtLifecycle;

my $node = PostgreSQL::Test::Cluster->new('lifecycle');
plan skip_all => 'the server lacks the custom TOAST hooks of patches/postgresql-18'
  unless -f $node->config_data('--includedir-server') . '/access/toast_custom.h';
plan skip_all => 'contrib module amcheck is not installed'
  unless -f $node->config_data('--sharedir') . '/extension/amcheck.control';
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'jsonb_toaster'
autovacuum = off
fsync = off
# bulk operations' memory, so that what a backend keeps per row shows
shared_buffers = 16MB
maintenance_work_mem = 1MB
work_mem = 64kB
});
$node->start;

my $dir = $node->basedir;
$node->safe_psql('postgres', 'CREATE DATABASE ext; CREATE DATABASE noext');
foreach my $db (qw(ext noext))
{
	$node->safe_psql($db,
		'CREATE ACCESS METHOD heap2 TYPE TABLE HANDLER heap_tableam_handler');
}
$node->safe_psql('ext', 'CREATE EXTENSION jsonb_toaster; CREATE EXTENSION amcheck;'
	  . helpers_sql());
$node->safe_psql('noext', 'CREATE EXTENSION amcheck;' . probes_sql()
	  . 'SET search_path = public, jt_probe;' . helpers_sql());

# new rows and edits, after a change of the column's settings, of rows the
# setup did not update; the same on the reference
my $churn = q{
INSERT INTO %1$s (id, state, jb) SELECT i, 'after', gen_doc(i, 3) FROM generate_series(91, 92) i;
UPDATE %1$s SET jb = jsonb_set(jb, '{items,5,h}', '"after"') WHERE id IN (43, 51, 21);
UPDATE %1$s SET jb = jb || '{"added": 1}' WHERE id IN (44, 52, 11);
};
sub churn { my ($t) = @_; return sprintf($churn, $t); }

# copy the table into an opted-in and a standard table with $how
sub copies
{
	my ($how) = @_;
	return qq{
CREATE TABLE m_oi (LIKE m INCLUDING DEFAULTS);
ALTER TABLE m_oi ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE m_std (LIKE m INCLUDING DEFAULTS);
ALTER TABLE m_std ALTER COLUMN jb RESET (toaster);
$how
};
}
my $copies_check = {
	compare => [
		[ 'SELECT id, jb FROM m',     'SELECT id, jb FROM m_ref' ],
		[ 'SELECT id, jb FROM m_oi',  'SELECT id, jb FROM m_ref' ],
		[ 'SELECT id, jb FROM m_std', 'SELECT id, jb FROM m_ref' ],
	],
	tables => [qw(m m_oi m_std)],
};

# The operations.  sql runs on the case's schema; ref keeps the reference
# equal where the operation changes documents; probe is a query whose
# result on m must equal the other query's on m_ref; holder 'any' for the
# operations that are not MVCC-safe (an older snapshot sees the table
# empty); error: the operation must fail with that message; mem: the
# operation processes every row, measured on the large table.
my @ops = (
	{ name => 'VACUUM', sql => 'VACUUM m' },
	{ name => 'VACUUM FULL', sql => 'VACUUM FULL m', mem => 1 },
	{ name => 'CLUSTER', sql => 'CLUSTER m USING m_pkey', mem => 1 },
	{
		name => 'SET DATA TYPE jsonb USING',
		sql => 'ALTER TABLE m ALTER COLUMN jb SET DATA TYPE jsonb USING jb::text::jsonb',
		holder => 'any',
		mem => 1
	},
	{
		name => 'SET DATA TYPE of another column',
		sql => 'ALTER TABLE m ALTER COLUMN other SET DATA TYPE bigint',
		holder => 'any',
		mem => 1
	},
	{
		name => 'ADD COLUMN with a volatile default',
		sql => 'ALTER TABLE m ADD COLUMN v float8 DEFAULT random()',
		holder => 'any',
		mem => 1
	},
	# the same method again changes nothing; another one over the same
	# handler rewrites the table, twice
	{
		name => 'SET ACCESS METHOD heap',
		sql => 'ALTER TABLE m SET ACCESS METHOD heap',
		holder => 'any'
	},
	{
		name => 'SET ACCESS METHOD heap2, heap',
		sql => 'ALTER TABLE m SET ACCESS METHOD heap2; ALTER TABLE m SET ACCESS METHOD heap',
		holder => 'any',
		mem => 1
	},
	{
		name => 'SET UNLOGGED, SET LOGGED',
		sql => 'ALTER TABLE m SET UNLOGGED; ALTER TABLE m SET LOGGED',
		holder => 'any',
		mem => 1
	},
	{
		name => 'SET COMPRESSION lz4',
		sql => 'ALTER TABLE m ALTER COLUMN jb SET COMPRESSION lz4;' . churn('m'),
		ref => churn('m_ref')
	},
	{
		name => 'SET STORAGE EXTERNAL',
		sql => 'ALTER TABLE m ALTER COLUMN jb SET STORAGE EXTERNAL;' . churn('m'),
		ref => churn('m_ref')
	},
	{
		name => 'SET STORAGE MAIN',
		sql => 'ALTER TABLE m ALTER COLUMN jb SET STORAGE MAIN;' . churn('m'),
		ref => churn('m_ref')
	},
	{
		name => 'SET (toast_tuple_target), VACUUM FULL',
		sql => 'ALTER TABLE m SET (toast_tuple_target = 256);' . churn('m') . 'VACUUM FULL m',
		ref => churn('m_ref')
	},
	{
		name => 'TRUNCATE rolled back',
		sql => 'BEGIN; TRUNCATE m; INSERT INTO m SELECT * FROM m_ref WHERE id < 30; ROLLBACK'
	},
	{
		name => 'TRUNCATE, INSERT .. SELECT',
		sql => 'TRUNCATE m; INSERT INTO m SELECT * FROM m_ref',
		holder => 'any'
	},
	{ name => 'REINDEX', sql => 'REINDEX TABLE m' },
	{
		name => 'CREATE INDEX on an expression',
		sql => q{CREATE INDEX m_name ON m ((jb ->> 'name'))},
		probe => [
			q{SET enable_seqscan = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM m
			  WHERE jb ->> 'name' IN ('edited', 'renamed', 'small 2', 'document 42 version 0')},
			q{SELECT string_agg(id::text, ',' ORDER BY id) FROM m_ref
			  WHERE jb ->> 'name' IN ('edited', 'renamed', 'small 2', 'document 42 version 0')}
		],
		mem => 1
	},
	{
		name => 'CREATE INDEX USING gin',
		sql => q{CREATE INDEX m_gin ON m USING gin (jb); SELECT gin_index_check('m_gin')},
		probe => [
			q{SET enable_seqscan = off; SELECT string_agg(id::text, ',' ORDER BY id) FROM m
			  WHERE jb @> '{"flag": true}' OR jb ? 'k100' OR jb @> '{"name": "edited"}'},
			q{SELECT string_agg(id::text, ',' ORDER BY id) FROM m_ref
			  WHERE jb @> '{"flag": true}' OR jb ? 'k100' OR jb @> '{"name": "edited"}'}
		],
		mem => 1
	},
	{
		name => 'partition ATTACH, cross-partition UPDATE, DETACH',
		sql => q{
CREATE TABLE p (id int NOT NULL, state text NOT NULL, other int NOT NULL DEFAULT 0, jb jsonb)
	PARTITION BY RANGE (id);
ALTER TABLE p ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE TABLE p_hi PARTITION OF p FOR VALUES FROM (1000000) TO (MAXVALUE);
ALTER TABLE p ATTACH PARTITION m FOR VALUES FROM (MINVALUE) TO (1000000);
UPDATE p SET id = id + 1000000 WHERE id % 3 = 0;
UPDATE p SET id = id - 1000000, jb = jsonb_set(jb, '{name}', '"back"')
	WHERE id > 1000000 AND id % 2 = 0;
ALTER TABLE p DETACH PARTITION m;
},
		ref => q{
UPDATE m_ref SET id = id + 1000000 WHERE id % 3 = 0;
UPDATE m_ref SET id = id - 1000000, jb = jsonb_set(jb, '{name}', '"back"')
	WHERE id > 1000000 AND id % 2 = 0;
},
		compare => [
			[
				'SELECT id, jb FROM m UNION ALL SELECT id, jb FROM p_hi',
				'SELECT id, jb FROM m_ref'
			]
		],
		tables => [qw(m p_hi)]
	},
	{
		name => 'INSERT .. SELECT',
		sql => copies('INSERT INTO m_oi SELECT * FROM m; INSERT INTO m_std SELECT * FROM m;'),
		%$copies_check,
		mem => 1
	},
	{
		name => 'CREATE TABLE AS, SELECT INTO',
		sql => q{CREATE TABLE m_std AS SELECT * FROM m;
			SELECT * INTO m_oi FROM m WHERE false;
			ALTER TABLE m_oi ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
			INSERT INTO m_oi SELECT * FROM m},
		%$copies_check,
	},
	{
		name => 'COPY text',
		sql => copies(qq{COPY m TO '$dir/m.txt';
			COPY m_oi FROM '$dir/m.txt'; COPY m_std FROM '$dir/m.txt';}),
		%$copies_check,
		mem => 1
	},
	{
		name => 'COPY binary',
		sql => copies(qq{COPY m TO '$dir/m.bin' (FORMAT binary);
			COPY m_oi FROM '$dir/m.bin' (FORMAT binary); COPY m_std FROM '$dir/m.bin' (FORMAT binary);}),
		%$copies_check,
	},
	# refused while a column names the toaster; a column reset by hand is
	# not seen (docs/toaster.md): then the drop is done, the documents
	# still read back, and the extension is created again for the checks
	{
		name => 'DROP EXTENSION',
		sql => 'DROP EXTENSION jsonb_toaster',
		error => qr/jsonb_toaster/,
		not_in => ['noext'],
		drop_ext => 1
	},
	{
		name => 'DROP EXTENSION CASCADE',
		sql => 'DROP EXTENSION jsonb_toaster CASCADE',
		error => qr/jsonb_toaster/,
		not_in => ['noext'],
		drop_ext => 1
	},
);

my @contexts = (
	{ name => 'opted in', db => 'ext' },
	{ name => 'option reset by hand', db => 'ext', reset => 1 },
	{ name => 'no extension', db => 'noext', probes => 1, declined => 1 },
	{ name => 'overrides off', db => 'ext', overrides_off => 1, deltas => 0 },
);

my $n = 0;
foreach my $ctx (@contexts)
{
	my $cname = $ctx->{name} =~ s/ /_/gr;
	foreach my $op (@ops)
	{
		next if grep { $_ eq $ctx->{db} } @{ $op->{not_in} // [] };
		my $label = "$ctx->{name}: $op->{name}";
		local $ENV{PGOPTIONS} = $ctx->{overrides_off} ? '-c jsonb_toaster.override_builtins=off' : '';
		my $case = load_case($node, $ctx->{db}, 'c' . $n++,
			reset => $ctx->{reset}, probes => $ctx->{probes}, deltas => $ctx->{deltas},
			declined => $ctx->{declined});
		if ($case->{error})
		{
			fail("$label: setting up every state");
			diag($case->{error});
			drop_case($case);
			next;
		}
		my ($db, $pre) = ($ctx->{db}, $case->{pre});
		my $out = run_sql($node, $db, $pre . $op->{sql});
		if ($op->{drop_ext} && $ctx->{reset})
		{
			unlike($out, qr/^ERROR/, "$label: done (the column no longer names the toaster)");
			run_sql($node, $db, 'CREATE EXTENSION IF NOT EXISTS jsonb_toaster');
		}
		elsif ($op->{error})
		{
			like($out, qr/^ERROR: .*$op->{error}/s, "$label: refused");
		}
		else
		{
			unlike($out, qr/^ERROR/, "$label: runs") or diag($out);
		}
		if ($op->{ref})
		{
			my $r = run_sql($node, $db, $pre . $op->{ref});
			die "the reference's change failed: $r" if $r =~ /^ERROR/;
		}
		if ($op->{probe})
		{
			is(run_sql($node, $db, $pre . $op->{probe}[0]),
				run_sql($node, $db, $pre . $op->{probe}[1]),
				"$label: a query through the new index finds the same rows");
		}
		# what the operation made of each state, for the record
		note "$label: forms after: "
		  . run_sql($node, $db, $pre . q{
SELECT string_agg(state || ':' || forms, ' ' ORDER BY state) FROM (
	SELECT state, string_agg(DISTINCT coalesce((jsonb_toaster_storage(jb)).form, 'null'), ',') AS forms
	FROM m GROUP BY state) s});
		check_case($case, $label, %$op);
		drop_case($case);
	}
}

# Memory.  The operations that process every row run on a table of
# skeletons of many parts and on a standard copy of it, at $rows rows and
# at four times as many; each in a session of its own, in a transaction
# rolled back where it can be.  A backend that kept something per row (a
# part list, a copy of each pointer) would grow with the table: the
# toaster's growth must stay within $slack_kb of standard jsonb's.
my $rows = 600;
my $slack_kb = 2048;
$node->safe_psql('ext', q{
SET jsonb_toaster.range_size = 256;
SET jsonb_toaster.unit_size = 512;
CREATE SCHEMA mt;
CREATE TABLE mt.m (id int PRIMARY KEY, state text NOT NULL, other int NOT NULL DEFAULT 0, jb jsonb);
ALTER TABLE mt.m ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
CREATE SCHEMA ms;
CREATE TABLE ms.m (LIKE mt.m INCLUDING ALL);
ALTER TABLE ms.m ALTER COLUMN jb RESET (toaster);
});
my $parts = run_sql($node, 'ext', q{
SET jsonb_toaster.range_size = 256;
SET jsonb_toaster.unit_size = 512;
INSERT INTO mt.m (id, state, jb) SELECT i, 'mem', gen_doc(i, 0) FROM generate_series(1, 10) i;
SELECT min(parts) FROM mt.m, jsonb_toaster_storage(jb) s;
TRUNCATE mt.m});
note "parts of each document of the memory test: at least $parts";

sub grow
{
	my ($from, $to) = @_;
	foreach my $s (qw(mt ms))
	{
		my $r = run_sql($node, 'ext', qq{
SET jsonb_toaster.range_size = 256;
SET jsonb_toaster.unit_size = 512;
INSERT INTO $s.m (id, state, jb) SELECT i, 'mem', gen_doc(i, 0) FROM generate_series($from, $to) i;
VACUUM $s.m});
		die "loading the memory test's table: $r" if $r =~ /^ERROR/;
	}
}

my %peak;
sub measure
{
	my ($size) = @_;
	foreach my $op (grep { $_->{mem} } @ops)
	{
		foreach my $s (qw(mt ms))
		{
			my $sql = $op->{sql} =~ /VACUUM/ ? $op->{sql} : "BEGIN; $op->{sql}; ROLLBACK";
			my $r = run_sql($node, 'ext', "SET search_path = $s, public; $sql;\n" . peak_private());
			$r = (split /\n/, $r)[-1] unless $r =~ /^ERROR/;
			$peak{ $op->{name} }{$s}{$size} = $r;
		}
	}
}

# the backend reads its own /proc/<pid>/status
my @mem_ops = -r '/proc/self/status' ? grep { $_->{mem} } @ops : ();
note 'no /proc: memory not measured' unless @mem_ops;
if (@mem_ops)
{
	grow(1, $rows);
	measure($rows);
	grow($rows + 1, 4 * $rows);
	measure(4 * $rows);
}
foreach my $op (@mem_ops)
{
	my $p = $peak{ $op->{name} };
	my @all = map { ($p->{$_}{$rows}, $p->{$_}{ 4 * $rows }) } qw(mt ms);
	if (grep { !/^\d+$/ } @all)
	{
		fail("memory of $op->{name}: measured");
		diag(join("\n", @all));
		next;
	}
	my $gt = $p->{mt}{ 4 * $rows } - $p->{mt}{$rows};
	my $gs = $p->{ms}{ 4 * $rows } - $p->{ms}{$rows};
	cmp_ok($gt, '<=', $gs + $slack_kb,
		"memory of $op->{name}: from $rows to ${\(4 * $rows)} rows the toaster's backend grew "
		  . "$gt kB (peak $p->{mt}{4 * $rows} kB), standard jsonb's $gs kB (peak $p->{ms}{4 * $rows} kB)");
}

ok(!$node->log_contains(qr/TRAP:|PANIC:|terminated by signal/),
	'no assertion failure, PANIC or crash in the server log');

$node->stop;
done_testing();
