#!/usr/bin/env bash
# tools/ab-library.sh -- time two revisions of the library on one server.
#
#   tools/ab-library.sh [-r ROUNDS] [-n RUNS] REV_A REV_B -- PGBENCH_ARGS...
#
# Builds the extension at git revisions REV_A and REV_B against the
# release server of tools/dev-instance.sh, then, ROUNDS times (default 3),
# installs each in turn, restarts the instance and runs
# "pgbench -n PGBENCH_ARGS" RUNS times (default 3), printing pgbench's
# latency average of each run.  The instance must be running
# (tools/dev-instance.sh start release) and hold the tables the pgbench
# script reads; the library of the work tree is installed again at the
# end.  By-hand comparisons of code changes in the docs name this command.
#
#   tools/ab-library.sh HEAD~1 HEAD -- -t 3 -f bench/S/key_access.sql \
#       -D tab=s -D id=100 -D key=key2 -D reps=10
. "$(dirname "$0")/lib.sh"

rounds=3
runs=3
while getopts r:n: opt; do
	case $opt in
		r) rounds=$OPTARG ;;
		n) runs=$OPTARG ;;
		*) die "usage: $0 [-r ROUNDS] [-n RUNS] REV_A REV_B -- PGBENCH_ARGS..." ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] && [ "$3" = -- ] ||
	die "usage: $0 [-r ROUNDS] [-n RUNS] REV_A REV_B -- PGBENCH_ARGS..."
revs=("$1" "$2")
shift 3
if [ -z "${JT_AB_SOURCES:-}" ]; then
	# named by their commits from here on
	for i in 0 1; do
		revs[$i]=$(git -C "$JT_TOP" rev-parse --short "${revs[$i]}^{commit}") ||
			die "not a revision: ${revs[$i]}"
	done
fi

# the revisions' sources, exported where the user running the server can
# read them (the drivers run on a copy of the work tree, without .git)
if [ -z "${JT_AB_SOURCES:-}" ]; then
	JT_AB_SOURCES=$(mktemp -d)
	for i in 0 1; do
		git -C "$JT_TOP" archive --prefix="src$i/" "${revs[$i]}" |
			tar -x -C "$JT_AB_SOURCES"
	done
	chmod -R a+rX "$JT_AB_SOURCES"
	status=0
	JT_AB_SOURCES=$JT_AB_SOURCES "$0" -r "$rounds" -n "$runs" "${revs[@]}" -- "$@" ||
		status=$?
	rm -rf "$JT_AB_SOURCES"
	exit $status
fi
drop_root "$0" -r "$rounds" -n "$runs" "${revs[@]}" -- "$@"

prefix=$("$JT_TOP/tools/build-server.sh" release)
export PATH="$prefix/bin:$PATH" PGHOST=$JT_CACHE/dev-release PGPORT=5419 \
	PGUSER=postgres PGDATABASE=postgres
datadir=$PGHOST/data
pg_ctl -D "$datadir" status >/dev/null ||
	die "the release dev instance is not running (tools/dev-instance.sh start release)"
libdir=$(pg_config --pkglibdir)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# each revision's library
for i in 0 1; do
	mkdir -p "$work/build$i/src"
	make -s -C "$work/build$i" -f "$JT_AB_SOURCES/src$i/Makefile" \
		VPATH="$JT_AB_SOURCES/src$i" \
		PG_CONFIG="$prefix/bin/pg_config" COPT=-Werror all \
		>"$work/build$i.log" 2>&1 || { cat "$work/build$i.log" >&2; die "build of ${revs[$i]} failed"; }
done

for round in $(seq "$rounds"); do
	for i in 0 1; do
		install -m 755 "$work/build$i/jsonb_toaster.so" "$libdir/jsonb_toaster.so"
		pg_ctl -D "$datadir" -l "$datadir.log" restart -m fast -w >/dev/null
		for run in $(seq "$runs"); do
			pgbench -n "$@" 2>&1 | awk -v rev="${revs[$i]}" -v r="$round" \
				'/^latency average/ { print "round " r " " rev ": " $4 " ms" }'
		done
	done
done

# back to the work tree's library
build_extension "$prefix/bin/pg_config" "$work/build-tree" >/dev/null
pg_ctl -D "$datadir" -l "$datadir.log" restart -m fast -w >/dev/null
