#!/usr/bin/env bash
# tools/check-patches.sh -- check the core patch series.
#
#   tools/check-patches.sh          # applies; cover letter current; size
#   tools/check-patches.sh --each   # and each patch alone builds and passes
#
# Applies the series (patches/postgresql-18/v*-00NN-*.patch) in order to
#   1. the upstream tarball of Debian's postgresql-18 source package, and
#   2. the same tree with the Debian packaging patches (debian/patches/series)
#      applied first, as a Debian rebuild of the package would see it;
# checks that the cover letter's shortlog and diffstat are current
# (tools/format-series.sh --check), then prints the diffstat of the core
# changes with tests and documentation left out, the part a reviewer reads
# as code.
#
# With --each, the pristine source is configured once (assertions, TAP
# tests, header dependencies) and built, then the patches are applied one at
# a time, the tree rebuilt after each: every patch must build without a
# warning the pristine build does not have, and pass, with the patches
# before it only, PostgreSQL's regression suite and the suites of the
# directories it touches (its test modules, isolation, pg_dump, amcheck,
# pageinspect).  About an hour on 2 cores; logs are kept in the directory
# printed at the end.  Meson's build files are not exercised.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

each=false
case ${1:-} in
	'') ;;
	--each) each=true ;;
	*) die "usage: $0 [--each]" ;;
esac

src=$("$JT_TOP/tools/fetch-pg-source.sh")
work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_patches.XXXXXX")
trap 'rm -rf "$work"' EXIT

apply_series()
{
	apply_patch_series "$1" "$2"
	msg "the series applies cleanly to $2"
}

cp -a "$src" "$work/upstream"
apply_series "$work/upstream" "the upstream tarball"

debian_tar=$(ls "$JT_CACHE"/apt/downloads/postgresql-${JT_PG_MAJOR}_*.debian.tar.* 2>/dev/null | head -n 1)
if [ -n "$debian_tar" ] && [ -z "${PG_SRC:-}" ]; then
	cp -a "$src" "$work/debian"
	tar -C "$work/debian" -xf "$debian_tar"
	while read -r p; do
		case $p in '' | '#'*) continue ;; esac
		patch -d "$work/debian" -p1 --batch -s <"$work/debian/debian/patches/$p" ||
			die "Debian patch $p does not apply"
	done <"$work/debian/debian/patches/series"
	apply_series "$work/debian" "the Debian source package ($(basename "$debian_tar"))"
else
	msg "no Debian packaging found; checked the upstream tree only"
fi

# Size of the core changes, tests and docs aside
mkdir -p "$work/a"
cp -a "$src/src" "$src/contrib" "$work/a/"
(cd "$work" && diff -ruN a/src upstream/src; diff -ruN a/contrib upstream/contrib) \
	>"$work/core.diff" || true
msg "core changes outside tests and docs (lines added/removed per file):"
awk '
	/^\+\+\+ / { file = $2; sub("^upstream/", "", file);
		skip = (file ~ "^src/test/|/t/|/sql/|/expected/"); next }
	/^--- / { next }
	skip { next }
	/^\+/ { add[file]++; tadd++ } /^-/ { del[file]++; tdel++ }
	END { for (f in add) printf "  %-50s +%d -%d\n", f, add[f], del[f];
		for (f in del) if (!(f in add)) printf "  %-50s +0 -%d\n", f, del[f];
		printf "  total: +%d -%d lines\n", tadd, tdel }
' "$work/core.diff" | sort

"$JT_TOP/tools/format-series.sh" --check
msg "the cover letter's shortlog and diffstat are current"

$each || exit 0

# The suites a patch's changes call for: its test modules, and the suites
# of the other directories it touches that have their own.
patch_suites()
{
	sed -n 's|^+++ b/||p' "$1" | awk -F/ '
		$1 == "src" && $2 == "test" && $3 == "modules" && NF > 4 { print $1 "/" $2 "/" $3 "/" $4; next }
		$1 == "src" && $2 == "test" && $3 == "isolation" { print "src/test/isolation"; next }
		$1 == "src" && $2 == "bin" && $3 == "pg_dump" { print "src/bin/pg_dump"; next }
		$1 == "contrib" && NF > 2 { print $1 "/" $2 }' | sort -u
}

# Warnings of a build log, without their line numbers, one per line.
warnings()
{
	grep -h 'warning:' "$@" 2>/dev/null | sed 's/:[0-9]*:[0-9]*: warning:/: warning:/' | sort -u || true
}

# make in the tree, quietly, logging to $1; the rest are make's arguments
make_logged()
{
	local log=$1
	shift
	make -C "$tree" -s -j"$jobs" "$@" >>"$log" 2>&1
}

logs=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_each.XXXXXX")
tree=$work/each
jobs=$(nproc 2>/dev/null || echo 2)
mapfile -t patches < <(series_patches)
ensure_packages $JT_BUILD_DEPS
cp -a "$src" "$tree"
msg "configuring and building the pristine source; logs in $logs"
(cd "$tree" && ./configure --prefix="$work/each-install" --enable-cassert \
	--enable-debug --enable-depend --enable-tap-tests --with-lz4 --with-zstd \
	CFLAGS=-O2) >"$logs/configure.log" 2>&1 || die "configure failed; see $logs/configure.log"
make_logged "$logs/0000-build.log" || die "the pristine source does not build; see $logs/0000-build.log"
make_logged "$logs/0000-build.log" -C contrib || die "the pristine contrib does not build"
warnings "$logs/0000-build.log" >"$logs/0000-warnings"

failed=()
for k in "${!patches[@]}"; do
	p=${patches[$k]}
	name=$(basename "$p" .patch)
	log=$logs/$name.build.log
	apply_patch "$tree" "$p" "the patches before it"
	if ! make_logged "$log" || ! make_logged "$log" -C contrib; then
		failed+=("$name: build")
		msg "$name: does not build; see $log"
		break
	fi
	suites="src/test/regress $(patch_suites "$p")"
	result=ok
	for suite in $suites; do
		slog=$logs/$name.$(echo "$suite" | tr / _).log
		if ! make -C "$tree/$suite" check >"$slog" 2>&1; then
			result=failed
			failed+=("$name: $suite (see $slog)")
		fi
		cat "$slog" >>"$log"
	done
	new=$(warnings "$log" | comm -23 - "$logs/0000-warnings")
	if [ -n "$new" ]; then
		result=failed
		failed+=("$name: warnings: $new")
	fi
	msg "$name: $result (built; $(echo $suites))"
done

if [ ${#failed[@]} -gt 0 ]; then
	printf '  %s\n' "${failed[@]}" >&2
	die "${#failed[@]} failure(s) building or testing the patches one by one; logs in $logs"
fi
msg "each of the ${#patches[@]} patches builds without new warnings and passes its suites; logs in $logs"
