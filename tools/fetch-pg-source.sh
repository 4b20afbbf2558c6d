#!/usr/bin/env bash
# tools/fetch-pg-source.sh -- print the path of a pristine PostgreSQL 18 tree
# (or 19 with JT_PG_MAJOR=19).
#
# Without arguments the upstream tarball is obtained through Debian's source
# packages: a private apt state directory under $JT_CACHE is given deb-src
# entries derived from this machine's own apt sources (same mirrors, same
# keyrings), for the suites that may carry postgresql-18 (for postgresql-19,
# also "experimental", where Debian uploads its release candidates), and
# "apt-get source --download-only" fetches it.  apt checks the files against
# the signed Sources index; we then unpack the upstream .orig tarball only
# (Debian's packaging patches are not wanted in a development server).
#
# A source tree that is already unpacked in the cache is reused without any
# network access; set JT_REFRESH_SOURCE=1 to look for a newer one.
#
# With PG_SRC=/path/to/postgres set, that tree is used instead (e.g. a
# REL_18_STABLE git checkout); it is never modified.

. "$(dirname "$0")/lib.sh"

drop_root "$0" "$@"

if [ -n "${PG_SRC:-}" ]; then
	[ -f "$PG_SRC/configure" ] && [ -f "$PG_SRC/src/include/pg_config.h.in" ] ||
		die "PG_SRC=$PG_SRC does not look like a PostgreSQL source tree"
	grep -q "PACKAGE_VERSION='$JT_PG_MAJOR" "$PG_SRC/configure" ||
		die "PG_SRC=$PG_SRC is not PostgreSQL $JT_PG_MAJOR"
	cd "$PG_SRC" && pwd
	exit 0
fi

srcroot=$JT_CACHE/src
mkdir -p "$srcroot"

newest_unpacked()
{
	# a pre-release unpacks as e.g. postgresql-19~rc1, before 19.0 in sort -V
	ls -d "$srcroot"/postgresql-$JT_PG_MAJOR.*/ \
		"$srcroot"/postgresql-$JT_PG_MAJOR~*/ 2>/dev/null |
		sed 's:/$::' | sort -V | tail -n 1 || true
}

if [ -z "${JT_REFRESH_SOURCE:-}" ]; then
	tree=$(newest_unpacked)
	if [ -n "$tree" ] && [ -f "$tree/.jt-complete" ]; then
		echo "$tree"
		exit 0
	fi
fi

ensure_packages $JT_RUNTIME_DEPS

# Private apt configuration: nothing under /etc/apt or /var/lib/apt changes.
aptdir=$JT_CACHE/apt
mkdir -p "$aptdir/lists/partial" "$aptdir/cache/archives/partial" \
	"$aptdir/downloads"

# Derive deb-src entries from the machine's Debian archive entries.  Security
# and third-party repositories are skipped: they do not carry the suites below.
python3 - "$aptdir/sources.list" "$JT_PG_MAJOR" <<'EOF'
import glob, re, sys

SUITES = ["sid", "forky", "trixie-backports", "trixie", "bookworm-backports"]
# Debian uploads a major's betas and release candidates to experimental.
if sys.argv[2] == "19":
    SUITES.append("experimental")
entries = []

def add(types, uris, suites, signed_by):
    if "deb" not in types and "deb-src" not in types:
        return
    for uri in uris:
        if "security" in uri or any("security" in s for s in suites):
            continue
        # Debian archive mirrors are recognised by their keyring (explicit or
        # the default one) and by serving Debian code names.
        if signed_by and "debian-archive" not in signed_by:
            continue
        if not any(re.match(r"(bookworm|trixie|forky|sid|bullseye)", s)
                   for s in suites):
            continue
        entries.append((uri.rstrip("/"), signed_by))

for path in glob.glob("/etc/apt/sources.list.d/*.sources"):
    with open(path) as f:
        for block in re.split(r"\n\s*\n", f.read()):
            fields = {}
            for line in block.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.split()
            if fields.get("enabled", ["yes"])[0] == "no":
                continue
            add(fields.get("types", []), fields.get("uris", []),
                fields.get("suites", []), " ".join(fields.get("signed-by", [])))

for path in ["/etc/apt/sources.list"] + glob.glob("/etc/apt/sources.list.d/*.list"):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        line = line.split("#", 1)[0].strip()
        m = re.match(r"(deb(?:-src)?)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)", line)
        if not m:
            continue
        opts = dict(o.split("=", 1) for o in (m.group(2) or "").split() if "=" in o)
        add([m.group(1)], [m.group(3)], [m.group(4)], opts.get("signed-by", ""))

seen = set()
out = []
for uri, key in entries:
    if uri in seen:
        continue
    seen.add(uri)
    opt = f"[signed-by={key}] " if key else ""
    for suite in SUITES:
        out.append(f"deb-src {opt}{uri} {suite} main")
if not out:
    sys.exit("no Debian archive entry found in the machine's apt sources")
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
[ -s "$aptdir/sources.list" ] ||
	die "could not derive deb-src entries from /etc/apt sources"

apt_private()
{
	"$@" -o Dir::State="$aptdir" -o Dir::State::Lists="$aptdir/lists" \
		-o Dir::State::status=/var/lib/dpkg/status \
		-o Dir::Cache="$aptdir/cache" \
		-o Dir::Etc::SourceList="$aptdir/sources.list" \
		-o Dir::Cache::Archives="$aptdir/cache/archives" \
		-o Dir::Etc::SourceParts=/dev/null
}

msg "updating the private source index ($aptdir)"
# Some mirrors lack some suites: a partial update is fine as long as one
# suite carries the package, which is checked next.
apt_private apt-get -q update >&2 || msg "apt-get update reported errors; continuing"

pkg=postgresql-$JT_PG_MAJOR
version=$(apt_private apt-cache showsrc "$pkg" 2>/dev/null |
	sed -n 's/^Version: //p' | sort -V | tail -n 1)
[ -n "$version" ] ||
	die "no suite in the machine's Debian mirrors offers the source package $pkg (tried: $(awk '{print $(NF-1)}' "$aptdir/sources.list" | sort -u | xargs))"
upstream=${version%-*}
upstream=${upstream#*:}
tree=$srcroot/postgresql-$upstream
if [ -f "$tree/.jt-complete" ]; then
	echo "$tree"
	exit 0
fi

msg "downloading source package $pkg=$version"
(cd "$aptdir/downloads" &&
	apt_private apt-get -q source --download-only "$pkg=$version" >&2) ||
	die "apt-get source $pkg=$version failed"
orig=$(ls "$aptdir/downloads/${pkg}_$upstream.orig.tar."* 2>/dev/null | head -n 1)
[ -n "$orig" ] || die "the source package has no upstream tarball"

rm -rf "$tree" "$tree.tmp"
mkdir -p "$tree.tmp"
tar -xf "$orig" -C "$tree.tmp" --strip-components=1 ||
	die "cannot unpack $orig"
touch "$tree.tmp/.jt-complete"
mv "$tree.tmp" "$tree"
msg "PostgreSQL $upstream source unpacked in $tree"
echo "$tree"
