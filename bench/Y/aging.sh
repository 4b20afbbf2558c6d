#!/usr/bin/env bash
# bench/Y/aging.sh -- workload A at 4 clients against the documents' age,
# by hand, on the dev instance (tools/dev-instance.sh start release), for
# stock pglz and the toaster with pglz.
#
#   eval "$(tools/dev-instance.sh start release)"; bench/Y/aging.sh [seconds]
#
# Loads 10,000 "large" documents (bench/jtbench/bench_y.py's GENERATE) into
# two fresh tables, then alternates: a few rounds of aging (every document
# updated once a round, one random field) and one run of each protocol on
# each table, printing TPS and WAL per update.  The runs add updates of
# their own: about 1.5-2.5 per document for the toaster's.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the bench's own generator, so that the documents are the bench's
generate=$(cd bench && python3 -c 'from jtbench.bench_y import GENERATE
print(GENERATE["large"].format(table="y_aging_src", rows=10000))')

psql -Atq <<SQL
DROP TABLE IF EXISTS y_aging_src, y_aging_stock, y_aging_toaster;
CREATE TABLE y_aging_src (id int, jb jsonb STORAGE EXTERNAL);
$generate
CREATE TABLE y_aging_stock (id int PRIMARY KEY, jb jsonb COMPRESSION pglz);
CREATE TABLE y_aging_toaster (id int PRIMARY KEY, jb jsonb COMPRESSION pglz);
ALTER TABLE y_aging_toaster ALTER jb SET (toaster = 'jsonb_toaster');
INSERT INTO y_aging_stock SELECT * FROM y_aging_src;
INSERT INTO y_aging_toaster SELECT * FROM y_aging_src;
DROP TABLE y_aging_src;
VACUUM ANALYZE y_aging_stock, y_aging_toaster;
SQL

for t in y_aging_stock y_aging_toaster; do
	for f in large_read large_update; do
		sed "s/:tab/$t/" "bench/Y/prepared/$f.sql" > "$work/$f.$t.prepared.sql"
		cp "bench/Y/$f.sql" "$work/$f.$t.simple.sql"
	done
done

rounds=0
for step in 0 2 2 3 3 5; do
	for ((i = 0; i < step; i++)); do
		for t in y_aging_stock y_aging_toaster; do
			psql -Atq -c "UPDATE $t SET jb = jsonb_set(jb, ARRAY['field' || (random() * 99)::int],
				to_jsonb(left(encode(sha512(convert_to(random()::text, 'UTF8')), 'hex')
					|| encode(sha512(convert_to(random()::text || 'x', 'UTF8')), 'hex'), 200)))"
		done
	done
	rounds=$((rounds + step))
	echo "after $rounds rounds of aging"
	for protocol in simple prepared; do
		for t in y_aging_stock y_aging_toaster; do
			psql -Atq -c "VACUUM $t" -c "CHECKPOINT"
			lsn0=$(psql -Atc "SELECT pg_current_wal_insert_lsn()")
			tps=$(pgbench -n -M "$protocol" -c 4 -j 2 -T "$seconds" \
				-f "$work/large_read.$t.$protocol.sql@1" -f "$work/large_update.$t.$protocol.sql@1" \
				-D tab="$t" -D rows=10000 2>&1 | awk '/^tps/ {print $3}')
			lsn1=$(psql -Atc "SELECT pg_current_wal_insert_lsn()")
			printf '  %-8s %-16s %6.0f TPS  %6.0f B of WAL an update\n' "$protocol" "$t" "$tps" \
				"$(psql -Atc "SELECT ('$lsn1'::pg_lsn - '$lsn0') / ($tps * $seconds / 2)")"
		done
	done
done
