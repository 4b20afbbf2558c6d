#!/usr/bin/env bash
# tools/pglz-strategy.sh -- compare pglz strategies on a table's parts.
#
#   tools/pglz-strategy.sh TABLE [COLUMN [ROWS]]   (default: jb, 200 rows)
#
# Reads the parts of the toaster column COLUMN in the first ROWS rows of
# TABLE (a pglz column),
# decompresses it, compresses it again with PostgreSQL's default strategy,
# with the toaster's (src/toaster/part_write.c) and with a faster one, and
# prints total sizes and compression times.  Runs against the server that
# psql's environment names; the program is built with that server's
# pg_config (first on PATH, or $PG_CONFIG).
set -euo pipefail

table=$1
column=${2:-jb}
rows=${3:-200}
pg_config=${PG_CONFIG:-pg_config}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gcc -O2 -I"$("$pg_config" --includedir-server)" -I"$("$pg_config" --includedir)/internal" \
	-o "$work/pglz_strategy" "$here/pglz-strategy/pglz_strategy.c" \
	-L"$("$pg_config" --libdir)" -lpgcommon -lpgport

toast=$(psql -qXAt -v ON_ERROR_STOP=1 -c "SELECT reltoastrelid::regclass FROM pg_class WHERE oid = '$table'::regclass")
psql -qXAt -v ON_ERROR_STOP=1 -c "
	SELECT p.value_id, p.compression IS NULL,
		   (SELECT encode(string_agg(chunk_data, ''::bytea ORDER BY chunk_seq), 'hex')
			FROM $toast WHERE chunk_id = p.value_id)
	FROM (SELECT $column FROM $table LIMIT $rows) t, jsonb_toaster_parts($column) p" |
while IFS='|' read -r id plain hex; do
	echo "$hex" | xxd -r -p > "$work/$id"
	if [ "$plain" = t ]; then echo "raw:$work/$id"; else echo "$work/$id"; fi
done > "$work/list"
xargs "$work/pglz_strategy" < "$work/list"
