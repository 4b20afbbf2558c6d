#!/usr/bin/env bash
# tools/build-deb.sh OUTDIR -- build the Debian packages of the extension
# (stock mode) into OUTDIR: postgresql-NN-jsonb-toaster for every
# PostgreSQL major whose server development package is installed and that
# debian/pgversions allows, with postgresql-common's pg_buildext, as
# Debian builds its extensions.  Prints the paths of the packages.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"
out=${1:?usage: tools/build-deb.sh OUTDIR}
ensure_packages debhelper dpkg-dev postgresql-server-dev-all liblz4-dev

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
# the package is built from a copy: dpkg-buildpackage writes into the tree
# and beside it
src=$work/jsonb-toaster
mkdir -p "$src"
tar -C "$JT_TOP" --exclude=.git --exclude=./bench --exclude=./fuzz -cf - . |
	tar -C "$src" -xf -
(
	cd "$src"
	pg_buildext updatecontrol
	dpkg-buildpackage -us -uc -b
) >"$work/build.log" 2>&1 || {
	tail -n 80 "$work/build.log" >&2
	die "the Debian package build failed"
}
for deb in "$work"/*.deb; do
	cp "$deb" "$out/"
	echo "$out/$(basename "$deb")"
done
