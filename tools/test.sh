#!/usr/bin/env bash
# tools/test.sh -- run every test of the project, in one command.
#
# 1. Builds (or reuses) the assertion-enabled PostgreSQL 18 server, builds
#    and installs the extension into it, starts a temporary instance with
#    shared_preload_libraries = 'jsonb_toaster', runs the pg_regress suite
#    (sql/, expected/) against it, then PostgreSQL's own jsonb regression
#    files with every jsonb column stored by the toaster
#    (tools/core-jsonb-suites.sh), and the TAP tests (t/, which make their
#    own clusters).
# 2. Builds the fuzzers (fuzz/, clang + libFuzzer), replays the inputs kept
#    in fuzz/regressions and fuzzes each target briefly (JT_FUZZ_SECONDS,
#    default 30).
# 3. Runs the pg_regress suite again on a stock, unpatched server: Debian
#    12's postgresql-15 packages (the stock-mode features must work there).
# 4. Checks META.json (tools/check-meta.py), builds the Debian package
#    (stock mode, tools/build-deb.sh), unpacks it into a private copy of
#    PostgreSQL 15 and runs pg_regress there.
# 5. Runs the toaster on a Citus cluster (tools/test-citus.sh), when
#    Citus's source is beside the work tree (tools/build-citus.sh).
# 6. Runs PostgreSQL's own suites in the patched assertion build's tree:
#    the main regression suite (make check), contrib/amcheck and
#    contrib/pageinspect, and the test modules of the patch series.  With no
#    toaster loaded, the patched server must pass them unchanged.
#
# Stops everything, prints the diffs and logs of any failure and exits
# non-zero if anything failed.  JT_TEST_ONLY=pg18|fuzz|pg15|deb|citus|core runs one
# part; JT_REGRESS="a b" runs only those pg_regress files on PostgreSQL 18,
# JT_PROVE_TESTS="t/003_x.pl" only those TAP scripts, and JT_PG18_PARTS
# (default "regress core tap") only those parts of the PostgreSQL 18 step.
#
# Run as root, it installs the build dependencies, then continues as an
# unprivileged user (PostgreSQL does not run as root).
#
# Environment: PG_SRC=/path/to/postgres builds from that tree instead of the
# Debian source package; JSONB_TOASTER_CACHE moves the cache (default
# ~/.cache/jsonb_toaster); KEEP_TMP=1 keeps the temporary directory.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"
ensure_packages $JT_RUNTIME_DEPS $JT_TEST_DEPS
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

port=$(free_port)
msg "starting a temporary instance on port $port"
start_instance "$datadir" "$work" "$port" "fsync = off" "max_connections = 20"

failed=()
# server_log_clean log: no assertion failure, crash or PANIC in it
server_log_clean()
{
	! grep -E 'TRAP:|terminated by signal|PANIC' "$1"
}
make_ext()
{
	make -C "$build" -f "$JT_TOP/Makefile" VPATH="$JT_TOP" PG_CONFIG="$pg_config" "$@"
}
want()
{
	[ -z "${JT_TEST_ONLY:-}" ] || [ "$JT_TEST_ONLY" = "$1" ]
}
want18()
{
	case " ${JT_PG18_PARTS:-regress core tap} " in *" $1 "*) return 0 ;; esac
	return 1
}

# copy_pg15 root: a private copy of Debian's PostgreSQL 15 under root.
# PostgreSQL finds its libraries and share files relative to its binaries,
# so the copy takes our extension without writing to system directories.
copy_pg15()
{
	local root=$1 d
	for d in /usr/lib/postgresql/15 /usr/share/postgresql/15 /usr/include/postgresql; do
		mkdir -p "$root$(dirname "$d")"
		cp -a "$d" "$root$d"
	done
}
# regress_on bindir build data port what: the regression files, from the
# build directory build, against a temporary instance of the server in
# bindir (data directory data, left running); a failure is recorded as
# "pg_regress on what"
regress_on()
{
	local bindir=$1 build=$2 data=$3 port=$4 what=$5
	mkdir -p "$build"
	PATH="$bindir:$PATH" start_instance "$data" "$work" "$port" \
		"fsync = off" "max_connections = 20"
	if ! PGHOST=$work PGPORT=$port PGUSER=postgres \
		make -C "$build" -f "$JT_TOP/Makefile" VPATH="$JT_TOP" \
		PG_CONFIG="$bindir/pg_config" TAP_TESTS= installcheck; then
		failed+=("pg_regress on $what")
		[ -f "$build/regression.diffs" ] && cat "$build/regression.diffs"
	fi
}

