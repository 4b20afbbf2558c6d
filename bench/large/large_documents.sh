#!/bin/bash
# bench/large/large_documents.sh
#
# Reads and updates of two large documents, by hand, on a running patched
# instance with the library preloaded (tools/dev-instance.sh start release;
# then . its environment).  Each document goes into a standard table
# (large_s*) and an opted-in one (large_t*):
#   - "big": {"meta": {"v": 1}, "items": [1.5 million small objects]},
#     240 MB of jsonb, lz4: the root is kept in the tree, items in parts;
#   - "nest": {"meta": {...}, "data": {"items": [200,000 objects], "n": 5}},
#     15 MB, pglz: items lies below a value of the root, which is opened
#     (format version 8) so that items has ranges of its own.
# Every statement runs three times (updates in a transaction rolled back);
# the fastest time is printed, in ms, for the opted-in table, the standard
# one, and the standard one with jsonb_toaster.override_builtins = off
# (the builtins as stock runs them).  The tables are left for inspection.
set -euo pipefail

psql -qX -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
DROP TABLE IF EXISTS large_s, large_t, large_sn, large_tn;
CREATE TABLE large_s (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
CREATE TABLE large_t (id int PRIMARY KEY, jb jsonb COMPRESSION lz4);
CREATE TABLE large_sn (id int PRIMARY KEY, jb jsonb COMPRESSION pglz);
CREATE TABLE large_tn (id int PRIMARY KEY, jb jsonb COMPRESSION pglz);
ALTER TABLE large_t ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE large_tn ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO large_s SELECT 1, jsonb_build_object('meta', jsonb_build_object('v', 1),
	'items', (SELECT jsonb_agg(jsonb_build_object('k', i, 'name', md5(i::text),
		'tags', jsonb_build_array(i, i * 2, md5((i * 7)::text))))
		FROM generate_series(1, 1500000) i));
INSERT INTO large_t SELECT * FROM large_s;
INSERT INTO large_sn SELECT 1, jsonb_build_object('meta', jsonb_build_object('v', 1, 'w', 'x'),
	'data', jsonb_build_object('items', (SELECT jsonb_agg(jsonb_build_object('k', i,
		'name', md5(i::text))) FROM generate_series(1, 200000) i), 'n', 5));
INSERT INTO large_tn SELECT * FROM large_sn;
VACUUM ANALYZE large_s, large_t, large_sn, large_tn;
SQL
psql -X -c "SELECT 'large_t' AS tab, coalesce(path::text, '(tree)') AS part,
	count(*) AS ranges, min(raw_size) AS min_raw, max(raw_size) AS max_raw,
	sum(stored_size) AS stored FROM jsonb_toaster_parts((SELECT jb FROM large_t)) GROUP BY 1, 2
	UNION ALL SELECT 'large_tn', coalesce(path::text, '(tree)'), count(*), min(raw_size),
	max(raw_size), sum(stored_size) FROM jsonb_toaster_parts((SELECT jb FROM large_tn))
	GROUP BY 1, 2 ORDER BY 1, 2"

# fastest of three runs of statement $2 (with TAB for the table) on $1
fastest() {
	local tab=$1 stmt=${2//TAB/$1} opts=${3:-}
	for i in 1 2 3; do
		PGOPTIONS="$opts" psql -qAtX -c '\timing on' -c "$stmt" |
			awk '/^Time:/ {print $2}' | tail -1
	done | sort -n | head -1
}

echo "statement | toaster | standard | standard, builtins"
run() {
	local suffix=$1 stmt=$2
	echo "$stmt | $(fastest large_t$suffix "$stmt") | $(fastest large_s$suffix "$stmt")" \
		"| $(fastest large_s$suffix "$stmt" '-c jsonb_toaster.override_builtins=off')"
}
for q in "{meta}" "{items,10}" "{items,1000000}" "{items,1499990}"; do
	run "" "SELECT length((jb #> '$q')::text) FROM TAB"
done
for p in "{meta,v}" "{items,700000,name}"; do
	run "" "BEGIN; UPDATE TAB SET jb = jsonb_set(jb, '$p', '\"x\"'); ROLLBACK"
done
for q in "{data,n}" "{data,items,10}" "{data,items,190000}"; do
	run n "SELECT length((jb #> '$q')::text) FROM TAB"
done
for p in "{meta,v}" "{data,n}" "{data,items,5,k}" "{data,items,199990,k}"; do
	run n "BEGIN; UPDATE TAB SET jb = jsonb_set(jb, '$p', '2'); ROLLBACK"
done
