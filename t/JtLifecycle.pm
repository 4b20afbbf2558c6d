# Copyright (c) 2026, jsonb_toaster developers
#
# The lifecycle matrix's table of every storage state, and the checks run
# after each operation on it (t/010_toaster_lifecycle*.pl).
#
# A case lives in a schema of its own: "m" holds every state at once,
# "m_ref" the same documents as standard jsonb (loaded by the same
# statements, never copied from "m"), "m_old" the digest of each document
# as the holder's snapshot sees it.  The holder is a session whose REPEATABLE
# READ snapshot predates the updates, so that the older row versions the
# updates leave (whose parts the new versions share) are recently dead, not
# removable, while an operation runs.
#
# The checks, after an operation:
#   - every document equals its reference copy (=, the text form, accessors);
#   - verify_heapam(check_toast => true) of each table and of its TOAST
#     relation, and bt_index_check() of their indexes, report nothing;
#   - the holder still reads the older versions it saw before;
#   - after the holder is gone and VACUUM, every TOAST value is one that a
#     live row names (parts of skeletons, standard external values) with
#     all its chunks, or one that an older version the holder saw named:
#     CLUSTER and VACUUM FULL copy recently dead versions with their
#     values, which stay once those versions are vacuumed, as standard
#     TOAST values do.  Otherwise the TOAST rows are exactly the chunks of
#     the live values, each value counted once.
# The fourth check of the matrix, memory, is measured by the scripts with
# peak_private() around the operations that process every row.

package JtLifecycle;

use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use File::Spec;
use Exporter 'import';

our @EXPORT = qw(helpers_sql probes_sql load_case check_case run_sql
  peak_private drop_case);

# where t/ is, whatever the working directory becomes
my $dir = File::Spec->rel2abs(dirname(__FILE__));