if want pg18 && want18 regress; then
	msg "PostgreSQL 18 (assertions): running pg_regress"
	if ! PGHOST=$work PGPORT=$port PGUSER=postgres make_ext TAP_TESTS= \
		${JT_REGRESS:+"REGRESS=$JT_REGRESS"} installcheck; then
		failed+=("pg_regress on 18")
		[ -f "$build/regression.diffs" ] && cat "$build/regression.diffs"
		[ -f "$build/output_iso/regression.diffs" ] &&
			cat "$build/output_iso/regression.diffs"
	fi
fi
if want pg18 && want18 core; then
	msg "PostgreSQL 18 (assertions): PostgreSQL's jsonb suites through the toaster"
	# tools/core-jsonb-suites.sh prints the diffs, the census of skeleton
	# values and the server log's problems itself
	if ! PGHOST=$work PGPORT=$port PGUSER=postgres PG_CONFIG=$pg_config \
		CORE_REGRESS_DIR=$JT_CACHE/build/$(basename "$prefix")/src/test/regress \
		JT_SERVER_LOG=$datadir.log \
		"$JT_TOP/tools/core-jsonb-suites.sh" "$work/core-jsonb-suites"; then
		failed+=("PostgreSQL's jsonb suites through the toaster on 18")
	fi
fi
if want pg18 && want18 tap; then
	msg "PostgreSQL 18 (assertions): running TAP tests"
	# the assertion build carries the patch series: the toaster's parts
	# must be built (t/002_build_detection.pl); an unpatched 18 subscribes
	# to the toaster's publications (t/012_toaster_replication.pl)
	stock18=$("$JT_TOP/tools/build-server.sh" stock)
	if ! JT_EXPECT_CUSTOM_TOAST=1 JT_STOCK18="$stock18" make_ext REGRESS= \
		${JT_PROVE_TESTS:+"PROVE_TESTS=$JT_PROVE_TESTS"} installcheck; then
		failed+=("TAP on 18")
		for f in "$build"/tmp_check/log/regress_log_*; do
			[ -f "$f" ] || continue
			echo "===== $f"
			tail -n 60 "$f"
		done
	fi
fi
stop_instance "$datadir"
server_log_clean "$datadir.log" || failed+=("server log of 18")

