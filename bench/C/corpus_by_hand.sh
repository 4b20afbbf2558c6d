#!/bin/bash
# bench/C/corpus_by_hand.sh PREFIX COPYFILE
#
# Benchmark C's storage figures for one corpus, by hand, on a running
# instance (tools/dev-instance.sh start release; then . its environment):
# the corpus (a COPY file of "id path document" lines, as
# bench/C/corpora.py writes them) is loaded into four tables, stock and
# opted in, pglz and lz4, named PREFIX_sp, _tp, _sl and _tl, and vacuumed,
# as benchmark C loads it (bench/jtbench/bench_c.py); for each, the total
# and heap bytes, the TOAST values, and the WAL per row of
# UPDATE .. SET id = id + 1 after a CHECKPOINT.  The tables are left for
# inspection (dropped again by the next run with the same prefix).
set -euo pipefail
pre=$1
file=$2
psql -qX -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
DROP TABLE IF EXISTS ${pre}_sp, ${pre}_tp, ${pre}_sl, ${pre}_tl;
CREATE TABLE ${pre}_sp (id int, path text, jb jsonb COMPRESSION pglz);
CREATE TABLE ${pre}_tp (id int, path text, jb jsonb COMPRESSION pglz);
CREATE TABLE ${pre}_sl (id int, path text, jb jsonb COMPRESSION lz4);
CREATE TABLE ${pre}_tl (id int, path text, jb jsonb COMPRESSION lz4);
ALTER TABLE ${pre}_tp ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE ${pre}_tl ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
SQL
for t in sp tp sl tl; do
	psql -qX -v ON_ERROR_STOP=1 -c "\\copy ${pre}_$t (id, path, jb) FROM '$file'" \
		-c "VACUUM ANALYZE ${pre}_$t"
done
echo "table total_bytes heap_bytes toast_values wal_per_row"
for t in sp tp sl tl; do
	toast=$(psql -qXAt -c "SELECT reltoastrelid::regclass FROM pg_class WHERE relname = '${pre}_$t'")
	sizes=$(psql -qXAt -F ' ' -c "SELECT pg_total_relation_size('${pre}_$t'), pg_relation_size('${pre}_$t'), (SELECT count(DISTINCT chunk_id) FROM $toast)")
	psql -qXAt -c CHECKPOINT
	before=$(psql -qXAt -c "SELECT pg_current_wal_insert_lsn()")
	psql -qX -c "UPDATE ${pre}_$t SET id = id + 1"
	wal=$(psql -qXAt -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$before') / (SELECT count(*) FROM ${pre}_$t))")
	echo "${pre}_$t $sizes $wal"
done
