# tools/lib.sh -- shell helpers shared by the jsonb_toaster drivers.
#
# Sourced, never executed.  Everything that is built or downloaded lives
# under $JT_CACHE (outside the work tree) so that repeated runs are fast and
# a clean clone never carries build products.

set -euo pipefail

JT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JT_CACHE=${JSONB_TOASTER_CACHE:-$HOME/.cache/jsonb_toaster}
# The PostgreSQL major the drivers build and test: 18, or 19 (the port in
# progress, patches/postgresql-19) when set so in the environment.
JT_PG_MAJOR=${JT_PG_MAJOR:-18}
case $JT_PG_MAJOR in
	18 | 19) ;;
	*) echo "[jsonb_toaster] ERROR: JT_PG_MAJOR=$JT_PG_MAJOR: only 18 and 19 are known" >&2
		exit 1 ;;
esac
# Citus, for the test cluster of tools/test-citus.sh: its source is kept
# beside the work tree (a copy made to drop root is given this path)
JT_CITUS_VERSION=14.0.1
JT_CITUS_TARBALL=${JT_CITUS_TARBALL:-$(cd "$JT_TOP/.." && pwd)/shared/vendor/citus-$JT_CITUS_VERSION.tar.gz}

# Packages needed to build PostgreSQL with lz4, zstd and TAP tests, to build
# the extension, and to run the benchmark driver and its plots.
JT_BUILD_DEPS="build-essential bison flex pkg-config libreadline-dev zlib1g-dev
	liblz4-dev libzstd-dev libicu-dev libipc-run-perl perl"
JT_BENCH_DEPS="python3 python3-matplotlib"
JT_RUNTIME_DEPS="python3 ca-certificates bzip2 patch"
# The fuzzers (clang's libFuzzer), the stock server the tests also use, and
# what builds the Debian packages (tools/build-deb.sh).
JT_TEST_DEPS="clang-14 libclang-rt-14-dev postgresql-15 postgresql-server-dev-15
	debhelper dpkg-dev postgresql-server-dev-all"

# PostgreSQL refuses to run as root; when the drivers are started as root
# they continue as this unprivileged user (created if needed).
JT_USER=${JSONB_TOASTER_USER:-jsonb_toaster}

msg()
{
	echo "[jsonb_toaster] $*" >&2
}

die()
{
	echo "[jsonb_toaster] ERROR: $*" >&2
	exit 1
}

# Run a command as root: directly when we are root, else through sudo.
as_root()
{
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root to run '$*' (no sudo available); install it by hand"
	fi
}

# ensure_packages pkg...: install the Debian packages that are missing.
ensure_packages()
{
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		die "missing packages (${missing[*]}) and no apt-get to install them"
	msg "installing missing packages: ${missing[*]}"
	if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >&2; then
		as_root apt-get update -q >&2 ||
			die "apt-get update failed; cannot install ${missing[*]}"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >&2 ||
			die "cannot install ${missing[*]} with apt-get"
	fi
}

# The patch files of the series, in the order they apply (the cover
# letter, v<N>-0000-cover-letter.patch, is not one of them).
series_patches()
{
	local f
	for f in "$JT_TOP"/patches/postgresql-$JT_PG_MAJOR/v*-[0-9][0-9][0-9][0-9]-*.patch; do
		[ -e "$f" ] || continue
		case $f in *-0000-cover-letter.patch) continue ;; esac
		echo "$f"
	done
}

