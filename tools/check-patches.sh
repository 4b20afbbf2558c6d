#!/usr/bin/env bash
# tools/check-patches.sh -- check that the core patch series applies, and
# report its size.
#
# Applies patches/postgresql-18/*.patch in order to
#   1. the upstream tarball of Debian's postgresql-18 source package, and
#   2. the same tree with the Debian packaging patches (debian/patches/series)
#      applied first, as a Debian rebuild of the package would see it;
# then prints the diffstat of the core changes with tests and documentation
# left out, the part a reviewer reads as code.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

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
