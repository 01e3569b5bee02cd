#!/usr/bin/env bash
# make deb: build the Debian package postgresql-15-snowid from this tree
# with Debian's own tooling (debian/, pg_buildext, dpkg-buildpackage), and
# check it with lintian.
#
# Installs the build dependencies when run as root (otherwise names the
# missing ones).  Builds in a copy of the tree, so nothing lands in it but
# the results: the .deb, .buildinfo and .changes go to $SNOWID_DEB_DIR
# (default dist/, which git ignores).  Exits non-zero when the build
# fails or lintian reports an error.
set -euo pipefail
source "$(dirname "$0")/common.sh"

# debian/control's Build-Depends, and the tools that build and check.
ensure_tool_packages debhelper postgresql-server-dev-all libpq-dev dpkg-dev devscripts lintian

out=${SNOWID_DEB_DIR:-$SNOWID_ROOT/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(dpkg-parsechangelog -l "$SNOWID_ROOT/debian/changelog" -S Version)
upstream=${version%-*}

build=$(mktemp -d "${TMPDIR:-/tmp}/snowid-deb.XXXXXX")
trap 'rm -rf "$build"' EXIT
src=$build/snowid-$upstream
mkdir "$src"
tar -C "$SNOWID_ROOT" --exclude=.git --exclude=dist --exclude='tmp_check*' \
	--exclude=results --exclude=output_iso --exclude=log --exclude=test-logs \
	--exclude=node_modules --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude=test/fuzz/build -cf - . | tar -C "$src" -xf -

log "building postgresql-*-snowid $version with dpkg-buildpackage"
# debian/control must match debian/control.in for the majors this system
# supports (pg_buildext checkcontrol, run by debian/rules clean).
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$build/build.log" 2>&1 || {
	cat "$build/build.log" >&2
	die "dpkg-buildpackage failed"
}

shopt -s nullglob
debs=("$build"/postgresql-*-snowid_"$version"_*.deb)
[ ${#debs[@]} -gt 0 ] || die "dpkg-buildpackage made no postgresql-*-snowid package"
cp "${debs[@]}" "$build"/snowid_"$version"_*.buildinfo "$build"/snowid_"$version"_*.changes "$out"/

log "lintian"
rc=0
# lintian advises against running as root: as root, run it as postgres.
chmod 755 "$build"
as_server_user lintian --fail-on error "${debs[@]}" || rc=$?
for deb in "${debs[@]}"; do
	echo "$out/$(basename "$deb")"
done
[ "$rc" -eq 0 ] || die "lintian reported errors"