# Die unless every patch file of the directory belongs to one version of
# the series: a file exported without -v, or left from another version,
# would otherwise be skipped or applied without a word.
series_files_check()
{
	local f name version=
	for f in "$JT_TOP"/patches/postgresql-$JT_PG_MAJOR/*.patch; do
		[ -e "$f" ] || continue
		name=$(basename "$f")
		case $name in
			v[0-9]*-[0-9][0-9][0-9][0-9]-*.patch) ;;
			*) die "$f is not named as a patch of the series (v<N>-<NNNN>-...)" ;;
		esac
		[ -z "$version" ] || [ "${name%%-*}" = "$version" ] ||
			die "patches/postgresql-$JT_PG_MAJOR holds both $version and ${name%%-*} of the series"
		version=${name%%-*}
	done
}

# Hash of everything that changes what a server build produces: the diffs
# of the series (not their commit messages, nor their file names).
patch_series_hash()
{
	local f
	series_files_check
	series_patches | while IFS= read -r f; do
		sed -n '/^diff --git /,$p' "$f"
	done | sha256sum | cut -c1-12
}

# apply_patch tree patch description: apply one patch of the series to a
# PostgreSQL source tree, or die naming it.
apply_patch()
{
	patch -d "$1" -p1 --forward --batch -s <"$2" >&2 ||
		die "patch $(basename "$2") does not apply to $3"
}

# apply_patch_series tree description: apply the core patch series to a
# PostgreSQL source tree, in order, or die naming the patch that fails.
apply_patch_series()
{
	local tree=$1 what=$2 p patches
	series_files_check
	mapfile -t patches < <(series_patches)
	for p in "${patches[@]}"; do
		msg "applying $(basename "$p")"
		apply_patch "$tree" "$p" "$what"
	done
}

# A free TCP port on the loopback interface, for temporary instances.
free_port()
{
	python3 - <<'EOF'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

# ensure_runtime_user: as root, install every package the drivers need (only
# root can) and create $JT_USER if needed.
ensure_runtime_user()
{
	ensure_packages $JT_BUILD_DEPS $JT_BENCH_DEPS $JT_RUNTIME_DEPS $JT_TEST_DEPS
	if ! id -u "$JT_USER" >/dev/null 2>&1; then
		msg "creating the unprivileged user $JT_USER to run PostgreSQL"
		useradd --system --create-home --home-dir "/var/lib/$JT_USER" \
			--shell /bin/bash "$JT_USER" || die "cannot create user $JT_USER"
	fi
}

# run_as_user script args...: run a driver script as $JT_USER, on a private
# copy of the work tree, and return its status.  Builds are then cached in
# that user's ~/.cache/jsonb_toaster.  Variables the drivers read are passed
# through.
run_as_user()
{
	local script=$1 home copy status=0
	shift
	ensure_runtime_user
	home=$(getent passwd "$JT_USER" | cut -d: -f6)
	copy=$(runuser -u "$JT_USER" -- mktemp -d "${TMPDIR:-/tmp}/jsonb_toaster_tree.XXXXXX")
	tar -C "$JT_TOP" --exclude=.git -cf - . |
		runuser -u "$JT_USER" -- tar -C "$copy" -xf -
	msg "running as $JT_USER (PostgreSQL does not run as root), on a copy in $copy"
	runuser -u "$JT_USER" -- env HOME="$home" \
		${PG_SRC:+PG_SRC="$PG_SRC"} \
		${JSONB_TOASTER_CACHE:+JSONB_TOASTER_CACHE="$JSONB_TOASTER_CACHE"} \
		${KEEP_TMP:+KEEP_TMP="$KEEP_TMP"} \
		${JT_BENCH_FLAVOUR:+JT_BENCH_FLAVOUR="$JT_BENCH_FLAVOUR"} \
		${JT_BENCH_VMEM_GB:+JT_BENCH_VMEM_GB="$JT_BENCH_VMEM_GB"} \
		${JT_AB_SOURCES:+JT_AB_SOURCES="$JT_AB_SOURCES"} \
		${PGOPTIONS:+PGOPTIONS="$PGOPTIONS"} \
		${JT_REFRESH_SOURCE:+JT_REFRESH_SOURCE="$JT_REFRESH_SOURCE"} \
		JT_PG_MAJOR="$JT_PG_MAJOR" \
		JT_CITUS_TARBALL="$JT_CITUS_TARBALL" \
		"$copy/tools/$(basename "$script")" "$@" || status=$?
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$copy"
	return $status
}

# drop_root script args...: when running as root, run the calling script
# again as $JT_USER and exit with its status; return at once otherwise.
drop_root()
{
	[ "$(id -u)" = 0 ] || return 0
	local status=0
	run_as_user "$@" || status=$?
	exit $status
}

# build_extension pg_config builddir [subdir]: build and install the
# extension (or the module in subdir) out of tree: the work tree stays
# clean, and builds for different servers never mix.
build_extension()
{
	local pg_config=$1 build=$2 srcdir=$JT_TOP/${3:-}
	mkdir -p "$build/src"
	msg "building ${3:-the extension} against $pg_config"
	make -s -C "$build" -f "$srcdir/Makefile" VPATH="$srcdir" \
		PG_CONFIG="$pg_config" COPT="-Werror" all install \
		>"$build/build.log" 2>&1 || {
		cat "$build/build.log" >&2
		die "extension build failed"
	}
}

# start_instance datadir sockdir port [conf lines...]: initdb and start a
# temporary instance with the library preloaded, listening only on a Unix
# socket in sockdir.  The caller stops it (stop_instance).
start_instance()
{
	local datadir=$1 sockdir=$2 port=$3 line
	shift 3
	initdb -D "$datadir" -A trust --no-sync -U postgres \
		>"$datadir.initdb.log" 2>&1 ||
		{ cat "$datadir.initdb.log" >&2; die "initdb failed"; }
	{
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$sockdir'"
		echo "shared_preload_libraries = 'jsonb_toaster'"
		for line in "$@"; do echo "$line"; done
	} >>"$datadir/postgresql.conf"
	pg_ctl -D "$datadir" -l "$datadir.log" -w start >/dev/null ||
		{ cat "$datadir.log" >&2; die "cannot start the temporary instance"; }
}

stop_instance()
{
	local datadir=$1 mode=${2:-fast}
	[ -f "$datadir/postmaster.pid" ] || return 0
	pg_ctl -D "$datadir" -m "$mode" stop >/dev/null 2>&1 || true
}