# Functions the checks use, created once in each database.  They name the
# extension's introspection functions unqualified: a database without the
# extension reaches them through probes_sql()'s schema on its search_path.
sub helpers_sql
{
	my $gen_doc = slurp_file($dir . '/gen_doc.sql');
	return $gen_doc . q{
-- a root object of 200 short keys: with a small range size and inline
-- budget it leaves the row whole, in ranges, and a small edit of one key
-- is kept as a delta of its range
CREATE FUNCTION keys_doc(i int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_object_agg(format('k%s', lpad(j::text, 3, '0')),
	CASE j % 3 WHEN 0 THEN to_jsonb(j * i)
		WHEN 1 THEN to_jsonb(repeat('v', j % 17))
		ELSE jsonb_build_array(j, 'x', jsonb_build_object('n', j)) END)
FROM generate_series(1, 200) j
$$;

-- Rows of two queries (id, jb) that differ: missing on either side, or not
-- equal as jsonb, as text, or through the accessors.
CREATE FUNCTION jt_diff(a text, b text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text;
BEGIN
	EXECUTE format($q$
SELECT coalesce(string_agg(coalesce(x.id, y.id)::text, ',' ORDER BY coalesce(x.id, y.id)), '')
FROM (%s) x (id, jb) FULL JOIN (%s) y (id, jb) ON x.id = y.id
WHERE x.id IS NULL OR y.id IS NULL
   OR x.jb IS DISTINCT FROM y.jb
   OR x.jb::text IS DISTINCT FROM y.jb::text
   OR (x.jb -> 'name') IS DISTINCT FROM (y.jb -> 'name')
   OR (x.jb ->> 'id') IS DISTINCT FROM (y.jb ->> 'id')
   OR (x.jb #> '{items,3}') IS DISTINCT FROM (y.jb #> '{items,3}')
   OR (x.jb #>> '{nested,a,b}') IS DISTINCT FROM (y.jb #>> '{nested,a,b}')
   OR (x.jb -> 'map' ->> 'k7') IS DISTINCT FROM (y.jb -> 'map' ->> 'k7')
   OR (x.jb -> 'text') IS DISTINCT FROM (y.jb -> 'text')
   OR (x.jb ->> 'k150') IS DISTINCT FROM (y.jb ->> 'k150')
   OR (x.jb ? 'k100') IS DISTINCT FROM (y.jb ? 'k100')
   OR (x.jb @> '{"flag": true}') IS DISTINCT FROM (y.jb @> '{"flag": true}') $q$, a, b)
	INTO r;
	RETURN r;
END $f$;

-- A table's TOAST rows against the values its live rows name, each value
-- once: rows|chunks named|values nobody names|named values missing|values
-- whose chunk count differs|values no live row names but older row
-- versions did (in "older": CLUSTER and VACUUM FULL copy the values of
-- recently dead versions, which stay once those versions are vacuumed,
-- as with standard TOAST)
CREATE FUNCTION jt_leaks(rel regclass, older oid[] DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text; toast regclass;
BEGIN
	SELECT nullif(reltoastrelid, 0)::regclass INTO toast FROM pg_class WHERE oid = rel;
	EXECUTE format($q$
WITH t AS (SELECT chunk_id, count(*) AS n FROM %s GROUP BY chunk_id),
	l AS (SELECT DISTINCT value_id, chunks FROM (
		SELECT v.value_id, v.chunks FROM %s, jsonb_toaster_values(jb) v
		UNION ALL
		SELECT s.value_id, s.chunks FROM %s, jsonb_toaster_storage(jb) s
		WHERE s.form = 'external') v)
SELECT concat_ws('|', coalesce((SELECT sum(n) FROM t), 0), coalesce((SELECT sum(chunks) FROM l), 0),
	count(*) FILTER (WHERE l.value_id IS NULL AND t.chunk_id <> ALL (%L::oid[])),
	count(*) FILTER (WHERE t.chunk_id IS NULL),
	count(*) FILTER (WHERE t.n <> l.chunks),
	count(*) FILTER (WHERE l.value_id IS NULL AND t.chunk_id = ANY (%L::oid[])))
FROM t FULL JOIN l ON t.chunk_id = l.value_id $q$,
		coalesce(toast::text, '(SELECT NULL::oid AS chunk_id, 0 AS n WHERE false) e'), rel, rel,
		older, older)
		INTO r;
	RETURN r;
END $f$;

-- everything amcheck says about a table, its TOAST relation and the
-- indexes of both
CREATE FUNCTION jt_amcheck(rel regclass) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text; toast regclass; i regclass;
BEGIN
	SELECT nullif(reltoastrelid, 0)::regclass INTO toast FROM pg_class WHERE oid = rel;
	SELECT string_agg(format('%s/%s/%s: %s', blkno, offnum, attnum, msg), E'\n')
		INTO r FROM verify_heapam(rel, check_toast => true);
	IF toast IS NOT NULL THEN
		SELECT concat_ws(E'\n', r, string_agg(format('toast %s/%s: %s', blkno, offnum, msg), E'\n'))
			INTO r FROM verify_heapam(toast);
	END IF;
	FOR i IN SELECT indexrelid FROM pg_index JOIN pg_class c ON c.oid = indexrelid
		JOIN pg_am a ON a.oid = c.relam
		WHERE indrelid IN (rel, toast) AND a.amname = 'btree'
	LOOP
		PERFORM bt_index_check(i, true);
	END LOOP;
	RETURN coalesce(r, '');
END $f$;
};
}

# The introspection functions, for a database where the extension is not
# installed (the library is preloaded: the toaster works there too).
sub probes_sql
{
	return q{
CREATE SCHEMA jt_probe;
CREATE FUNCTION jt_probe.jsonb_toaster_storage(value jsonb,
	OUT form text, OUT compressed boolean, OUT compression text,
	OUT raw_size bigint, OUT stored_size bigint, OUT toast_relid regclass,
	OUT value_id oid, OUT chunks integer, OUT inline_size bigint, OUT parts integer)
RETURNS record AS 'jsonb_toaster', 'jsonb_toaster_storage' LANGUAGE C STRICT STABLE;
CREATE FUNCTION jt_probe.jsonb_toaster_parts(value jsonb,
	OUT path text[], OUT range integer, OUT kind text, OUT count integer,
	OUT raw_size integer, OUT stored_size integer, OUT compression text,
	OUT value_id oid, OUT chunks integer, OUT hash bigint, OUT value_offset integer)
RETURNS SETOF record AS 'jsonb_toaster', 'jsonb_toaster_parts' LANGUAGE C STRICT STABLE;
CREATE FUNCTION jt_probe.jsonb_toaster_values(value jsonb,
	OUT value_id oid, OUT size integer, OUT chunks integer, OUT parts integer)
RETURNS SETOF record AS 'jsonb_toaster', 'jsonb_toaster_values' LANGUAGE C STRICT STABLE;
};
}

# Run SQL and return its output, or "ERROR: <stderr>" if it failed, so that
# a failing statement fails the check that compares its output and the
# script goes on.
sub run_sql
{
	my ($node, $db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql,
		extra_params => [ '-v', 'ON_ERROR_STOP=1' ]);
	return $out if $ret == 0;
	$err =~ s/^psql:[^\n]*?(ERROR|FATAL|PANIC)/$1/mg;
	return "ERROR: $err";
}

# Statements that load each state into a table; run on "m" and on "m_ref"
# alike.  The settings are those the states need.  $i is the table's name.
my @load_before = (
	# values written before the column opts in
	q{INSERT INTO %s (id, state, jb) SELECT i, 'plain',
		jsonb_build_object('id', i, 'name', 'small ' || i, 'flag', i % 2 = 0)
		FROM generate_series(1, 3) i},
	q{INSERT INTO %s (id, state, jb) SELECT i, 'compressed',
		jsonb_build_object('id', i, 'name', 'compressible ' || i, 'flag', true,
			'text', repeat('abcd' || i, 2000))
		FROM generate_series(11, 13) i},
	q{INSERT INTO %s (id, state, jb) SELECT i, 'external', gen_doc(i, 0)
		FROM generate_series(21, 24) i},
	q{INSERT INTO %s (id, state, jb) SELECT i, 'external edited', gen_doc(i, 0)
		FROM generate_series(31, 33) i},
);
my @load_after = (
	# skeletons with parts (default range size: containers whole)
	q{INSERT INTO %s (id, state, jb) SELECT i, 'parts', gen_doc(i, 0)
		FROM generate_series(41, 44) i},
	# with ranges
	q{SET jsonb_toaster.range_size = 1024; SET jsonb_toaster.unit_size = 2048;
	  INSERT INTO %s (id, state, jb) SELECT i, 'ranges', gen_doc(i, 1)
		FROM generate_series(51, 54) i;
	  RESET jsonb_toaster.range_size; RESET jsonb_toaster.unit_size},
	# to be edited into deltas
	q{SET jsonb_toaster.range_size = 512; SET jsonb_toaster.inline_budget = 1000;
	  SET jsonb_toaster.unit_size = 1024;
	  INSERT INTO %s (id, state, jb) SELECT i, 'deltas', keys_doc(i)
		FROM generate_series(61, 63) i;
	  RESET jsonb_toaster.range_size; RESET jsonb_toaster.inline_budget;
	  RESET jsonb_toaster.unit_size},
	# to be shared with their new versions
	q{SET jsonb_toaster.range_size = 1024; SET jsonb_toaster.unit_size = 2048;
	  INSERT INTO %s (id, state, jb) SELECT i, 'shared', gen_doc(i, 2)
		FROM generate_series(71, 74) i;
	  RESET jsonb_toaster.range_size; RESET jsonb_toaster.unit_size},
	q{INSERT INTO %s (id, state, jb) VALUES (81, 'null', NULL),
		(82, 'small', '{"id": 82, "name": "small after"}')},
);
# updates made while the holder's snapshot sees the older versions; each
# row is updated once at most, so that every recently dead version is one
# the holder sees (t/010_toaster_lifecycle.pl's churn takes other rows)
my @updates = (
	# a value stored before the column opted in becomes a skeleton
	q{UPDATE %s SET jb = jsonb_set(jb, '{name}', '"edited"') WHERE state = 'external edited'},
	q{SET jsonb_toaster.range_size = 512; SET jsonb_toaster.inline_budget = 1000;
	  SET jsonb_toaster.unit_size = 1024;
	  UPDATE %s SET jb = jsonb_set(jb, '{k150}', '"set"') WHERE state = 'deltas' AND id <> 62;
	  UPDATE %s SET jb = jb - 'k100' WHERE state = 'deltas' AND id = 62;
	  RESET jsonb_toaster.range_size; RESET jsonb_toaster.inline_budget;
	  RESET jsonb_toaster.unit_size},
	# one part changed, the others shared; a short field, every part shared
	q{SET jsonb_toaster.range_size = 1024; SET jsonb_toaster.unit_size = 2048;
	  UPDATE %s SET jb = jsonb_set(jb, '{items,3,h}', '"changed"') WHERE state = 'shared' AND id % 2 = 0;
	  UPDATE %s SET jb = jsonb_set(jb, '{name}', '"renamed"') WHERE state = 'shared' AND id % 2 = 1;
	  RESET jsonb_toaster.range_size; RESET jsonb_toaster.unit_size},
	# another column: the pointer kept as it is
	q{UPDATE %s SET other = other + 1 WHERE id IN (41, 42)},
);

sub fill
{
	my ($sql, $t) = @_;
	return $sql =~ s/%s/$t/gr;
}

# Create a case's schema and tables, holding every state; start the holder.
# Returns a hash: schema, pre (the SQL that every statement of the case
# starts with), holder (a BackgroundPsql), or error (the setup failed).
# Options: reset => reset the column's option by hand after loading;
# probes => the database reaches the introspection through jt_probe;
# deltas => whether the edits must have left deltas (they need the
# overrides); shared_rows => how many of the 4 rows updated must share
# parts with their older versions (none in a logically logged table);
# holder => 0: no older snapshot; declined => the toaster declines every
# value (a database without the extension), so no state is a skeleton.
sub load_case
{
	my ($node, $db, $schema, %o) = @_;
	my $path = "$schema, public" . ($o{probes} ? ', jt_probe' : '');
	my $pre = "SET search_path = $path;\n";
	my %case = (node => $node, db => $db, schema => $schema, pre => $pre);

	my $sql = "CREATE SCHEMA $schema;\n" . $pre . q{
CREATE TABLE m (id int PRIMARY KEY, state text NOT NULL, other int NOT NULL DEFAULT 0, jb jsonb);
CREATE TABLE m_ref (id int PRIMARY KEY, state text NOT NULL, other int NOT NULL DEFAULT 0, jb jsonb);
};
	$sql .= join(";\n", map { fill($_, 'm'), fill($_, 'm_ref') } @load_before) . ";\n";
	$sql .= "ALTER TABLE m ALTER COLUMN jb SET (toaster = 'jsonb_toaster');\n";
	$sql .= join(";\n", map { fill($_, 'm'), fill($_, 'm_ref') } @load_after) . ";\n";
	$sql .= q{
CREATE TABLE m_before AS SELECT id, p.value_id, p.value_offset, p.hash FROM m, jsonb_toaster_parts(jb) p;
CREATE TABLE m_old AS SELECT id, md5(jb::text) AS md5 FROM m_ref;
};
	my $out = run_sql($node, $db, $sql);
	if ($out =~ /^ERROR/)
	{
		$case{error} = $out;
		return \%case;
	}

	if ($o{holder} // 1)
	{
		my $holder = $node->background_psql($db, on_error_stop => 0);
		$holder->query_safe("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1;");
		$case{holder} = $holder;
	}

	$sql = $pre . join(";\n", map { fill($_, 'm'), fill($_, 'm_ref') } @updates) . ";\n";
	$sql .= "ALTER TABLE m ALTER COLUMN jb RESET (toaster);\n" if $o{reset};
	# what the table holds: each state's forms, and whether the states
	# that must have ranges, deltas and shared parts have them
	$sql .= q{
SELECT string_agg(state || ':' || forms, ' ' ORDER BY state) FROM (
	SELECT state, string_agg(DISTINCT coalesce((jsonb_toaster_storage(jb)).form, 'null'), ',') AS forms
	FROM m GROUP BY state) s;
SELECT bool_and(n > d) FROM (SELECT id, count(*) AS n, count(DISTINCT path) AS d
	FROM m, jsonb_toaster_parts(jb) WHERE state = 'ranges' GROUP BY id) r;
SELECT count(*) FROM m, jsonb_toaster_parts(jb) p
	WHERE state = 'deltas' AND EXISTS (SELECT FROM m_before b
		WHERE b.id = m.id AND b.value_id = p.value_id AND b.value_offset = p.value_offset
			AND b.hash <> p.hash);
SELECT count(DISTINCT id) FROM m, jsonb_toaster_parts(jb) p
	WHERE state = 'shared' AND (p.value_id, p.value_offset) IN
		(SELECT value_id, value_offset FROM m_before b WHERE b.id = m.id);
};
	$out = run_sql($node, $db, $sql);
	if ($out =~ /^ERROR/)
	{
		$case{error} = $out;
		return \%case;
	}
	my ($forms, $ranged, $deltas, $shared) = split /\n/, $out;
	$case{forms} = $forms;
	my $want = 'compressed:compressed deltas:skeleton external:external '
	  . 'external edited:skeleton null:null parts:skeleton plain:plain '
	  . 'ranges:skeleton shared:skeleton small:plain';
	my @problems;
	if ($o{declined})
	{
		# the toaster stores nothing in this database
		push @problems, "forms $forms" if $forms =~ /skeleton/;
		$case{error} = "the toaster stored skeletons: " . join('; ', @problems)
		  if @problems;
		return \%case;
	}
	push @problems, "forms $forms" if $forms ne $want;
	push @problems, 'no ranges' if $ranged ne 't';
	push @problems, 'no deltas' if ($o{deltas} // 1) && $deltas == 0;
	push @problems, "shared parts in $shared rows of 4"
	  if $shared != ($o{shared_rows} // 4);
	$case{error} = "the states are not all there: " . join('; ', @problems)
	  if @problems;
	return \%case;
}

# The checks after an operation.  Options: compare => [[query, reference
# query], ...] (default m against m_ref); tables => the tables whose
# storage is checked (default m; each partition by name); holder => 'all'
# (the operation keeps the older versions: the holder must still see every
# row as it was) or 'any' (a rewrite or TRUNCATE: whatever it sees must be
# what it saw).
sub check_case
{
	my ($case, $label, %o) = @_;
	my ($node, $db, $pre) = @$case{qw(node db pre)};
	my $compare = $o{compare} // [ [ 'SELECT id, jb FROM m', 'SELECT id, jb FROM m_ref' ] ];
	my $tables = $o{tables} // ['m'];

	foreach my $c (@$compare)
	{
		my $sql = $pre . "SELECT jt_diff(\$\$$c->[0]\$\$, \$\$$c->[1]\$\$)";
		is(run_sql($node, $db, $sql), '', "$label: documents equal their reference ($c->[0])");
	}
	foreach my $t (@$tables)
	{
		is(run_sql($node, $db, $pre . "SELECT jt_amcheck('$t')"), '',
			"$label: amcheck finds nothing in $t");
	}

	my $older = '';
	$older = check_holder($case, $label, $o{holder} // 'all') if $case->{holder};
	return if $o{no_vacuum};

	# once nobody can see them, VACUUM takes the older versions: what stays
	# in TOAST is what the live rows name, and values the older versions
	# named if the operation copied them
	foreach my $t (@$tables)
	{
		my $r = run_sql($node, $db, $pre . "VACUUM $t; SELECT jt_leaks('$t', '{$older}')");
		my ($rows, $named, $rest, $kept) = $r =~ /^(\d+)\|(\d+)\|(\d+\|\d+\|\d+)\|(\d+)$/;
		if (defined $rows)
		{
			is("$rest", "0|0|0",
				"$label: after VACUUM every TOAST value of $t is a live value's or an older version's,"
				  . " none missing ($r)");
			is($rows, $named, "$label: and only live values' chunks are left ($r)")
			  if $kept == 0;
			note "$label: $kept values of older versions copied by the operation are left in $t"
			  if $kept > 0;
		}
		else
		{
			fail("$label: after VACUUM the TOAST rows of $t are the live values' chunks");
			diag($r);
		}
	}
}

# The holder reads the versions its snapshot saw, lists the TOAST values
# they name, then ends.  Returns that list (comma-separated).
sub check_holder
{
	my ($case, $label, $how) = @_;
	my $h = $case->{holder};
	my ($older) = $h->query($case->{pre} . q{
SELECT coalesce(string_agg(DISTINCT v::text, ','), '') FROM (
	SELECT v.value_id FROM m, jsonb_toaster_values(jb) v
	UNION ALL
	SELECT s.value_id FROM m, jsonb_toaster_storage(jb) s WHERE s.form = 'external') x (v)});
	$older = '' if $h->{stderr} ne '';
	my ($out) = $h->query(q{
SELECT count(*) || '|' || count(*) FILTER (WHERE md5(m.jb::text) IS DISTINCT FROM o.md5)
	|| '|' || (SELECT count(*) FROM } . $case->{schema} . q{.m_old)
FROM } . $case->{schema} . '.m m JOIN ' . $case->{schema} . '.m_old o USING (id)');
	my $err = $h->{stderr};
	$h->{stderr} = '';
	$out = "ERROR: $err" if $err ne '';
	if ($how eq 'all')
	{
		like($out, qr/^(\d+)\|0\|\1$/,
			"$label: an older snapshot still reads every older version");
	}
	else
	{
		like($out, qr/^\d+\|0\|\d+$/, "$label: an older snapshot reads nothing wrong");
	}
	$h->query('COMMIT');
	$h->quit;
	delete $case->{holder};
	return $older;
}

sub drop_case
{
	my ($case) = @_;
	if ($case->{holder})
	{
		$case->{holder}->query('ROLLBACK');
		$case->{holder}->quit;
	}
	run_sql($case->{node}, $case->{db}, "DROP SCHEMA $case->{schema} CASCADE");
}

# Private memory a backend used at its peak: VmHWM less the shared memory
# and file pages it has mapped (which stay mapped once touched), in kB.
# Call it at the end of the session that ran the operation.
sub peak_private
{
	return q{SELECT (regexp_match(s, 'VmHWM:\s+(\d+)'))[1]::bigint
	- (regexp_match(s, 'RssShmem:\s+(\d+)'))[1]::bigint
	- (regexp_match(s, 'RssFile:\s+(\d+)'))[1]::bigint
FROM pg_read_file('/proc/' || pg_backend_pid() || '/status') s};
}

1;
