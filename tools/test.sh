#!/usr/bin/env bash
# tools/test.sh -- run every test of the project, in one command.
#
# Builds (or reuses) the assertion-enabled PostgreSQL 18 server, builds and
# installs the extension into it, starts a temporary instance with
# shared_preload_libraries = 'jsonb_toaster', runs the pg_regress suite
# (sql/, expected/) against it, runs the TAP tests (t/, which make their own
# clusters), stops everything, prints the diffs and logs of any failure and
# exits non-zero if anything failed.
#
# Run as root, it installs the build dependencies, then continues as an
# unprivileged user (PostgreSQL does not run as root).
#
# Environment: PG_SRC=/path/to/postgres builds from that tree instead of the
# Debian source package; JSONB_TOASTER_CACHE moves the cache (default
# ~/.cache/jsonb_toaster); KEEP_TMP=1 keeps the temporary directory.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"
ensure_packages $JT_RUNTIME_DEPS
prefix=$("$JT_TOP/tools/build-server.sh" assert)
pg_config=$prefix/bin/pg_config
export PATH="$prefix/bin:$PATH"

work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_test.XXXXXX")
datadir=$work/data
build=$work/build
cleanup()
{
	stop_instance "$datadir" immediate
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

build_extension "$pg_config" "$build"
# test-only helpers used by the regression tests (never installed elsewhere)
build_extension "$pg_config" "$work/test_module" test/modules/jsonb_toaster_test

port=$(free_port)
msg "starting a temporary instance on port $port"
start_instance "$datadir" "$work" "$port" "fsync = off" "max_connections = 20"

failed=()
make_ext()
{
	make -C "$build" -f "$JT_TOP/Makefile" VPATH="$JT_TOP" PG_CONFIG="$pg_config" "$@"
}

msg "running pg_regress"
if ! PGHOST=$work PGPORT=$port PGUSER=postgres make_ext TAP_TESTS= installcheck; then
	failed+=("pg_regress")
	[ -f "$build/regression.diffs" ] && cat "$build/regression.diffs"
fi

msg "running TAP tests"
if ! make_ext REGRESS= installcheck; then
	failed+=("TAP")
	for f in "$build"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] || continue
		echo "===== $f"
		tail -n 60 "$f"
	done
fi

stop_instance "$datadir"
if grep -E 'TRAP:|terminated by signal|PANIC' "$datadir.log"; then
	failed+=("server log")
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "All tests passed."
