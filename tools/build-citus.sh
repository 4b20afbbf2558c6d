#!/usr/bin/env bash
# tools/build-citus.sh [assert|release] -- build Citus for the Citus test
# cluster (tools/test-citus.sh) and print the installation prefix.
#
# Citus is not on the package registries this project can reach; its
# unchanged source is a tarball kept beside the work tree
# (JT_CITUS_TARBALL, see tools/lib.sh; its licence, AGPL-3.0, allows
# building it for a test cluster).  Citus is a
# PGXS extension that installs into the server's own directories, so the
# patched server's installation is copied first and Citus installed into
# the copy: the server builds of the cache stay as they are.  The result is
# cached, keyed by the server build and Citus's version.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

flavour=${1:-assert}
version=$JT_CITUS_VERSION
tarball=$JT_CITUS_TARBALL
[ -f "$tarball" ] || die "Citus source not found: $tarball (set JT_CITUS_TARBALL)"

server=$("$JT_TOP/tools/build-server.sh" "$flavour")
prefix=$JT_CACHE/install/citus$version-$(basename "$server")
if [ -f "$prefix/.jt-complete" ]; then
	echo "$prefix"
	exit 0
fi

ensure_packages $JT_BUILD_DEPS liblz4-dev libzstd-dev
builddir=$JT_CACHE/build/citus$version-$(basename "$server")
log=$builddir.log
msg "building Citus $version against $server into $prefix; log: $log"
rm -rf "$prefix" "$builddir"
mkdir -p "$builddir"
cp -a "$server" "$prefix"
rm -f "$prefix/.jt-complete"
tar -C "$builddir" --strip-components=1 -xzf "$tarball"
jobs=$(nproc 2>/dev/null || echo 2)
(
	cd "$builddir"
	./configure PG_CONFIG="$prefix/bin/pg_config" --without-libcurl
	make -j"$jobs"
	make install
) >"$log" 2>&1 || {
	tail -n 40 "$log" >&2
	die "Citus build failed; see $log"
}
rm -rf "$builddir"
touch "$prefix/.jt-complete"
msg "installed Citus $version in $prefix"
echo "$prefix"
