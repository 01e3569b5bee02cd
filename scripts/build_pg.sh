#!/usr/bin/env bash
# Build PostgreSQL majors from Debian's own source packages, for testing
# snowid on majors that Debian 12 does not ship as binaries.
#
#   scripts/build_pg.sh 18            build 18 (the default: 18)
#   scripts/build_pg.sh 16 17 18 19   try several; say which it could not get
#
# For each MAJOR it
#   * writes a deb-src list for trixie, sid and experimental into a file of
#     its own (/etc/apt/sources.list.d/snowid-pg-src.sources; the machine's
#     other lists are left alone) and runs "apt-get update" when that file
#     is new or changed;
#   * fetches the source package postgresql-MAJOR with "apt-get source"
#     into a cache directory (SNOWID_PG_CACHE, default /var/cache/snowid-pg),
#     which checks it against the signed Sources index, and unpacks the
#     upstream tree without Debian's patches (their per-version directory
#     layout is for the Debian packages, not for one prefix);
#   * builds it with PostgreSQL's own configure (not dpkg-buildpackage,
#     which runs the whole upstream test suite and takes an hour here)
#     with --enable-tap-tests and OpenSSL, and installs it into the fixed
#     prefix /opt/snowid-pg/MAJOR (SNOWID_PG_PREFIX), with what PGXS
#     "installcheck" needs: pg_regress, pg_isolation_regress and
#     isolationtester under lib/postgresql/pgxs/src/test/, the TAP modules
#     (PostgreSQL::Test::Cluster) under .../pgxs/src/test/perl, and the
#     contrib modules the tests load (SNOWID_PG_CONTRIB).
#
# A prefix holding the stamp file .snowid-build-complete is complete, and
# the major is skipped: a second run costs nothing.  Delete the prefix to
# reinstall; the build directory in the cache is kept, so that costs only
# the install (delete $SNOWID_PG_CACHE/build/MAJOR too for a clean build).  Runs as root (apt-get, /opt); the build itself needs no network
# beyond the Debian mirror.
#
# The last line is "built: ...; could not get: ..." (and "; build failed:
# ..." if one did), and the exit status is non-zero when any major asked
# for is not there.
set -euo pipefail
source "$(dirname "$0")/common.sh"

cache=${SNOWID_PG_CACHE:-/var/cache/snowid-pg}
prefix_root=${SNOWID_PG_PREFIX:-/opt/snowid-pg}
contrib=${SNOWID_PG_CONTRIB:-amcheck pageinspect pg_stat_statements pgcrypto}
jobs=${SNOWID_PG_JOBS:-$(nproc 2>/dev/null || echo 2)}
sources_file=/etc/apt/sources.list.d/snowid-pg-src.sources
stamp_name=.snowid-build-complete

# What building the upstream tree needs on Debian 12 (dpkg-dev unpacks
# the source package).
build_packages="dpkg-dev bzip2 xz-utils gcc make bison flex pkg-config perl
	libipc-run-perl libreadline-dev zlib1g-dev libssl-dev libicu-dev"

majors=${*:-18}
for major in $majors; do
	[[ $major =~ ^[0-9]+$ ]] || die "not a PostgreSQL major: \"$major\""
done

# True when the prefix holds a finished build.
complete() {
	[ -f "$prefix_root/$1/$stamp_name" ] && [ -x "$prefix_root/$1/bin/pg_config" ]
}

# Write our deb-src list and refresh the indexes when it changed.
ensure_deb_src() {
	local want
	want="# Written by snowid's scripts/build_pg.sh: source packages of newer
# PostgreSQL majors (deb-src only: nothing is installed from these suites).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie sid experimental
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
	if [ ! -f "$sources_file" ] || [ "$(cat "$sources_file")" != "$want" ]; then
		log "writing $sources_file (deb-src trixie sid experimental)"
		printf '%s\n' "$want" >"$sources_file"
		rm -f "$cache/.apt-updated"
	fi
	# One update per list change, not per run: later runs need no network
	# for majors already built.
	if [ ! -f "$cache/.apt-updated" ]; then
		log "apt-get update"
		apt-get -o DPkg::Lock::Timeout=900 -o Acquire::Retries=3 update -qq ||
			log "apt-get update reported errors (some suites may be unreachable)"
		touch "$cache/.apt-updated"
	fi
}

