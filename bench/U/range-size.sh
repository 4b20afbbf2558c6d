#!/usr/bin/env bash
# bench/U/range-size.sh -- U's updates at two range sizes, by hand.
#
# Loads U's document (1000 keys) into a stock table and into two toaster
# tables cut with different jsonb_toaster.range_size values, then times
# three UPDATEs of every row on each (after a VACUUM and a CHECKPOINT),
# printing time, WAL per row and TOAST relation growth.  Runs against the
# server that psql's environment names (PGHOST, PGPORT, PGUSER,
# PGDATABASE): a patched release build with the library preloaded, such as
# tools/dev-instance.sh start release.  Tables ub_* are dropped and
# created.
#
#   bench/U/range-size.sh [rows] [range sizes]   (default: 2000 "4096 2048")
#   COMPS=lz4 bench/U/range-size.sh 4000
set -euo pipefail

rows=${1:-2000}
sizes=${2:-"4096 2048"}

psql -qX -v ON_ERROR_STOP=1 <<SQL
CREATE OR REPLACE FUNCTION ub_run(tab text, expr text) RETURNS text
LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	l0 pg_lsn;
	s0 bigint;
	ms float8;
	w numeric;
	s1 bigint;
BEGIN
	s0 := pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE oid = tab::regclass));
	l0 := pg_current_wal_insert_lsn();
	t0 := clock_timestamp();
	EXECUTE format('UPDATE %s SET %s', tab, expr);
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
	w := pg_current_wal_insert_lsn() - l0;
	s1 := pg_relation_size((SELECT reltoastrelid FROM pg_class WHERE oid = tab::regclass));
	RETURN format('%s ms, %s kB WAL/row, TOAST %sx', round(ms::numeric),
				  round(w / 1024 / $rows, 1), round(s1::numeric / s0, 2));
END \$\$;
SQL

for comp in ${COMPS:-pglz lz4}; do
	for cfg in stock $sizes; do
		t=ub_${cfg}_$comp
		psql -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
			-c "DROP TABLE IF EXISTS $t" \
			-c "CREATE TABLE $t (id int, js jsonb COMPRESSION $comp)"
		set_size=""
		if [ "$cfg" != stock ]; then
			psql -qX -c "ALTER TABLE $t ALTER COLUMN js SET (toaster = 'jsonb_toaster')"
			set_size="SET jsonb_toaster.range_size = $cfg;"
		fi
		psql -qX -v ON_ERROR_STOP=1 -c "$set_size INSERT INTO $t SELECT i,
			(SELECT jsonb_object_agg(j, j) FROM generate_series(1, 1000) j)
			FROM generate_series(1, $rows) i"
		parts=$(psql -qXAt -c "SELECT count(*) FROM jsonb_toaster_parts((SELECT js FROM $t LIMIT 1))")
		for e in "js = js - '1'" "js = jsonb_set(js, '{500}', '0')" "js = jsonb_set(js, '{700}', '0')"; do
			psql -qX -c "VACUUM $t" -c "CHECKPOINT"
			echo "$comp $cfg ($parts parts) [$e]: $(psql -qXAt -c "SELECT ub_run('$t', \$\$$e\$\$)")"
		done
	done
done
