#!/usr/bin/env bash
# bench/decode_replace.sh PREFIX PORT -- time logical decoding of UPDATEs
# that leave a standard TOAST value unchanged, in a table without an
# opted-in column, on a server with a custom toaster registered (the test
# module test_custom_toaster preloaded).  Core patch 0005 keeps stock's
# early return in ReorderBufferToastReplace for such tuples; before it,
# every decoded tuple was deformed once any toaster was registered.
#
# PREFIX: an installation of the patched server with its test modules
# (tools/build-server.sh prints it); PORT: a free port.  Run as the
# server's user (not root).  Prints the time of decoding the same 60,000
# changes three times (peeked, so not consumed).
set -euo pipefail
P=$1
PORT=$2
D=$(mktemp -d "${TMPDIR:-/tmp}/decode_replace.XXXXXX")
export PATH=$P/bin:$PATH PGPORT=$PORT PGHOST=$D
trap 'pg_ctl -D "$D/data" -w stop >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
initdb -D "$D/data" -A trust >/dev/null
cat >>"$D/data/postgresql.conf" <<CONF
port = $PORT
unix_socket_directories = '$D'
listen_addresses = ''
shared_preload_libraries = 'test_custom_toaster'
wal_level = logical
logical_decoding_work_mem = '1GB'
CONF
pg_ctl -D "$D/data" -l "$D/log" -w start >/dev/null
psql -qX postgres <<SQL
CREATE TABLE t (id int PRIMARY KEY, n int, big text);
ALTER TABLE t ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO t SELECT g, 0, repeat(md5(g::text), 100) FROM generate_series(1, 20000) g;
SELECT 'init' FROM pg_create_logical_replication_slot('s', 'test_decoding');
UPDATE t SET n = n + 1;
UPDATE t SET n = n + 1;
UPDATE t SET n = n + 1;
SQL
for i in 1 2 3; do
	psql -qXAt postgres -c "\timing on" \
		-c "SELECT count(*) FROM pg_logical_slot_peek_changes('s', NULL, NULL)" | grep Time
done