# Fetch and unpack postgresql-MAJOR into $cache/src/MAJOR; print the tree.
fetch_source() {
	local major=$1 dir=$cache/src/$1 dsc tree out
	mkdir -p "$dir"
	# apt downloads as _apt when that user may write there.
	if id _apt >/dev/null 2>&1; then chown _apt "$dir"; fi
	dsc=$(ls "$dir"/postgresql-"$major"_*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$dsc" ]; then
		log "apt-get source postgresql-$major"
		if ! out=$(cd "$dir" && apt-get -o Acquire::Retries=2 source --download-only -qq "postgresql-$major" 2>&1); then
			printf '%s\n' "$out" >&2
			if grep -q "Unable to find a source package" <<<"$out"; then
				log "PostgreSQL $major: no source package postgresql-$major in trixie, sid or experimental"
			elif grep -q "404" <<<"$out"; then
				log "PostgreSQL $major: the mirror answered 404 Not Found for the files of postgresql-$major"
			fi
			return 1
		fi
		dsc=$(ls "$dir"/postgresql-"$major"_*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
		[ -n "$dsc" ] || return 1
	fi
	tree=$dir/upstream
	if [ ! -f "$tree/configure" ]; then
		rm -rf "$tree"
		# apt checks every file against the signed Sources index;
		# dpkg-source checks the tarballs against the .dsc again.
		(cd "$dir" && dpkg-source --skip-patches -x "$(basename "$dsc")" upstream) >&2 ||
			return 1
	fi
	echo "$tree"
}

# Configure, build and install one major.  The build directory is kept:
# after an interrupted or failed run, the next one configures again only
# if the options changed, and make rebuilds only what is missing.
build_major() {
	local major=$1 tree=$2 prefix=$prefix_root/$1 build=$cache/build/$1 m pgxs
	local buildlog=$cache/build-$major.log
	local options="--prefix=$prefix --enable-tap-tests --with-openssl --with-icu --enable-debug --with-system-tzdata=/usr/share/zoneinfo"

	if [ ! -f "$build/config.status" ] || [ "$(cat "$build/.snowid-configure" 2>/dev/null)" != "$options" ]; then
		rm -rf "$build"
	fi
	rm -rf "$prefix"
	mkdir -p "$build"
	log "building PostgreSQL $major from $tree into $prefix (log: $buildlog)"
	# Each step chained: errexit does not apply inside a function that is
	# called as a condition.
	(
		cd "$build" &&
			{ [ -f config.status ] || { "$tree"/configure $options CFLAGS="-O2" &&
				echo "$options" >.snowid-configure; }; } &&
			make -s -j"$jobs" &&
			make -s install &&
			# isolationtester and pg_isolation_regress, where PGXS's
			# pg_isolation_regress_installcheck looks for them.
			make -s -C src/test/isolation -j"$jobs" install &&
			for m in $contrib; do
				make -s -C contrib/"$m" -j"$jobs" install || exit 1
			done
	) >"$buildlog" 2>&1 || {
		tail -n 40 "$buildlog" >&2
		return 1
	}
	# Where PGXS looks: lib/postgresql/pgxs (upstream adds "postgresql" to
	# a prefix without "pgsql" or "postgres" in it).
	pgxs=$(dirname "$("$prefix/bin/pg_config" --pgxs)")/../..
	for m in src/test/isolation/pg_isolation_regress src/test/isolation/isolationtester \
		src/test/regress/pg_regress src/test/perl/PostgreSQL/Test/Cluster.pm; do
		[ -e "$pgxs/$m" ] || {
			log "PostgreSQL $major: the build did not install $m (PGXS installcheck needs it)"
			return 1
		}
	done
	"$prefix/bin/pg_config" --version >"$prefix/$stamp_name"
	log "PostgreSQL $major: $(cat "$prefix/$stamp_name") in $prefix"
}

[ "$(id -u)" -eq 0 ] || die "run scripts/build_pg.sh as root (it uses apt-get and writes $prefix_root)"

built=""
failed=""
broken=""
todo=""
for major in $majors; do
	if complete "$major"; then
		log "PostgreSQL $major: complete in $prefix_root/$major ($(cat "$prefix_root/$major/$stamp_name")), nothing to do"
		built="$built $major"
	else
		todo="$todo $major"
	fi
done

if [ -n "$todo" ]; then
	mkdir -p "$cache"
	missing=$(SNOWID_PACKAGES="" missing_packages $build_packages)
	if [ -n "$missing" ]; then
		log "installing the build dependencies:$missing"
		apt-get -o DPkg::Lock::Timeout=900 update -qq
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq $missing >/dev/null
	fi
	ensure_deb_src
	for major in $todo; do
		start=$(date +%s)
		if ! tree=$(fetch_source "$major"); then
			log "PostgreSQL $major: could not get its source package (postgresql-$major): skipped"
			failed="$failed $major"
			continue
		fi
		if build_major "$major" "$tree"; then
			log "PostgreSQL $major: built in $(($(date +%s) - start)) s"
			built="$built $major"
		else
			log "PostgreSQL $major: the build failed (log: $cache/build-$major.log)"
			broken="$broken $major"
		fi
	done
fi

echo "built:${built:- none}; could not get:${failed:- none}${broken:+; build failed:$broken}"
[ -z "$failed$broken" ]
