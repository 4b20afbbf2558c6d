#!/usr/bin/env bash
# tools/format-series.sh -- keep patches/postgresql-18 in the form of
# `git format-patch -v<N> --cover-letter`: v<N>-0000-cover-letter.patch,
# then v<N>-0001-... to v<N>-00NN-..., subjects "[PATCH v<N> k/NN]".
#
#   tools/format-series.sh            # rewrite the cover letter's subject
#                                     # count, shortlog and diffstat
#   tools/format-series.sh --check    # fail if they are not current
#   tools/format-series.sh --version N  # renumber the series as version N
#
# The cover letter's text is written by hand in the file itself; what this
# writes is what format-patch generates: the "[PATCH vN 00/NN]" subject,
# and after the text the shortlog ("Author (NN):" and one subject per
# patch) and the diffstat of the whole series against the pristine source.

. "$(dirname "$0")/lib.sh"

mode=write
version=
case ${1:-} in
	'') ;;
	--check) mode=check ;;
	--version) version=${2:?usage: $0 --version N} ;;
	*) die "usage: $0 [--check | --version N]" ;;
esac

dir=$JT_TOP/patches/postgresql-$JT_PG_MAJOR
series_files_check
mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "no patch files in $dir"
current=$(basename "${patches[0]}" | sed 's/^v\([0-9]*\)-.*/\1/')
cover=$dir/v$current-0000-cover-letter.patch
[ -f "$cover" ] || die "no cover letter $cover"

if [ -n "$version" ]; then
	[ "$version" != "$current" ] || die "the series is version $version already"
	for f in "$cover" "${patches[@]}"; do
		sed -i "0,/^Subject: \[PATCH v$current /s//Subject: [PATCH v$version /" "$f"
		git -C "$JT_TOP" mv "$f" "$dir/v$version-${f##*/v$current-}" 2>/dev/null ||
			mv "$f" "$dir/v$version-${f##*/v$current-}"
	done
	msg "renumbered the series as v$version; now rewriting its cover letter"
	exec "$0"
fi

# The diffstat of the whole series, as format-patch writes it: the
# pristine source committed in a scratch repository, the series applied.
src=$("$JT_TOP/tools/fetch-pg-source.sh")
work=$(mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_format.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -C "$src" --exclude=.git -cf - . | tar -C "$work" --no-same-owner -xf -
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.name=x -c user.email=x@localhost commit -q -m pristine
for p in "${patches[@]}"; do
	apply_patch "$work" "$p" "the pristine source"
done
git -C "$work" add -A
git -C "$work" diff --cached --stat --summary >"$work/.series-stat"

python3 - "$cover" "$work/.series-stat" "$mode" "${patches[@]}" <<'EOF'
import re
import sys

cover, statfile, mode, patches = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
n = len(patches)


def header(path, name):
    """The value of a mail header, its continuation lines unfolded."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line == "":
            break
        if line.startswith(name + ": "):
            value = line[len(name) + 2:]
            for cont in lines[i + 1:]:
                if not cont.startswith(" "):
                    break
                value += cont
            return value
    sys.exit(f"{path}: no {name} header")


author = re.sub(r"\s*<.*>$", "", header(patches[0], "From"))
subjects = [re.sub(r"^\[PATCH[^\]]*\]\s*", "", header(p, "Subject")) for p in patches]
tail = [f"{author} ({n}):"] + [f"  {s}" for s in subjects] + [""]
tail += open(statfile, encoding="utf-8").read().rstrip("\n").split("\n")
tail += [""]

text = open(cover, encoding="utf-8").read()
head, sep, _ = text.partition(f"\n{author} (")
if not sep:
    sys.exit(f"{cover}: no shortlog line \"{author} (N):\" after the letter")
head = re.sub(r"^(Subject: \[PATCH v[0-9]+ )00/[0-9]+\]",
              lambda m: f"{m.group(1)}{0:0{len(str(n))}d}/{n}]", head, count=1, flags=re.M)
new = head + "\n" + "\n".join(tail)
if new == text:
    sys.exit(0)
if mode == "check":
    sys.exit(f"{cover} is not current: run tools/format-series.sh")
open(cover, "w", encoding="utf-8").write(new)
print(f"rewrote {cover}")
EOF
