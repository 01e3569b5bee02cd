#!/usr/bin/env bash
# The Debian package, for real (the "deb" suite of scripts/test.sh):
# build it with "make deb" (lintian with no errors), install it with
# apt-get install ./postgresql-15-snowid_*.deb, create both extensions on
# a server that runs from the installed files, remove the package and see
# its files go.  Prints TAP ("ok N - ...", then "1..N").
#
# Installing and removing the package changes the PostgreSQL installation
# every other test uses, so this runs as root under the make-test lock
# (scripts/test.sh holds it for the whole run), and puts the tree's own
# build back ("make install") when it ends, whether it passed or not.
set -uo pipefail
source "$(dirname "$0")/common.sh"

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$what"
	else
		not_ok "$what"
		sed 's/^/# /' <<<"$out"
	fi
}

if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP installing a package needs root"
	exit 0
fi
[ -n "${SNOWID_TEST_LOCKED:-}" ] ||
	die "run this from scripts/test.sh (make test SUITES=deb), which holds the make-test lock"

pkg=postgresql-15-snowid
pgbin=/usr/lib/postgresql/15/bin
libdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
work=$(server_user_tmpdir deb)
port=$(free_port)
data=$work/data

cleanup() {
	if [ -f "$data/postmaster.pid" ]; then
		as_server_user "$pgbin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	fi
	if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q installed; then
		log "removing $pkg"
		apt-get -o DPkg::Lock::Timeout=900 remove -y -qq "$pkg" >/dev/null 2>&1
	fi
	# Whatever happened: the tree's own build goes back in place.
	log "reinstalling the tree's build (make install)"
	build_and_install
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# so that cleanup runs on a signal too

# ---- build ------------------------------------------------------------

debdir=$work/dist
if SNOWID_DEB_DIR=$debdir bash "$SNOWID_ROOT/scripts/deb.sh" >"$work/deb.log" 2>&1; then
	ok "make deb builds $pkg and lintian reports no error"
else
	not_ok "make deb builds $pkg and lintian reports no error"
	sed 's/^/# /' "$work/deb.log"
	echo "1..$n"
	exit 1
fi
grep -E '^[EW]: ' "$work/deb.log" | sed 's/^/# lintian: /'
deb=$(ls "$debdir"/${pkg}_*.deb | head -n 1)
echo "# $(basename "$deb")"

contents=$(dpkg-deb -c "$deb" | awk '{ print $6 }')
for f in "$libdir/snowid.so" \
	"$extdir/snowid.control" "$extdir/snowid--1.1.sql" "$extdir/snowid--1.0--1.1.sql" \
	"$extdir/snowid_coordinator.control" "$extdir/snowid_coordinator--1.1.sql" \
	/usr/share/doc/$pkg/copyright /usr/share/doc/$pkg/changelog.Debian.gz; do
	if grep -qxF ".$f" <<<"$contents"; then ok "the package holds $f"; else not_ok "the package holds $f"; fi
done
version=$(dpkg-deb -f "$deb" Version)
if [ "${version%-*}" = "1.1.0" ]; then ok "version $version is extension version 1.1"; else not_ok "version $version is extension version 1.1"; fi
if zcat <(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/$pkg/changelog.Debian.gz) |
	head -n 1 | grep -q "^snowid (1.1.0-"; then
	ok "its changelog has an entry for 1.1.0"
else
	not_ok "its changelog has an entry for 1.1.0"
fi
if dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/$pkg/copyright |
	grep -q '^License: PostgreSQL'; then
	ok "its copyright file names the PostgreSQL License"
else
	not_ok "its copyright file names the PostgreSQL License"
fi

# ---- install ----------------------------------------------------------

check "apt-get install ./$(basename "$deb")" \
	apt-get -o DPkg::Lock::Timeout=900 install -y -qq "$deb"
check "dpkg says $pkg is installed" \
	bash -c "dpkg-query -W -f='\${Status}' $pkg | grep -qx 'install ok installed'"
check "the installed snowid.so and SQL files are the package's (dpkg --verify)" \
	bash -c "[ -z \"\$(dpkg --verify $pkg)\" ]"
check "dpkg owns $libdir/snowid.so" dpkg -S "$libdir/snowid.so"

# A server that runs from the installed files.
sql() { as_server_user "$pgbin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -d "${2:-postgres}" -c "$1"; }
start_server() {
	as_server_user "$pgbin/pg_ctl" -D "$data" -l "$work/server.log" -w -t 60 start >/dev/null
}
stop_server() {
	as_server_user "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
}
as_server_user "$pgbin/initdb" -D "$data" -A trust >/dev/null 2>&1 || die "initdb failed"
cat >>"$data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$work'
port = $port
shared_preload_libraries = 'snowid'
CONF
check "a server starts with the packaged library preloaded" start_server

got=$(sql "CREATE EXTENSION snowid; SELECT extversion FROM pg_extension WHERE extname = 'snowid'" 2>&1)
if [ "$got" = "1.1" ]; then ok "CREATE EXTENSION snowid installs version 1.1"; else not_ok "CREATE EXTENSION snowid installs version 1.1 (got: $got)"; fi
got=$(sql "SELECT probin FROM pg_proc WHERE proname = 'snowid_nextval'")
if [ "$got" = "\$libdir/snowid" ]; then ok "its functions load \$libdir/snowid"; else not_ok "its functions load \$libdir/snowid (got: $got)"; fi
for _ in $(seq 1 100); do
	[ "$(sql "SELECT state FROM snowid_status()")" = active ] && break
	sleep 0.2
done
got=$(sql "SELECT count(DISTINCT snowid_nextval()) FROM generate_series(1, 1000)" 2>&1)
if [ "$got" = 1000 ]; then ok "the packaged library generates ids (1000 distinct)"; else not_ok "the packaged library generates ids (got: $got)"; fi
got=$(sql "CREATE DATABASE coord" 2>&1 && sql "CREATE EXTENSION snowid_coordinator; SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'" coord 2>&1)
if [ "$got" = "1.1" ]; then ok "CREATE EXTENSION snowid_coordinator installs version 1.1"; else not_ok "CREATE EXTENSION snowid_coordinator installs version 1.1 (got: $got)"; fi
stop_server

# ---- remove -----------------------------------------------------------

check "apt-get remove $pkg" apt-get -o DPkg::Lock::Timeout=900 remove -y -qq "$pkg"
gone=1
for f in "$libdir/snowid.so" "$extdir/snowid.control" "$extdir/snowid--1.1.sql" "$extdir/snowid_coordinator.control"; do
	[ -e "$f" ] && gone=0 && echo "# still there: $f"
done
if [ "$gone" = 1 ]; then ok "its files are gone"; else not_ok "its files are gone"; fi
sed -i "s/^shared_preload_libraries = 'snowid'$//" "$data/postgresql.conf"
start_server
got=$(sql "CREATE EXTENSION snowid" coord 2>&1)
if grep -q 'is not available\|could not open extension control file' <<<"$got"; then
	ok "without the package CREATE EXTENSION snowid fails"
else
	not_ok "without the package CREATE EXTENSION snowid fails (got: $got)"
fi
stop_server

# ---- the tree's build back in place -------------------------------------

trap - EXIT
cleanup
if [ -f "$libdir/snowid.so" ] && [ -f "$extdir/snowid.control" ] &&
	cmp -s "$SNOWID_ROOT/snowid.so" "$libdir/snowid.so"; then
	ok "the tree's own build is installed again"
else
	not_ok "the tree's own build is installed again"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
