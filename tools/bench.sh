#!/usr/bin/env bash
# tools/bench.sh -- the benchmark suite, in one command.
#
# Builds (or reuses) the release PostgreSQL 18 server (no assertions) and
# the extension, starts a temporary instance (library preloaded), runs
# bench/run.py (benchmarks S, I, U, P, R, M, Y, Q, C and B of docs/benchmarks.md for
# every configuration: stock-*, partial-* and toaster-*; B for the first stock-*
# and the first toaster-* only), prints the comparison and writes the report,
# plots and results.jsonl.
#
#   tools/bench.sh [--out DIR] [--bench S,I,U,P,R,M,Y] [--configs stock-pglz,toaster-pglz]
#                  [--logical U,Y] [--scale 1.0] [--s-step 3] ...  (see bench/run.py --help)
#
# Then the benchmarks --logical names (U and Y by default, those of --bench
# only; --logical '' for none) run again on the instance restarted with
# wal_level = logical, into the same results.jsonl (their lines carry
# "wal_level": "logical") and report (section "Under wal_level = logical").
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
revision=
benches=S,I,U,P,R,M,Y,Q,C,B
logical=U,Y
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[i]} in
		--out) out=${args[i + 1]:?--out needs a directory} ;;
		--out=*) out=${args[i]#--out=} ;;
		--revision) revision=${args[i + 1]:-} ;;
		--bench) benches=${args[i + 1]:-} ;;
		--bench=*) benches=${args[i]#--bench=} ;;
		--logical) logical=${args[i + 1]:-} ;;
		--logical=*) logical=${args[i]#--logical=} ;;
	esac
done
# the benchmarks of --bench that --logical names, in --bench's order
again=
for b in ${benches//,/ }; do
	b=${b^^}
	case ",${logical^^}," in *",$b,"*) again=${again:+$again,}$b ;; esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The code measured, for the report: the commit, and how many files that
# go into the build differ from it.  (The run as $JT_USER works on a copy
# without .git, so the root run passes it on.)
if [ -z "$revision" ] && [ -d "$JT_TOP/.git" ]; then
	revision=$(git -C "$JT_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
	changed=$(git -C "$JT_TOP" status --porcelain -- src sql expected patches Makefile \
		jsonb_toaster.control 'jsonb_toaster--*.sql' 2>/dev/null | grep -c . || true)
	[ "$changed" = 0 ] || revision="$revision, with $changed uncommitted changed files in the build's sources"
	set -- "$@" --revision "$revision"
fi

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

if [ -n "$again" ]; then
	msg "restarting the benchmark instance with wal_level = logical for $again"
	stop_instance "$datadir" fast
	echo "wal_level = logical" >>"$datadir/postgresql.conf"
	(
		ulimit -v $((${JT_BENCH_VMEM_GB:-8} * 1024 * 1024))
		pg_ctl -D "$datadir" -l "$datadir.log" -w start >/dev/null
	) || { cat "$datadir.log" >&2; die "cannot restart the benchmark instance"; }
	/usr/bin/python3 "$JT_TOP/bench/run.py" "$@" --bench "$again" \
		--wal-level logical --append --out "$out" --work "$work"
fi
