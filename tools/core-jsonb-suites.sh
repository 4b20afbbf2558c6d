#!/usr/bin/env bash
# tools/core-jsonb-suites.sh -- run PostgreSQL's own jsonb regression files
# through the toaster.
#
# Runs the files json, jsonb, jsonb_jsonpath, sqljson, sqljson_queryfuncs
# and sqljson_jsontable of PostgreSQL's src/test/regress with pg_regress in
# a database where every jsonb column opts in to jsonb_toaster and every
# table holding one has the smallest TOAST target, 128 bytes (an event
# trigger, test/core-suites/prepare.sql), with the smallest range size.
# Two passes: no inline budget (every value offered leaves whole), then the
# default budget (short fields stay in the skeleton, the rest leaves, in
# ranges) with every query JIT-compiled.  The outputs are compared with PostgreSQL's own expected files,
# overridden only by the files of test/core-suites/expected (each one
# justified in test/core-suites/README.md).
#
# Fails if an output differs, if a pass stored no value at all as a
# skeleton (it would prove nothing), or if the server log written during
# the run has a message of jsonb_toaster's of level WARNING or above (the
# toaster warns when it declines a value it could not give back exactly: a
# bug), an assertion failure, a crash or a PANIC.
#
# Needs a running instance of a patched server with the library preloaded
# and the extension installed; libpq's PGHOST, PGPORT and PGUSER say where
# (PGUSER must be a superuser: event triggers).  Environment:
#   PG_CONFIG         the server's pg_config (default: the one in PATH)
#   CORE_REGRESS_DIR  src/test/regress of the server's build tree (sql/,
#                     expected/, data/; default: the tree
#                     tools/build-server.sh kept for that installation)
#   JT_SERVER_LOG     the instance's log file, to check (optional)
# Argument: a directory for the outputs (default: a new temporary one),
# left in place.

. "$(dirname "$0")/lib.sh"

