#!/usr/bin/env bash
# tools/test-citus.sh -- the toaster on a Citus cluster: a coordinator and
# two workers on this machine, every node preloading citus and
# jsonb_toaster, wal_level = logical (what online shard moves need).
#
# Builds (or reuses) Citus against the patched assertion build
# (tools/build-citus.sh), installs the extension into that copy, starts the
# three nodes and runs test/citus/*.sql on the coordinator in order, with
# background updates while shards are moved (block_writes and logical), a
# shard is split and the cluster drained and rebalanced.  After each step the
# documents must equal a reference table's, and every placement's column
# must be opted in and hold only the toaster's values
# (test/citus/checks.sql).  Exits non-zero on any failure or if a server
# log shows an assertion failure or a crash.
#
# Needs Citus's source (JT_CITUS_TARBALL, see tools/build-citus.sh).
# KEEP_TMP=1 keeps the cluster's directory (the nodes are stopped).

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"
ensure_packages $JT_RUNTIME_DEPS

prefix=$("$JT_TOP/tools/build-citus.sh" assert)
export PATH="$prefix/bin:$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_citus.XXXXXX")
nodes=(coordinator worker1 worker2)
ports=()
cleanup()
{
	local n
	for n in "${nodes[@]}"; do stop_instance "$work/$n" immediate; done
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

build_extension "$prefix/bin/pg_config" "$work/build"

for n in "${nodes[@]}"; do
	port=$(free_port)
	ports+=("$port")
	initdb -D "$work/$n" -A trust --no-sync -U postgres >"$work/$n.initdb.log" 2>&1 ||
		{ cat "$work/$n.initdb.log" >&2; die "initdb failed"; }
	cat >>"$work/$n/postgresql.conf" <<CONF
port = $port
listen_addresses = 'localhost'
unix_socket_directories = '$work'
shared_preload_libraries = 'citus,jsonb_toaster'
wal_level = logical
max_connections = 60
max_wal_senders = 20
max_replication_slots = 20
# shard splits decode through Citus's own output plugin
output_plugin_libraries = 'pgoutput, test_decoding, citus'
fsync = off
citus.log_remote_commands = off
CONF
	pg_ctl -D "$work/$n" -l "$work/$n.log" -w start >/dev/null ||
		{ cat "$work/$n.log" >&2; die "cannot start $n"; }
done

# psql on the coordinator (or on a node given as -p)
q()
{
	psql -X -q -h "$work" -U postgres -v ON_ERROR_STOP=1 -p "${ports[0]}" "$@"
}

msg "Citus cluster: coordinator on ${ports[0]}, workers on ${ports[1]} and ${ports[2]}"
for p in "${ports[@]}"; do q -p "$p" -c "CREATE EXTENSION citus"; done
q <<SQL
SELECT citus_set_coordinator_host('localhost', ${ports[0]});
SELECT citus_add_node('localhost', ${ports[1]});
SELECT citus_add_node('localhost', ${ports[2]});
SQL

# updates that run while the cluster changes: document id (i % 200) + 1
# gets i at key "n", one transaction each, until $work/stop exists; the
# count is left in $work/updates so that the reference gets the same
updates_start()
{
	rm -f "$work/stop"
	(
		i=0
		while [ ! -f "$work/stop" ]; do
			i=$((i + 1))
			echo "UPDATE d SET jb = jsonb_set(jb, '{n}', '$i') WHERE id = $((i % 200 + 1));"
			echo "$i" >"$work/updates"
		done | q -o /dev/null
	) &
	updates_pid=$!
	# let them start before the cluster changes
	sleep 2
}
updates_stop()
{
	touch "$work/stop"
	wait "$updates_pid" || die "updates failed while the cluster changed"
	local n
	n=$(cat "$work/updates")
	msg "$n updates ran meanwhile"
	q -c "SELECT replay_updates($n)"
}

failed=0
step()
{
	local file=$1
	msg "step ${file%.sql}"
	if ! q -f "$JT_TOP/test/citus/$file" >"$work/${file%.sql}.out" 2>&1; then
		cat "$work/${file%.sql}.out"
		die "step ${file%.sql} failed"
	fi
	cat "$work/${file%.sql}.out"
}

step setup.sql
step checks.sql

# move_first_shard from to mode: d's first shard on port from to port to
move_first_shard()
{
	q -c "SELECT citus_move_shard_placement(s.shardid, 'localhost', $1, 'localhost', $2, '$3')
	FROM (SELECT shardid FROM pg_dist_shard_placement JOIN pg_dist_shard USING (shardid)
		  WHERE logicalrelid = 'd'::regclass AND nodeport = $1 ORDER BY shardid LIMIT 1) s"
}

# a shard moved with writes blocked, then one moved by logical replication
updates_start
move_first_shard "${ports[1]}" "${ports[2]}" block_writes
updates_stop
step checks.sql
updates_start
move_first_shard "${ports[2]}" "${ports[1]}" force_logical
updates_stop
step checks.sql

# shards split in two: with writes blocked while updates run, then by
# logical replication with no writes running (Citus's logical split stalls
# under concurrent writes: citusdata/citus#6790, on stock PostgreSQL too)
split_first_shard()
{
	q -c "SELECT citus_split_shard_by_split_points(s.shardid,
		ARRAY[((s.shardminvalue::bigint + s.shardmaxvalue::bigint) / 2)::text],
		ARRAY[(SELECT nodeid FROM pg_dist_node WHERE nodeport = ${ports[1]}),
			  (SELECT nodeid FROM pg_dist_node WHERE nodeport = ${ports[2]})],
		'$1')
	FROM (SELECT shardid, shardminvalue, shardmaxvalue FROM pg_dist_shard
		  WHERE logicalrelid = 'd'::regclass ORDER BY shardminvalue::bigint LIMIT 1) s"
}
updates_start
split_first_shard block_writes
updates_stop
step checks.sql
split_first_shard force_logical
step checks.sql

# the second worker drained, then the cluster rebalanced
updates_start
q -c "SELECT citus_drain_node('localhost', ${ports[2]})"
q -c "SELECT citus_set_node_property('localhost', ${ports[2]}, 'shouldhaveshards', true)"
q -c "SELECT rebalance_table_shards()"
updates_stop
q -c "SELECT nodeport, count(*) FROM pg_dist_shard_placement JOIN pg_dist_shard USING (shardid)
	WHERE logicalrelid = 'd'::regclass GROUP BY 1 ORDER BY 1"
step checks.sql

# a table distributed first, opted in afterwards
step opt_in_later.sql

for n in "${nodes[@]}"; do
	if grep -E 'TRAP:|terminated by signal|PANIC' "$work/$n.log"; then
		failed=1
		echo "problems in the log of $n" >&2
	fi
done
[ "$failed" = 0 ] || die "the Citus test failed"
msg "the Citus test passed"
