#!/usr/bin/env bash
# tools/bench.sh -- the benchmark suite, in one command.
#
# Builds (or reuses) the release PostgreSQL 18 server (no assertions) and
# the extension, starts a temporary instance, runs bench/run.py (benchmarks
# S, I, U and P of BENCHMARKS.md for every available configuration), prints
# the comparison and writes the report, plots and results.jsonl.
#
#   tools/bench.sh [--out DIR] [--bench S,I,U,P] [--configs stock-pglz,stock-lz4]
#                  [--scale 1.0] [--s-step 3] ...     (see bench/run.py --help)
#
# The default output directory is bench/out/ (not committed).  The instance
# runs with a virtual memory limit per process (JT_BENCH_VMEM_GB, default 8),
# so that a query that would grow without bound fails with "out of memory"
# instead of waking the OOM killer.  Autovacuum is off: a background VACUUM
# of a freshly loaded table would add its WAL to whatever is being measured;
# the benchmarks VACUUM their tables themselves.

. "$(dirname "$0")/lib.sh"

args=("$@")
out=$JT_TOP/bench/out
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
		--out) out=${args[i + 1]:?--out needs a directory} ;;
		--out=*) out=${args[i]#--out=} ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "$(id -u)" = 0 ]; then
	# The unprivileged run writes into a directory of its own; the results
	# are copied to the requested place afterwards.
	ensure_runtime_user
	tmp_out=$(runuser -u "$JT_USER" -- mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_bench.XXXXXX")
	status=0
	run_as_user "$0" "$@" --out "$tmp_out" || status=$?
	cp -r "$tmp_out"/. "$out"/ && rm -rf "$tmp_out"
	msg "results in $out"
	exit $status
fi

ensure_packages $JT_BENCH_DEPS $JT_RUNTIME_DEPS
# JT_BENCH_FLAVOUR=assert checks the benchmark code quickly on the test
# build; its figures are not measurements (the report shows the build).
prefix=$("$JT_TOP/tools/build-server.sh" "${JT_BENCH_FLAVOUR:-release}")
export PATH="$prefix/bin:$PATH"

work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_bench.XXXXXX")
datadir=$work/data
cleanup()
{
	stop_instance "$datadir" immediate
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

build_extension "$prefix/bin/pg_config" "$work/build"

port=$(free_port)
msg "starting the benchmark instance on port $port"
(
	ulimit -v $((${JT_BENCH_VMEM_GB:-8} * 1024 * 1024))
	start_instance "$datadir" "$work" "$port" \
		"shared_buffers = 2GB" "max_wal_size = 20GB" "checkpoint_timeout = 1h" \
		"max_connections = 20" "log_min_messages = warning" "autovacuum = off"
)
export PGHOST=$work PGPORT=$port PGUSER=postgres PGDATABASE=postgres

# the report names the command that produced it, arguments included
JT_BENCH_COMMAND="tools/bench.sh$(printf ' %q' "$@")" \
	/usr/bin/python3 "$JT_TOP/bench/run.py" "$@" --out "$out" --work "$work"