if want fuzz; then
	msg "fuzzers: replaying fuzz/regressions, then fuzzing ${JT_FUZZ_SECONDS:-30} s per target"
	fuzzdir=$work/fuzz
	cp -r "$JT_TOP/fuzz" "$fuzzdir"
	ln -s "$JT_TOP/src" "$work/src"
	if ! make -s -C "$fuzzdir" PG_CONFIG="$pg_config" run \
		SECONDS="${JT_FUZZ_SECONDS:-30}" >"$work/fuzz.log" 2>&1; then
		failed+=("fuzzers")
		tail -n 60 "$work/fuzz.log"
		ls "$fuzzdir"/regressions/*/ 2>/dev/null
	else
		grep -E '^== |Done [0-9]+ runs' "$work/fuzz.log"
	fi
fi

if want pg15; then
	# A stock server from the distribution: the partial-access features
	# need no core patch.
	[ -x /usr/lib/postgresql/15/bin/postgres ] &&
		[ -d /usr/lib/postgresql/15/lib/pgxs ] ||
		die "PostgreSQL 15 packages missing (postgresql-15 postgresql-server-dev-15)"
	root15=$work/pg15
	copy_pg15 "$root15"
	pg15=$root15/usr/lib/postgresql/15/bin
	msg "PostgreSQL 15 (stock, Debian): running pg_regress"
	build_extension "$pg15/pg_config" "$work/build15"
	port15=$(free_port)
	regress_on "$pg15" "$work/build15" "$work/data15" "$port15" 15
	# a stock server: the build must leave the toaster's parts out
	custom15=$(PGHOST=$work PGPORT=$port15 "$pg15/psql" -X -At -U postgres -d postgres \
		-c 'CREATE EXTENSION IF NOT EXISTS jsonb_toaster' \
		-c 'SELECT jsonb_toaster_custom_toast()' 2>&1 | tail -n 1)
	if [ "$custom15" != f ]; then
		failed+=("build detection on 15")
		echo "jsonb_toaster_custom_toast() on PostgreSQL 15: $custom15"
	fi
	PATH="$pg15:$PATH" stop_instance "$work/data15"
	server_log_clean "$work/data15.log" || failed+=("server log of 15")
fi

if want core; then
	# The tree tools/build-server.sh built the server in, kept in the cache.
	coretree=$JT_CACHE/build/$(basename "$prefix")
	[ -f "$coretree/GNUmakefile" ] || die "no build tree at $coretree"
	core_suites="src/test/regress src/test/isolation contrib/amcheck contrib/pageinspect"
	while IFS= read -r m; do
		core_suites="$core_suites $(sed -n 's|^+++ b/\(src/test/modules/[^/]*\)/Makefile$|\1|p' "$m")"
	done < <(series_patches)
	msg "PostgreSQL $JT_PG_MAJOR (patched): what binary modules built against stock headers see"
	if ! "$JT_TOP/tools/check-abi.sh" "$coretree" >"$work/abi.log" 2>&1; then
		failed+=("binary compatibility of the headers")
	fi
	tail -n 20 "$work/abi.log"
	msg "the series' cover letter: its shortlog and diffstat against the patches"
	if ! "$JT_TOP/tools/format-series.sh" --check >"$work/format-series.log" 2>&1; then
		failed+=("the cover letter is not current (tools/format-series.sh)")
		tail -n 5 "$work/format-series.log"
	fi
	# a module touched by several patches is run once
	core_suites=$(printf '%s\n' $core_suites | awk '!seen[$0]++')
	for suite in $core_suites; do
		msg "PostgreSQL $JT_PG_MAJOR (patched, assertions): make check in $suite"
		if ! make -C "$coretree/$suite" check >"$work/core-$(basename "$suite").log" 2>&1; then
			failed+=("core $suite")
			tail -n 30 "$work/core-$(basename "$suite").log"
			find "$coretree/$suite" -name regression.diffs -newer "$work/data.log" \
				-exec head -n 100 {} \; 2>/dev/null
		else
			grep -E '^# All [0-9]+ tests passed|^Result: PASS' \
				"$work/core-$(basename "$suite").log" | sed "s|^|$suite: |"
		fi
	done
fi

if want deb; then
	# The Debian package, built as Debian builds extensions (its build runs
	# the regression suite on a temporary cluster, tools/build-deb.sh),
	# unpacked into a fresh private copy of PostgreSQL 15: the suite again,
	# against what the package installed.
	msg "META.json against the PGXN Meta Spec 1.0.0"
	python3 "$JT_TOP/tools/check-meta.py" "$JT_TOP/META.json" || failed+=("META.json")
	msg "Debian package: building postgresql-15-jsonb-toaster"
	if ! debs=$("$JT_TOP/tools/build-deb.sh" "$work/debs" 2>"$work/deb.log"); then
		failed+=("Debian package build")
		tail -n 60 "$work/deb.log"
	else
		rootdeb=$work/pgdeb
		copy_pg15 "$rootdeb"
		deb=$(printf '%s\n' $debs | grep -v dbgsym | head -n 1)
		dpkg-deb -x "$deb" "$rootdeb"
		pgdeb=$rootdeb/usr/lib/postgresql/15/bin
		msg "Debian package: installed $(basename "$deb"); running pg_regress"
		regress_on "$pgdeb" "$work/builddeb" "$work/datadeb" "$(free_port)" \
			"the Debian package"
		PATH="$pgdeb:$PATH" stop_instance "$work/datadeb"
		server_log_clean "$work/datadeb.log" || failed+=("server log of the Debian package's run")
	fi
fi

if want citus; then
	# a cluster of three nodes; Citus's source sits beside the work tree
	if [ -f "${JT_CITUS_TARBALL:-}" ]; then
		if ! "$JT_TOP/tools/test-citus.sh" >"$work/citus.log" 2>&1; then
			failed+=("Citus")
			tail -n 60 "$work/citus.log"
		else
			grep -E '^\[jsonb_toaster\] (step|the Citus)' "$work/citus.log"
		fi
	else
		msg "SKIPPED: the Citus test (no Citus source at '${JT_CITUS_TARBALL:-}')"
	fi
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "All tests passed."
