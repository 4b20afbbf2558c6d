#!/usr/bin/env bash
# bench/I/first-chunk-bound.sh -- how much faster than the builtin can a
# partial read of jb->'id' be?  By hand.
#
# For documents whose "id" sits in the first TOAST chunk, times per row:
#   builtin  jb->'id' with the builtins (every chunk fetched, all of it
#            decompressed);
#   partial  jt_object_field(jb, 'id') (chunks read and decompressed only
#            as far as the key);
#   slice    substr(t, 1, 20) on a text copy of the same documents, also
#            compressed with pglz: PostgreSQL's own sliced de-TOASTing,
#            which fetches the first chunk and decompresses a prefix;
#   pointer  pg_column_size(jb), which reads nothing but the pointer.
# "slice" is about the least any reader of a TOASTed value can do, so
# builtin / slice bounds the speed-up of partial access.
#
# Runs against the server psql's environment names (PGHOST, PGPORT,
# PGUSER, PGDATABASE) with jsonb_toaster installed; tables fcb_* are
# dropped and created.
#
#   bench/I/first-chunk-bound.sh ["elements:rows ..."]   (default "120:20000 1200:4000 12000:400")
set -euo pipefail

sizes=${1:-"120:20000 1200:4000 12000:400"}

best_ms() {
	# the fastest of 5 runs of a query, in ms
	local q=$1 best=""
	for _ in 1 2 3 4 5; do
		local ms
		ms=$(psql -qXAt -c "SET jsonb_toaster.override_builtins = off" -c '\timing on' -c "$q" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
		if [ -z "$best" ] || awk "BEGIN { exit !($ms < $best) }"; then
			best=$ms
		fi
	done
	echo "$best"
}

echo "elements | rows | stored bytes | builtin µs | partial µs | slice µs | pointer µs | builtin/partial | builtin/slice"
for s in $sizes; do
	n=${s%%:*}
	rows=${s##*:}
	psql -qX -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
		-c "DROP TABLE IF EXISTS fcb_j, fcb_t" \
		-c "CREATE TABLE fcb_j (id int, jb jsonb COMPRESSION pglz)" \
		-c "CREATE TABLE fcb_t (id int, t text COMPRESSION pglz)" \
		-c "INSERT INTO fcb_j SELECT i, jsonb_build_object('id', i, 'title', 'x',
				'roles', (SELECT jsonb_agg(md5((i * 100000 + j)::text)) FROM generate_series(1, $n) j))
			FROM generate_series(1, $rows) i" \
		-c "INSERT INTO fcb_t SELECT id, jb::text FROM fcb_j" \
		-c "VACUUM ANALYZE fcb_j, fcb_t"
	stored=$(psql -qXAt -c "SELECT avg(pg_column_size(jb))::int FROM fcb_j")
	b=$(best_ms "SELECT count(jb->'id') FROM fcb_j")
	p=$(best_ms "SELECT count(jt_object_field(jb, 'id')) FROM fcb_j")
	sl=$(best_ms "SELECT count(substr(t, 1, 20)) FROM fcb_t")
	pt=$(best_ms "SELECT count(pg_column_size(jb)) FROM fcb_j")
	awk -v n="$n" -v r="$rows" -v st="$stored" -v b="$b" -v p="$p" -v s="$sl" -v pt="$pt" 'BEGIN {
		printf "%d | %d | %d | %.2f | %.2f | %.2f | %.2f | %.1fx | %.1fx\n",
			n, r, st, b * 1000 / r, p * 1000 / r, s * 1000 / r, pt * 1000 / r, b / p, b / s }'
done