pg_config=${PG_CONFIG:-pg_config}
bindir=$("$pg_config" --bindir)
prefix=$(cd "$bindir/.." && pwd)
regress=${CORE_REGRESS_DIR:-$JT_CACHE/build/$(basename "$prefix")/src/test/regress}
[ -f "$regress/sql/jsonb.sql" ] || die "no PostgreSQL regression files in $regress (set CORE_REGRESS_DIR)"
pg_regress=$("$pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress
[ -x "$pg_regress" ] || pg_regress=$regress/pg_regress
[ -x "$pg_regress" ] || die "no pg_regress for $pg_config"

out=${1:-}
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_core_suites.XXXXXX")
fi
mkdir -p "$out"
db=jsonb_toaster_core_suites

# The files that exist in this PostgreSQL version, in the order of its
# parallel schedule.  None of them needs test_setup's objects.
tests=()
for t in json jsonb jsonb_jsonpath sqljson sqljson_queryfuncs sqljson_jsontable; do
	if [ -f "$regress/sql/$t.sql" ]; then
		tests+=("$t")
	fi
done

# Stock's expected outputs (with their alternatives), then ours over them.
rm -rf "$out/expected"
mkdir -p "$out/expected"
for t in "${tests[@]}"; do
	cp "$regress/expected/$t".out "$out/expected/"
	for f in "$regress/expected/$t"_[0-9].out; do
		if [ -e "$f" ]; then
			cp "$f" "$out/expected/"
		fi
	done
done
overrides=()
for f in "$JT_TOP"/test/core-suites/expected/*.out; do
	[ -e "$f" ] || continue
	cp "$f" "$out/expected/"
	overrides+=("$(basename "$f")")
done

psql_db()
{
	"$bindir/psql" -X -q -v ON_ERROR_STOP=1 -d "$1" "${@:2}"
}

log_start=0
if [ -n "${JT_SERVER_LOG:-}" ]; then
	[ -f "$JT_SERVER_LOG" ] || die "no server log $JT_SERVER_LOG"
	log_start=$(stat -c %s "$JT_SERVER_LOG")
fi

# run_pass name [setting=value...]: a fresh database as pg_regress would
# create it (same settings) plus the toaster's settings, the given ones and
# the opt-in trigger; the suites in it; the census.  Sets status=1 on
# failure.
run_pass()
{
	local name=$1 dir=$out/$1 setting forms skeletons
	shift
	mkdir -p "$dir"
	msg "core jsonb suites, pass $name: range_size 64, toast_tuple_target 128${*:+, $*}"
	{
		echo "SET client_min_messages = warning;"
		echo "DROP DATABASE IF EXISTS $db WITH (FORCE);"
		echo "CREATE DATABASE $db TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C';"
		for setting in lc_messages=C lc_monetary=C lc_numeric=C lc_time=C \
			bytea_output=hex timezone_abbreviations=Default \
			jsonb_toaster.range_size=64 "$@"; do
			echo "ALTER DATABASE $db SET ${setting%%=*} TO '${setting#*=}';"
		done
	} | psql_db postgres &&
		psql_db "$db" -f "$JT_TOP/test/core-suites/prepare.sql" >/dev/null || {
		status=1
		echo "core jsonb suites, pass $name: cannot prepare database $db" >&2
		return 0
	}

	if ! "$pg_regress" --use-existing --dbname="$db" --bindir="$bindir" \
		--inputdir="$regress" --expecteddir="$out" --outputdir="$dir" \
		${PGHOST:+--host="$PGHOST"} ${PGPORT:+--port="$PGPORT"} \
		${PGUSER:+--user="$PGUSER"} "${tests[@]}"; then
		status=1
		echo "core jsonb suites, pass $name: outputs differ from PostgreSQL's (overrides: ${overrides[*]:-none})" >&2
		if [ -f "$dir/regression.diffs" ]; then
			cat "$dir/regression.diffs"
		fi
	fi

	# last census, then the totals
	if ! psql_db "$db" -c 'SELECT jt_core_suites_take_census()' >/dev/null ||
		! psql_db "$db" -c "SELECT relname, attname, form, n, parts FROM jt_core_suites_census ORDER BY 1, 2, 3" \
			>"$dir/census.txt" ||
		! forms=$(psql_db "$db" -At -c "SELECT string_agg(format('%s %s (%s parts)', form, n, parts), ', ' ORDER BY form)
			FROM (SELECT form, sum(n) AS n, sum(parts) AS parts FROM jt_core_suites_census GROUP BY 1) f") ||
		! skeletons=$(psql_db "$db" -At -c "SELECT coalesce(sum(n), 0) FROM jt_core_suites_census WHERE form = 'skeleton'"); then
		status=1
		echo "core jsonb suites, pass $name: cannot take the census" >&2
		return 0
	fi
	msg "core jsonb suites, pass $name: stored values by form: ${forms:-none}"
	if [ "$skeletons" -eq 0 ]; then
		status=1
		echo "core jsonb suites, pass $name: no value was stored as a skeleton: the pass proves nothing" >&2
		cat "$dir/census.txt" >&2
	fi
	total_skeletons=$((total_skeletons + skeletons))
}

status=0
total_skeletons=0
msg "core jsonb suites: ${tests[*]}"
# With no inline budget every value offered leaves whole: the tree is a
# single reference.  With the default budget, bounded by the room the TOAST
# target of 128 bytes leaves the column, short fields stay in the tree and
# the rest leaves, wide containers in ranges of about 64 bytes; that pass
# also compiles every query's expressions with JIT where the server has it
# (the builtin override's JIT path; inlining and optimisation would cost
# minutes).
run_pass budget-0 jsonb_toaster.inline_budget=0
run_pass budget-default jit_above_cost=0

if [ -n "${JT_SERVER_LOG:-}" ]; then
	tail -c +"$((log_start + 1))" "$JT_SERVER_LOG" >"$out/server.log"
	if grep -E 'TRAP:|terminated by signal|PANIC:|(WARNING|ERROR|FATAL): .*jsonb_toaster' \
		"$out/server.log" >"$out/server-log-problems.txt"; then
		echo "core jsonb suites: the server log has problems:" >&2
		grep -E -B2 -A8 'TRAP:|terminated by signal|PANIC:|(WARNING|ERROR|FATAL): .*jsonb_toaster' \
			"$out/server.log" | head -n 200 >&2
		status=1
	fi
fi

if [ $status -eq 0 ]; then
	msg "core jsonb suites: passed (${#tests[@]} files, two passes, $total_skeletons skeleton values); outputs in $out"
else
	msg "core jsonb suites: FAILED; outputs in $out"
fi
exit $status
