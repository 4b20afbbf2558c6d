#!/usr/bin/env bash
# tools/check-abi.sh [PATCHED_TREE] -- check that the core series changes
# nothing a binary module built against stock headers relies on, beyond
# what patches/postgresql-$JT_PG_MAJOR/abi-changes.txt lists.
#
# Compares the headers the series touches (and access/tupmacs.h, whose
# macros are built on varatt.h's) between the pristine source and a patched
# tree: struct and union layouts, function prototypes and macro definitions
# (tools/abi-compare.py).  PATCHED_TREE defaults to the cached build tree of
# the assertion server, which also supplies the generated headers.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

stock=$("$JT_TOP/tools/fetch-pg-source.sh")
if [ $# -ge 1 ]; then
	patched=$1
else
	prefix=$("$JT_TOP/tools/build-server.sh" assert)
	patched=$JT_CACHE/build/$(basename "$prefix")
fi
[ -f "$patched/src/include/pg_config.h" ] ||
	die "$patched is not a configured PostgreSQL build tree"

headers="access/tupmacs.h"
while IFS= read -r p; do
	for h in $(sed -n 's|^+++ b/src/include/\(.*\.h\)$|\1|p' "$p"); do
		# headers the series adds have nothing to compare with
		[ -f "$stock/src/include/$h" ] && headers="$headers $h"
	done
done < <(series_patches)
headers=$(printf '%s\n' $headers | sort -u)

msg "comparing stock and patched headers: $(echo $headers)"
python3 "$JT_TOP/tools/abi-compare.py" "$stock/src/include" \
	"$patched/src/include" "$patched/src/include" \
	"$JT_TOP/patches/postgresql-$JT_PG_MAJOR/abi-changes.txt" $headers
