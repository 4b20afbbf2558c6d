#!/usr/bin/env bash
# tools/build-server.sh -- build and install a PostgreSQL 18 server for the
# project, or reuse a cached one.  Prints the installation prefix.
# JT_PG_MAJOR=19 builds PostgreSQL 19 with patches/postgresql-19 instead
# (the port in progress); everything below reads 19 for 18 then.
#
#   tools/build-server.sh assert    # --enable-cassert, for the tests
#   tools/build-server.sh release   # optimised, no assertions, for benchmarks
#   tools/build-server.sh stock     # release options, without the series:
#                                   # an unpatched PostgreSQL 18 for the tests
#
# The source comes from tools/fetch-pg-source.sh (Debian source package, or
# PG_SRC=/path/to/postgres).  The series in patches/postgresql-18 is applied
# in order to a private copy.  The installation is cached under
# $JT_CACHE/install/<version>-<flavour>-<hash>, the hash covering the patch
# series and the configure options, so an unchanged second run takes no time.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

flavour=${1:-assert}
# The test build has JIT (LLVM), so that the tests reach the JIT paths of
# the patch series (JIT calls of overridden builtins).
case $flavour in
	assert) flavour_opts="--enable-cassert --enable-debug --with-llvm"
		flavour_deps="llvm-14-dev clang-14"
		flavour_env="LLVM_CONFIG=llvm-config-14 CLANG=clang-14"
		cflags="-O2 -g" ;;
	release | stock) flavour_opts="" flavour_deps="" flavour_env="" cflags="-O2" ;;
	*) die "usage: $0 assert|release|stock" ;;
esac
common_opts="--with-lz4 --with-zstd --enable-tap-tests"
build_id="v1 $common_opts $flavour_opts $flavour_env $cflags"

src=$("$JT_TOP/tools/fetch-pg-source.sh")
version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$src/configure")
[ -n "$version" ] || die "cannot read the version from $src/configure"
if [ -n "${PG_SRC:-}" ]; then
	# A user tree may change under us: key it by path and git state.
	tag=$( { echo "$src"; git -C "$src" rev-parse HEAD 2>/dev/null || true;
		git -C "$src" diff 2>/dev/null || true; } | sha256sum | cut -c1-8)
	version="$version-src$tag"
fi
if [ "$flavour" = stock ]; then
	key=$(echo "$build_id" | sha256sum | cut -c1-12)
else
	key=$( { echo "$build_id"; patch_series_hash; } | sha256sum | cut -c1-12)
fi
prefix=$JT_CACHE/install/pg$version-$flavour-$key
# The build tree is kept next to it: tools/test.sh runs core's suites there.
builddir=$JT_CACHE/build/pg$version-$flavour-$key

cached()
{
	[ -x "$prefix/bin/postgres" ] && [ -f "$prefix/.jt-complete" ] &&
		[ -f "$builddir/GNUmakefile" ]
}
if cached; then
	echo "$prefix"
	exit 0
fi

# Two runs wanting the same build (parallel test runs, a bench and a test)
# must not both write it: the second waits for the first, then reuses it.
mkdir -p "$JT_CACHE/build"
exec 9>"$builddir.lock"
if ! flock -n 9; then
	msg "waiting for another build of $(basename "$builddir")"
	flock 9
fi
if cached; then
	echo "$prefix"
	exit 0
fi

ensure_packages $JT_BUILD_DEPS $flavour_deps

log=$builddir.log
msg "building PostgreSQL $version ($flavour) into $prefix; log: $log"
rm -rf "$builddir" "$prefix"
mkdir -p "$builddir"
tar -C "$src" --exclude=.git -cf - . | tar -C "$builddir" -xf -

[ "$flavour" = stock ] || apply_patch_series "$builddir" "PostgreSQL $version"

jobs=$(nproc 2>/dev/null || echo 2)
(
	cd "$builddir"
	./configure --prefix="$prefix" $common_opts $flavour_opts $flavour_env CFLAGS="$cflags"
	make -j"$jobs"
	make -j"$jobs" -C contrib
	make install
	make -C contrib install
	# Test modules of the patch series are installed when present.
	make -C src/test/modules -j"$jobs" install
) >"$log" 2>&1 || {
	tail -n 40 "$log" >&2
	die "PostgreSQL build failed; see $log"
}
touch "$prefix/.jt-complete"
msg "installed PostgreSQL $version ($flavour) in $prefix"
echo "$prefix"
